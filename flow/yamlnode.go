package flow

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/toolserver/toolserver/internal/editdistance"
)

// entry is one key of a YAML map.
type entry struct {
	name     string
	key, val *yaml.Node
}

// object is a YAML map with its keys checked: scalars, no duplicates.
type object struct {
	node    *yaml.Node
	entries []entry
	index   map[string]int
}

// newObject reads the map n. A duplicate key is an error, as it is in
// Argent's YAML library: silently keeping one of two tap: values would run a
// step nobody wrote.
func newObject(n *yaml.Node) (*object, *Error) {
	o := &object{node: n, index: map[string]int{}}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := resolve(n.Content[i]), n.Content[i+1]
		if k.Kind != yaml.ScalarNode {
			return nil, errAt(k, ProblemShape, "a map key must be a string, got %s", describe(k))
		}
		if j, dup := o.index[k.Value]; dup {
			return nil, errAt(k, ProblemShape, "duplicate key %q (first at line %d)", k.Value, o.entries[j].key.Line)
		}
		o.index[k.Value] = len(o.entries)
		o.entries = append(o.entries, entry{name: k.Value, key: k, val: v})
	}
	return o, nil
}

func (o *object) has(k string) bool { _, ok := o.index[k]; return ok }

// get returns the value of k, or nil when k is absent.
func (o *object) get(k string) *yaml.Node {
	if i, ok := o.index[k]; ok {
		return o.entries[i].val
	}
	return nil
}

// key returns the key node of k, or nil when k is absent.
func (o *object) key(k string) *yaml.Node {
	if i, ok := o.index[k]; ok {
		return o.entries[i].key
	}
	return nil
}

// only reports the first key outside allowed as an unknown option, with a
// did-you-mean for a typo; where names the map in the message.
func (o *object) only(where string, allowed ...string) *Error {
	for _, e := range o.entries {
		if slices.Contains(allowed, e.name) {
			continue
		}
		what := "option"
		if where == "top-level" {
			what, where = "top-level key", ""
		}
		return errAt(e.key, ProblemUnknownKey, "%sunknown %s %q%s (allowed: %s)%s", pfx(where), what, e.name, suggest(e.name, allowed), strings.Join(allowed, ", "), commaHint(o, e))
	}
	return nil
}

// resolve follows an alias to its anchored node.
func resolve(n *yaml.Node) *yaml.Node {
	if n != nil && n.Kind == yaml.AliasNode {
		return n.Alias
	}
	return n
}

func isNull(n *yaml.Node) bool {
	n = resolve(n)
	return n == nil || n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null"
}

// strValue returns a string scalar's value. A scalar that YAML reads as a
// number, boolean or null is not a string: Argent's parser sees those typed,
// so "text: 1234" fails there, and it fails here the same way.
func strValue(n *yaml.Node) (string, bool) {
	n = resolve(n)
	if n == nil || n.Kind != yaml.ScalarNode || n.ShortTag() != "!!str" {
		return "", false
	}
	return n.Value, true
}

// numValue returns a finite number scalar's value.
func numValue(n *yaml.Node) (float64, bool) {
	n = resolve(n)
	if n == nil || n.Kind != yaml.ScalarNode {
		return 0, false
	}
	if t := n.ShortTag(); t != "!!int" && t != "!!float" {
		return 0, false
	}
	var f float64
	if n.Decode(&f) != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, false
	}
	return f, true
}

func boolValue(n *yaml.Node) (bool, bool) {
	n = resolve(n)
	if n == nil || n.Kind != yaml.ScalarNode || n.ShortTag() != "!!bool" {
		return false, false
	}
	var b bool
	if n.Decode(&b) != nil {
		return false, false
	}
	return b, true
}

// positiveMillis reads a positive, finite number of milliseconds.
func positiveMillis(n *yaml.Node, name string) (time.Duration, *Error) {
	ms, ok := numValue(n)
	if !ok || ms <= 0 {
		return 0, errAt(n, ProblemValue, "%s needs a positive number of milliseconds, got %s", name, describe(n))
	}
	return millis(ms), nil
}

// millis converts a YAML millisecond count, which may be fractional.
func millis(ms float64) time.Duration {
	return time.Duration(math.Round(ms * float64(time.Millisecond)))
}

// describe names a node's type and value for "got …" in messages.
func describe(n *yaml.Node) string {
	n = resolve(n)
	if n == nil {
		return "nothing"
	}
	switch n.Kind {
	case yaml.MappingNode:
		return "a map"
	case yaml.SequenceNode:
		return "a list"
	case yaml.DocumentNode:
		return "a document"
	}
	switch n.ShortTag() {
	case "!!null":
		return "null"
	case "!!bool":
		return "the boolean " + n.Value
	case "!!int", "!!float":
		return "the number " + n.Value
	case "!!str":
		return strconv.Quote(n.Value)
	}
	return fmt.Sprintf("a %s value", n.Tag)
}

// errAt builds an *Error located at n (which may be nil).
func errAt(n *yaml.Node, pr Problem, format string, a ...any) *Error {
	e := &Error{Problem: pr, Msg: fmt.Sprintf(format, a...)}
	if n != nil {
		e.Line, e.Column = n.Line, n.Column
	}
	return e
}

// orNode returns n, or fallback when n is nil, to locate an error about a
// missing key at its map.
func orNode(n, fallback *yaml.Node) *yaml.Node {
	if n != nil {
		return n
	}
	return fallback
}

// pfx turns a location inside a directive into a message prefix.
func pfx(where string) string {
	if where == "" {
		return ""
	}
	return where + ": "
}

func join(where, key string) string {
	if where == "" {
		return key
	}
	return where + "." + key
}

// suggest returns ` (did you mean "x"?)` for the allowed key that key most
// plausibly misspells, the way Argent's closestKey picks it: the optimal
// string alignment distance, at most a third of the candidate's length.
func suggest(key string, allowed []string) string {
	best, bestD := "", math.MaxInt
	for _, c := range allowed {
		if d := editdistance.OSA(strings.ToLower(key), strings.ToLower(c)); d < bestD {
			best, bestD = c, d
		}
	}
	if best == "" || bestD > max(1, len(best)/3) {
		return ""
	}
	return fmt.Sprintf(" (did you mean %q?)", best)
}

// checkAliases refuses a document whose aliases would expand without end
// (an alias inside the value it names) or add more than MaxAliasValues
// values once followed. Everything that reads a flow follows aliases (a
// when: list, a selector, tool args), so the bound is checked once, on the
// whole document, before any of it is read. It costs one pass over the
// document as written: each alias adds the expanded size of its anchored
// value, and that size is computed once per anchor. The error is located
// at the alias and, when one holds it, at the step as written.
func checkAliases(doc *yaml.Node) *Error {
	c := &aliasCheck{sizes: map[*yaml.Node]int{}, open: map[*yaml.Node]bool{}}
	e := c.walk(doc)
	if e != nil {
		e.Step, e.Directive = stepHolding(doc, c.at, nil)
	}
	return e
}

// stepHolding returns the path and directive of the innermost step, as
// written (aliases not followed), whose YAML holds node n; nil when no
// step does. doc is the file's map, or a step's map below parent.
func stepHolding(doc, n *yaml.Node, parent StepPath) (StepPath, Kind) {
	if doc.Kind != yaml.MappingNode {
		return nil, ""
	}
	var steps *yaml.Node
	for i := 0; i+1 < len(doc.Content); i += 2 {
		if doc.Content[i].Value == "steps" && doc.Content[i+1].Kind == yaml.SequenceNode {
			steps = doc.Content[i+1]
		}
	}
	if steps == nil {
		return nil, ""
	}
	for i, item := range steps.Content {
		if !holds(item, n) {
			continue
		}
		path := append(slices.Clone(parent), i+1)
		if inner, kind := stepHolding(item, n, path); inner != nil {
			return inner, kind
		}
		var kind Kind
		if item.Kind == yaml.MappingNode {
			for j := 0; j < len(item.Content); j += 2 {
				if k := Kind(item.Content[j].Value); slices.Contains(allKinds, k) {
					kind = k
					break
				}
			}
		}
		return path, kind
	}
	return nil, ""
}

// holds tells whether n is tree or in it, aliases not followed.
func holds(tree, n *yaml.Node) bool {
	if tree == n {
		return true
	}
	for _, ch := range tree.Content {
		if holds(ch, n) {
			return true
		}
	}
	return false
}

// aliasCheck is one checkAliases.
type aliasCheck struct {
	// sizes holds the expanded size of each anchored value measured so
	// far, capped at MaxAliasValues+1; open the anchored values being
	// measured, to find an alias inside the value it names.
	sizes map[*yaml.Node]int
	open  map[*yaml.Node]bool
	added int
	// at is the alias an error is about.
	at *yaml.Node
}

// walk visits n as written, without following its aliases, and adds what
// each alias brings.
func (c *aliasCheck) walk(n *yaml.Node) *Error {
	if n.Kind == yaml.AliasNode {
		size, err := c.size(n)
		if err != nil {
			return err
		}
		c.added = min(c.added+size, MaxAliasValues+1)
		if c.added > MaxAliasValues {
			c.at = n
			return errAt(n, ProblemSize, "YAML aliases add more than %d values to this file once followed (the alias *%s here repeats %s); a flow file's aliases may add at most %d: write the repeated steps out, or keep them in one fragment that a run: names", MaxAliasValues, n.Value, sizeText(size), MaxAliasValues)
		}
		return nil
	}
	for _, ch := range n.Content {
		if err := c.walk(ch); err != nil {
			return err
		}
	}
	return nil
}

// size returns how many values n stands for once its aliases are
// followed, capped at MaxAliasValues+1. An anchored value is measured
// once, wherever it is reached from.
func (c *aliasCheck) size(n *yaml.Node) (int, *Error) {
	if n.Kind == yaml.AliasNode {
		if n.Alias == nil {
			return 1, nil
		}
		if c.open[n.Alias] {
			c.at = n
			return 0, errAt(n, ProblemSize, "the alias *%s sits inside the value it names (anchored at line %d), so it would expand without end", n.Value, n.Alias.Line)
		}
		n = n.Alias
	}
	if n.Anchor != "" {
		if s, ok := c.sizes[n]; ok {
			return s, nil
		}
		c.open[n] = true
		defer delete(c.open, n)
	}
	total := 1
	for _, ch := range n.Content {
		s, err := c.size(ch)
		if err != nil {
			return 0, err
		}
		total = min(total+s, MaxAliasValues+1)
	}
	if n.Anchor != "" {
		c.sizes[n] = total
	}
	return total, nil
}

// sizeText renders a capped size for a message.
func sizeText(size int) string {
	if size > MaxAliasValues {
		return fmt.Sprintf("more than %d values", MaxAliasValues)
	}
	if size == 1 {
		return "1 value"
	}
	return fmt.Sprintf("%d values", size)
}

// jsonValue decodes a YAML node into the value JSON decoding would give,
// so a tool receives the same arguments whether they came from a flow or a
// direct call. Scalars are read as the YAML 1.2 core schema reads them
// (a timestamp stays a string, as in Argent's YAML library).
func jsonValue(n *yaml.Node, depth int, budget *int) (any, *Error) {
	n = resolve(n)
	*budget--
	if *budget < 0 {
		return nil, errAt(n, ProblemValue, "args hold more than %d values", maxArgNodes)
	}
	if depth > maxArgDepth {
		return nil, errAt(n, ProblemValue, "args nest deeper than %d levels", maxArgDepth)
	}
	switch n.Kind {
	case yaml.SequenceNode:
		out := make([]any, 0, len(n.Content))
		for _, c := range n.Content {
			v, err := jsonValue(c, depth+1, budget)
			if err != nil {
				return nil, err
			}
			out = append(out, v)
		}
		return out, nil
	case yaml.MappingNode:
		o, err := newObject(n)
		if err != nil {
			return nil, err
		}
		out := make(map[string]any, len(o.entries))
		for _, e := range o.entries {
			v, err := jsonValue(e.val, depth+1, budget)
			if err != nil {
				return nil, err
			}
			out[e.name] = v
		}
		return out, nil
	}
	switch n.ShortTag() {
	case "!!null":
		return nil, nil
	case "!!bool":
		b, _ := boolValue(n)
		return b, nil
	case "!!int":
		var i int64
		if n.Decode(&i) == nil {
			if i == int64(int(i)) {
				return int(i), nil
			}
			return i, nil
		}
		f, _ := numValue(n)
		return f, nil
	case "!!float":
		f, ok := numValue(n)
		if !ok {
			return nil, errAt(n, ProblemValue, "%s is not a finite number, which JSON cannot carry", n.Value)
		}
		return f, nil
	case "!!str", "!!timestamp", "!!binary", "!!merge":
		return n.Value, nil
	}
	return nil, errAt(n, ProblemShape, "unsupported YAML tag %s", n.Tag)
}
