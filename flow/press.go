package flow

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"
)

// Press presses a key, or a chord of modifiers and a key, on the element
// that has the focus: press: Enter, press: Control+A, or
// press: { key: Tab, times: 3 }. It is this project's addition to
// Argent's directives; there a flow needs tool: keyboard with args.
type Press struct {
	// Key is the key in its canonical spelling: the modifiers (Control,
	// Shift, Alt, Meta, in the order written), then one of KeyNames or a
	// single character, joined by "+": "Enter", "Control+A", "Shift+Tab".
	Key string
	// Times is how often the key is pressed, 1 unless the file says.
	Times int
}

// MaxPressTimes bounds press: { times }: enough to clear a field with
// Backspace, few enough that a typo cannot hold a run for minutes.
const MaxPressTimes = 100

func (*Press) directive() {}

// Kind implements Directive.
func (*Press) Kind() Kind { return KindPress }

// keyNames are the named keys of press:, in the DOM's spelling
// (KeyboardEvent.key, with Space for " "); device/cdp presses each under
// that name.
var keyNames = []string{
	"Enter", "Tab", "Escape", "Backspace", "Delete", "Insert", "Space",
	"ArrowUp", "ArrowDown", "ArrowLeft", "ArrowRight",
	"Home", "End", "PageUp", "PageDown",
	"F1", "F2", "F3", "F4", "F5", "F6", "F7", "F8", "F9", "F10", "F11", "F12",
}

// keyAliases are other spellings of keys and modifiers people bring from
// other tools, folded as foldKey folds them.
var keyAliases = map[string]string{
	"return": "Enter", "esc": "Escape", "del": "Delete",
	"ctrl": "Control", "cmd": "Meta", "command": "Meta", "option": "Alt",
}

// modifierNames are the modifiers a chord may hold.
var modifierNames = []string{"Control", "Shift", "Alt", "Meta"}

// KeyNames returns the named keys press: takes besides single
// characters, in their canonical spelling.
func KeyNames() []string { return append([]string(nil), keyNames...) }

// foldKey folds a key name for lookup: lower case, without the "-", "_"
// and spaces of spellings like arrow-up or Page Down.
func foldKey(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '-' || r == '_' || r == ' ' {
			return -1
		}
		return unicode.ToLower(r)
	}, s)
}

// canonicalIn returns the name of names (or an alias of one) that s
// spells, in any case.
func canonicalIn(s string, names []string) (string, bool) {
	f := foldKey(s)
	if a, ok := keyAliases[f]; ok {
		f = foldKey(a)
	}
	for _, n := range names {
		if foldKey(n) == f {
			return n, true
		}
	}
	return "", false
}

// canonicalKey checks a press: key and returns its canonical spelling,
// or why it names no key.
func canonicalKey(s string) (string, string) {
	parts := strings.Split(s, "+")
	switch {
	case s == "+":
		parts = []string{"+"}
	case strings.HasSuffix(s, "++"):
		// Control++ presses the plus key.
		parts = append(strings.Split(strings.TrimSuffix(s, "++"), "+"), "+")
	}
	var out []string
	for _, p := range parts[:len(parts)-1] {
		m, ok := canonicalIn(strings.TrimSpace(p), modifierNames)
		switch {
		case !ok && p == "":
			return "", fmt.Sprintf("%q has an empty part between its + signs", s)
		case !ok:
			return "", fmt.Sprintf("%q is not a modifier%s (Control, Shift, Alt, Meta)", p, suggest(p, modifierNames))
		case slices.Contains(out, m):
			return "", fmt.Sprintf("%s is named twice", m)
		}
		out = append(out, m)
	}
	last := strings.TrimSpace(parts[len(parts)-1])
	if parts[len(parts)-1] == "+" {
		last = "+"
	}
	if r, size := utf8.DecodeRuneInString(last); size > 0 && size == len(last) && r != utf8.RuneError && unicode.IsPrint(r) && !unicode.IsSpace(r) {
		return strings.Join(append(out, last), "+"), ""
	}
	if n, ok := canonicalIn(last, keyNames); ok {
		return strings.Join(append(out, n), "+"), ""
	}
	if _, ok := canonicalIn(last, modifierNames); ok {
		return "", fmt.Sprintf("%q ends in a modifier; a chord ends in the key it presses, e.g. Control+A", s)
	}
	if last == "" {
		return "", fmt.Sprintf("%q names no key after its last +", s)
	}
	return "", fmt.Sprintf("unknown key %q%s", last, suggest(last, keyNames))
}

// pressShapes explains the forms of press: in its messages.
var pressShapes = "press takes a single character, one of " + strings.Join(keyNames, ", ") +
	", or either after modifiers joined by + (Control+A, Shift+Tab, Meta+Enter); the map form is press: { key: Enter, times: 2 }"

func (p *parser) press(v *yaml.Node) (Directive, *Error) {
	v = resolve(v)
	keyNode := v
	d := &Press{Times: 1}
	if v != nil && v.Kind == yaml.MappingNode {
		o, err := newObject(v)
		if err != nil {
			return nil, err
		}
		if err := o.only("", directiveOptions[KindPress]...); err != nil {
			return nil, err
		}
		keyNode = o.get("key")
		if keyNode == nil {
			return nil, errAt(v, ProblemShape, "press needs key: the key to press; %s", pressShapes)
		}
		if tv := o.get("times"); tv != nil {
			n, ok := numValue(tv)
			if !ok || n != math.Trunc(n) || n < 1 || n > MaxPressTimes {
				return nil, errAt(tv, ProblemValue, "times must be a whole number from 1 to %d, got %s", MaxPressTimes, describe(tv))
			}
			d.Times = int(n)
		}
	}
	s, ok := strValue(keyNode)
	if !ok || s == "" {
		quote := ""
		if n := resolve(keyNode); n != nil && n.Kind == yaml.ScalarNode && !isNull(n) {
			quote = fmt.Sprintf(" (quote it: %q)", n.Value)
		}
		return nil, errAt(orNode(keyNode, v), ProblemShape, "press needs a key, got %s%s; %s", describe(keyNode), quote, pressShapes)
	}
	key, why := canonicalKey(s)
	if why != "" {
		return nil, errAt(keyNode, ProblemValue, "%s; %s", why, pressShapes)
	}
	d.Key = key
	return d, nil
}

// pressNode writes a press as its key, or { key, times } when it presses
// more than once.
func pressNode(d *Press) *yaml.Node {
	if d.Times <= 1 {
		return strNode(d.Key)
	}
	return addPair(addPair(mapNode(true), "key", strNode(d.Key)), "times", numNode(float64(d.Times)))
}
