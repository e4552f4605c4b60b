package flow

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// maxErrors bounds how many problems one Parse reports, as the Go compiler
// stops at ten: past that the list stops helping, and a file sent over a
// link can be large.
const maxErrors = 10

// directiveOptions are the keys of each directive's map form. tap: and
// long-press: also take a selector map directly (selectorKeys). The schema
// test compares these lists with schema.json, so the two cannot drift.
var directiveOptions = map[Kind][]string{
	KindLaunch:    {"native", "ios", "android", "vega", "chromium"},
	KindTap:       {"on", "times", "x", "y"},
	KindLongPress: {"on", "duration", "x", "y"},
	KindType:      {"into", "text", "submit"},
	KindScrollTo:  {"target", "direction", "within"},
	KindAwait:     {"exists", "visible", "hidden", "text", "timeout", "idle", "stableFor"},
	KindAssert:    {"exists", "visible", "hidden", "text"},
	KindWait:      nil,
	KindSnapshot:  {"name", "maxMismatch", "cropOn"},
	KindRun:       nil,
	KindWhen:      whenGuardKeys,
	KindEcho:      nil,
	KindTool:      nil,
	KindScript:    {"path", "timeout"},
	KindPinch:     {"on", "scale"},
	KindRotate:    {"on", "by"},
}

// stepSiblings are the keys a step may carry beside its directive key: a
// when: has its steps:, a tool: its args: and delayMs:. Every other
// directive keeps its options inside its value.
var stepSiblings = map[Kind][]string{
	KindWhen: {"steps"},
	KindTool: {"args", "delayMs"},
}

var (
	launchChromiumKeys = []string{"path", "args"}
	scrollDirections   = []string{"down", "up", "left", "right"}
	topLevelKeys       = []string{"steps", "executionPrerequisite"}
	flowFileName       = regexp.MustCompile(`^[A-Za-z0-9_-]+\.yaml$`)
	scriptFileName     = regexp.MustCompile(`^[A-Za-z0-9_-]+\.mjs$`)
	driveLetter        = regexp.MustCompile(`^[A-Za-z]:`)
	yamlLineError      = regexp.MustCompile(`(?s)^yaml: line (\d+): (.*)$`)
)

// Parse parses and validates one flow file. name is the file's path as the
// caller wants it in messages (over a link, the client's canonical path);
// Parse never opens it. On success every default is filled in (see the
// directive types). On failure the error matches ErrInvalid: a single
// *Error when the file has one problem, else an errors.Join of up to
// maxErrors of them in file order (see Errors). Parse reports at most one
// problem per step, because later problems in a broken step are mostly
// echoes of the first, and carries on with the next step so one run shows
// every broken step.
func Parse(name string, data []byte) (*Flow, error) {
	p := &parser{file: name}
	f := p.parseFile(data)
	switch len(p.errs) {
	case 0:
		return f, nil
	case 1:
		return nil, p.errs[0]
	}
	errs := make([]error, len(p.errs))
	for i, e := range p.errs {
		errs[i] = e
	}
	return nil, errors.Join(errs...)
}

type parser struct {
	file string
	errs []*Error
}

// add records e for the step at path (nil for the file) and directive kind,
// keeping what e already says.
func (p *parser) add(e *Error, path StepPath, kind Kind) {
	if len(p.errs) >= maxErrors {
		return
	}
	e.File = p.file
	if e.Step == nil && path != nil {
		e.Step = slices.Clone(path)
	}
	if e.Directive == "" {
		e.Directive = kind
	}
	p.errs = append(p.errs, e)
}

func (p *parser) full() bool { return len(p.errs) >= maxErrors }

func (p *parser) parseFile(data []byte) *Flow {
	doc, err := decodeDocument(data)
	if err != nil {
		p.add(err, nil, "")
		return nil
	}
	root := resolve(doc)
	switch {
	case root == nil || isNull(root):
		p.add(errAt(root, ProblemShape, "the flow file is empty; it needs steps:"), nil, "")
		return nil
	case root.Kind == yaml.SequenceNode:
		// Argent reads a flow as an object with a steps array and refuses a
		// bare list, so this does too: a file must run the same on both.
		p.add(errAt(root, ProblemShape, "a flow file is a map with steps:, not a bare list of steps; put the list under steps:"), nil, "")
		return nil
	case root.Kind != yaml.MappingNode:
		p.add(errAt(root, ProblemShape, "a flow file is a map with steps:, got %s", describe(root)), nil, "")
		return nil
	}
	o, e := newObject(root)
	if e != nil {
		p.add(e, nil, "")
		return nil
	}
	if e := o.only("top-level", topLevelKeys...); e != nil {
		p.add(e, nil, "")
	}
	f := &Flow{Name: p.file}
	if v := o.get("executionPrerequisite"); v != nil && !isNull(resolve(v)) {
		s, ok := strValue(v)
		if !ok {
			p.add(errAt(v, ProblemShape, "executionPrerequisite must be a string (one sentence naming the start state), got %s", describe(v)), nil, "")
		}
		f.ExecutionPrerequisite, f.PrerequisiteLine = s, o.key("executionPrerequisite").Line
	}
	sv := resolve(o.get("steps"))
	switch {
	case sv == nil:
		p.add(errAt(root, ProblemShape, "missing steps: (the list of steps)"), nil, "")
	case sv.Kind != yaml.SequenceNode:
		p.add(errAt(sv, ProblemShape, "steps must be a list of steps, got %s", describe(sv)), nil, "")
	default:
		f.Steps = p.steps(sv, nil, 0)
	}
	if len(p.errs) == 0 && f.ExecutionPrerequisite != "" && f.IsEndToEnd() {
		// Argent rejects this at parse time (validateFlow): a flow that
		// launches its own app controls its start state, so a declared
		// prerequisite would only make callers acknowledge a state that the
		// launch throws away.
		p.add(&Error{Line: f.PrerequisiteLine, Column: o.key("executionPrerequisite").Column, Problem: ProblemPrerequisite,
			Msg: fmt.Sprintf("a flow that starts with a launch step (step %s) must not declare executionPrerequisite: it launches its own app and controls its start state; drop the leading launch to make it a fragment, or drop executionPrerequisite", f.Leading().Path)}, nil, "")
	}
	return f
}

// decodeDocument decodes the single YAML document of data. A second
// document is an error rather than ignored: a runner that read only the
// first half of a file would pass a flow its author never saw pass.
func decodeDocument(data []byte) (doc *yaml.Node, e *Error) {
	defer func() {
		// yaml.v3 has panicked on hostile input before; a flow file can
		// arrive from the network, so a panic becomes a syntax error.
		if r := recover(); r != nil {
			doc, e = nil, &Error{Problem: ProblemSyntax, Msg: fmt.Sprintf("the YAML does not parse: %v", r)}
		}
	}()
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var d yaml.Node
	if err := dec.Decode(&d); err != nil {
		if err == io.EOF {
			return nil, nil
		}
		return nil, syntaxError(err)
	}
	var extra yaml.Node
	switch err := dec.Decode(&extra); {
	case err == nil:
		return nil, &Error{Line: extra.Line, Problem: ProblemSyntax, Msg: "the file holds more than one YAML document (---); a flow file is one document"}
	case err != io.EOF:
		return nil, syntaxError(err)
	}
	if len(d.Content) == 0 {
		return nil, nil
	}
	return d.Content[0], nil
}

// yamlParserProblems are the problems yaml.v3's parser (as opposed to its
// scanner) reports. For those it prints the 0-based line where the enclosing
// construct began (decode.go, parser.fail), so one is added to point at the
// right line: for an unclosed "{", the line that opened it.
var yamlParserProblems = []string{
	"did not find expected ',' or ']'",
	"did not find expected ',' or '}'",
	"did not find expected '-' indicator",
	"did not find expected <document start>",
	"did not find expected key",
	"did not find expected node content",
	"found duplicate %TAG directive",
	"found duplicate %YAML directive",
	"found incompatible YAML document",
	"found undefined tag handle",
}

func syntaxError(err error) *Error {
	msg := err.Error()
	if m := yamlLineError.FindStringSubmatch(msg); m != nil {
		line, _ := strconv.Atoi(m[1])
		if slices.Contains(yamlParserProblems, m[2]) {
			line++
		}
		return &Error{Line: line, Problem: ProblemSyntax, Msg: "invalid YAML: " + m[2], Err: err}
	}
	return &Error{Problem: ProblemSyntax, Msg: "invalid YAML: " + strings.TrimPrefix(msg, "yaml: "), Err: err}
}

// steps parses a steps: list whose steps sit at parent.N; depth counts the
// enclosing when: blocks. Broken steps are reported and left out.
func (p *parser) steps(seq *yaml.Node, parent StepPath, depth int) []*Step {
	out := make([]*Step, 0, len(seq.Content))
	for i, item := range seq.Content {
		if p.full() {
			break
		}
		path := append(slices.Clone(parent), i+1)
		before := len(p.errs)
		st, kind, err := p.step(item, path, depth)
		if err != nil {
			p.add(err, path, kind)
			continue
		}
		if st != nil && len(p.errs) == before {
			out = append(out, st)
		}
	}
	return out
}

// step parses one step. It returns the directive's kind, when known, for the
// error's attribution; a when: whose inner steps failed returns nil, nil
// because those were reported already.
func (p *parser) step(n *yaml.Node, path StepPath, depth int) (*Step, Kind, *Error) {
	n = resolve(n)
	switch {
	case n == nil || isNull(n):
		return nil, "", errAt(n, ProblemEmptyStep, "empty step: a step is a map with one directive, e.g. - tap: { id: save }")
	case n.Kind == yaml.ScalarNode:
		if slices.Contains(allKinds, Kind(n.Value)) {
			return nil, Kind(n.Value), errAt(n, ProblemShape, "a step is a map: write - %s: <value>", n.Value)
		}
		return nil, "", errAt(n, ProblemShape, "a step must be a map with one directive, got %s", describe(n))
	case n.Kind != yaml.MappingNode:
		return nil, "", errAt(n, ProblemShape, "a step must be a map with one directive, got %s", describe(n))
	}
	o, err := newObject(n)
	if err != nil {
		return nil, "", err
	}
	if len(o.entries) == 0 {
		return nil, "", errAt(n, ProblemEmptyStep, "empty step: a step is a map with one directive, e.g. - tap: { id: save }")
	}
	if o.has("optional") {
		// Maestro habits produce optional:, and silently dropping it would
		// leave a step its author believes cannot fail stopping the flow.
		return nil, "", errAt(o.key("optional"), ProblemUnknownKey, "optional is not supported; guard the step with a when: block instead (when: { visible: <selector> } with steps:)")
	}
	var kinds []Kind
	var kindKeys []*yaml.Node
	for _, e := range o.entries {
		if slices.Contains(allKinds, Kind(e.name)) {
			kinds = append(kinds, Kind(e.name))
			kindKeys = append(kindKeys, e.key)
		}
	}
	switch len(kinds) {
	case 0:
		first := o.entries[0]
		switch {
		case o.has("else"):
			return nil, "", errAt(o.key("else"), ProblemElse, "else without when: flows have no else; a when: block runs its steps: or skips them")
		case o.has("idle"):
			return nil, "", errAt(o.key("idle"), ProblemUnknownDirective, "idle is a condition, not a directive; write await: { idle: true }")
		}
		names := make([]string, len(allKinds))
		for i, k := range allKinds {
			names[i] = string(k)
		}
		return nil, "", errAt(first.key, ProblemUnknownDirective, "unknown directive %q%s", first.name, suggest(first.name, names))
	case 1:
	default:
		return nil, "", errAt(kindKeys[1], ProblemDirectiveCount, "a step takes exactly one directive, found %s and %s; give each its own step", kinds[0], kinds[1])
	}
	kind := kinds[0]
	for _, e := range o.entries {
		if e.name == string(kind) || slices.Contains(stepSiblings[kind], e.name) {
			continue
		}
		if e.name == "else" && kind == KindWhen {
			return nil, kind, errAt(e.key, ProblemElse, "when has no else: paths may only reconverge; put the other path in its own flow, or in a second when: block with the opposite condition")
		}
		if kind == KindTool || kind == KindWhen {
			return nil, kind, errAt(e.key, ProblemUnknownKey, "unknown option %q%s beside %s: (allowed: %s)", e.name, suggest(e.name, stepSiblings[kind]), kind, strings.Join(stepSiblings[kind], ", "))
		}
		return nil, kind, errAt(e.key, ProblemUnknownKey, "unknown option %q beside %s: (options go inside the %s: value)", e.name, kind, kind)
	}
	v := o.get(string(kind))
	var d Directive
	switch kind {
	case KindLaunch:
		d, err = p.launch(v)
	case KindTap:
		d, err = p.tap(v)
	case KindLongPress:
		d, err = p.longPress(v)
	case KindType:
		d, err = p.typeText(v)
	case KindScrollTo:
		d, err = p.scrollTo(v)
	case KindAwait:
		d, err = p.await(v)
	case KindAssert:
		d, err = p.assert(v)
	case KindWait:
		d, err = p.wait(v)
	case KindSnapshot:
		d, err = p.snapshot(v)
	case KindRun:
		d, err = p.run(v)
	case KindWhen:
		d, err = p.when(o, path, depth)
	case KindEcho:
		d, err = p.echo(v)
	case KindTool:
		d, err = p.tool(o)
	case KindScript:
		d, err = p.script(v)
	case KindPinch:
		d, err = p.pinch(v)
	case KindRotate:
		d, err = p.rotate(v)
	}
	if err != nil || d == nil {
		return nil, kind, err
	}
	return &Step{Directive: d, Path: path, Line: n.Line, Column: n.Column}, kind, nil
}

func (p *parser) launch(v *yaml.Node) (Directive, *Error) {
	v = resolve(v)
	const shapes = "launch needs a URL or path (a string) or a map { chromium: <url or path> } (native, ios, android and vega name the app on other platforms)"
	if s, ok := strValue(v); ok && s != "" {
		return &Launch{URL: s}, nil
	}
	if v == nil || v.Kind != yaml.MappingNode {
		return nil, errAt(v, ProblemShape, "%s, got %s", shapes, describe(v))
	}
	o, err := newObject(v)
	if err != nil {
		return nil, err
	}
	if err := o.only("", directiveOptions[KindLaunch]...); err != nil {
		return nil, err
	}
	if len(o.entries) == 0 {
		return nil, errAt(v, ProblemShape, "%s, got an empty map", shapes)
	}
	l := &Launch{}
	for _, e := range o.entries {
		ev := resolve(e.val)
		if e.name == "chromium" && ev.Kind == yaml.MappingNode {
			co, err := newObject(ev)
			if err != nil {
				return nil, err
			}
			if err := co.only("chromium", launchChromiumKeys...); err != nil {
				return nil, err
			}
			pth, ok := strValue(co.get("path"))
			if !ok || pth == "" {
				return nil, errAt(ev, ProblemShape, "chromium: { path, args } needs a non-empty path")
			}
			l.Chromium = pth
			if av := resolve(co.get("args")); av != nil {
				if av.Kind != yaml.SequenceNode {
					return nil, errAt(av, ProblemShape, "chromium.args must be a list of strings, got %s", describe(av))
				}
				for _, a := range av.Content {
					s, ok := strValue(a)
					if !ok {
						return nil, errAt(a, ProblemShape, "chromium.args must be a list of strings, got %s", describe(a))
					}
					l.ChromiumArgs = append(l.ChromiumArgs, s)
				}
			}
			continue
		}
		s, ok := strValue(ev)
		if !ok || s == "" {
			return nil, errAt(ev, ProblemShape, "%s must be a non-empty string, got %s", e.name, describe(ev))
		}
		switch e.name {
		case "chromium":
			l.Chromium = s
		case "native":
			l.Native = s
		case "ios":
			l.IOS = s
		case "android":
			l.Android = s
		case "vega":
			l.Vega = s
		}
	}
	return l, nil
}

// gesture is the target of a tap: or long-press:.
type gesture struct {
	sel   *Selector
	point bool
	x, y  float64
}

// gesture parses a tap:/long-press: body: a target (selector or { x, y }) or
// the options form { on: <target>, <opt> }, which nests the target under on:
// so an option can never be mistaken for a target field.
func (p *parser) gesture(v *yaml.Node, kind Kind, opt string) (gesture, *yaml.Node, *Error) {
	v = resolve(v)
	if v == nil || v.Kind != yaml.MappingNode {
		g, err := p.target(v, "")
		return g, nil, err
	}
	o, err := newObject(v)
	if err != nil {
		return gesture{}, nil, err
	}
	if err := o.only("", append(slices.Clone(directiveOptions[kind]), selectorKeys...)...); err != nil {
		return gesture{}, nil, err
	}
	if !o.has("on") && !o.has(opt) {
		g, err := p.target(v, "")
		return g, nil, err
	}
	for _, e := range o.entries {
		switch {
		case slices.Contains(selectorKeys, e.name):
			return gesture{}, nil, errAt(e.key, ProblemShape, "the options form takes the selector under on:, e.g. %s: { on: { text: Photo }, %s: 2 }", kind, opt)
		case e.name == "x" || e.name == "y":
			return gesture{}, nil, errAt(e.key, ProblemShape, "the options form takes the point under on:, e.g. %s: { on: { x: 0.5, y: 0.5 }, %s: 2 }", kind, opt)
		}
	}
	if !o.has("on") {
		return gesture{}, nil, errAt(v, ProblemShape, "%s needs a target under on:, e.g. %s: { on: { text: Photo }, %s: 2 }", opt, kind, opt)
	}
	g, err := p.target(o.get("on"), "on")
	return g, o.get(opt), err
}

// target parses a gesture target: a selector, or a point { x, y } in
// normalized 0..1 viewport coordinates.
func (p *parser) target(v *yaml.Node, where string) (gesture, *Error) {
	v = resolve(v)
	if v != nil && v.Kind == yaml.MappingNode {
		o, err := newObject(v)
		if err != nil {
			return gesture{}, err
		}
		if o.has("x") || o.has("y") {
			for _, e := range o.entries {
				if e.name != "x" && e.name != "y" {
					return gesture{}, errAt(e.key, ProblemShape, "%sa target is a selector or a point { x, y }, not both", pfx(where))
				}
			}
			var g gesture
			g.point = true
			for _, c := range []struct {
				k string
				v *float64
			}{{"x", &g.x}, {"y", &g.y}} {
				n := o.get(c.k)
				f, ok := numValue(n)
				if n == nil || !ok {
					return gesture{}, errAt(v, ProblemShape, "%sa point needs numeric x and y", pfx(where))
				}
				if f < 0 || f > 1 {
					return gesture{}, errAt(n, ProblemValue, "%s%s is %v; point coordinates are normalized 0..1 fractions of the viewport, not pixels", pfx(where), c.k, f)
				}
				*c.v = f
			}
			return g, nil
		}
	}
	budget := MaxSelectorScopes
	sel, err := p.selector(v, where, &budget)
	return gesture{sel: sel}, err
}

func (p *parser) tap(v *yaml.Node) (Directive, *Error) {
	g, tv, err := p.gesture(v, KindTap, "times")
	if err != nil {
		return nil, err
	}
	t := &Tap{On: g.sel, Point: g.point, X: g.x, Y: g.y, Times: 1}
	if tv != nil {
		n, ok := numValue(tv)
		if !ok || n != math.Trunc(n) || n < 1 || n > MaxTapTimes {
			return nil, errAt(tv, ProblemValue, "times must be a whole number from 1 to %d (2 = double-click), got %s", MaxTapTimes, describe(tv))
		}
		t.Times = int(n)
	}
	return t, nil
}

func (p *parser) longPress(v *yaml.Node) (Directive, *Error) {
	g, dv, err := p.gesture(v, KindLongPress, "duration")
	if err != nil {
		return nil, err
	}
	l := &LongPress{On: g.sel, Point: g.point, X: g.x, Y: g.y, Duration: DefaultLongPress}
	if dv != nil {
		if l.Duration, err = positiveMillis(dv, "duration"); err != nil {
			return nil, err
		}
	}
	return l, nil
}

func (p *parser) typeText(v *yaml.Node) (Directive, *Error) {
	v = resolve(v)
	if v == nil || v.Kind != yaml.MappingNode {
		return nil, errAt(v, ProblemShape, "type needs { into: <selector>, text: <text>, submit }, got %s", describe(v))
	}
	o, err := newObject(v)
	if err != nil {
		return nil, err
	}
	if err := o.only("", directiveOptions[KindType]...); err != nil {
		return nil, err
	}
	t := &Type{Submit: true}
	tv := o.get("text")
	s, ok := strValue(tv)
	if tv == nil || !ok || s == "" {
		return nil, errAt(orNode(tv, v), ProblemShape, "text must be a non-empty string, got %s; quote numbers and booleans", describe(tv))
	}
	t.Text = s
	if t.Secrets, err = secretNames(tv, s); err != nil {
		return nil, err
	}
	if sv := o.get("submit"); sv != nil {
		b, ok := boolValue(sv)
		if !ok {
			return nil, errAt(sv, ProblemShape, "submit must be true or false, got %s", describe(sv))
		}
		t.Submit = b
	}
	if !o.has("into") {
		return nil, errAt(v, ProblemSelector, "type needs into: <selector>, the element to type into")
	}
	budget := MaxSelectorScopes
	if t.Into, err = p.selector(o.get("into"), "into", &budget); err != nil {
		return nil, err
	}
	return t, nil
}

// secretMarker opens a secret placeholder.
const secretMarker = "{{secret:"

// secretName is the NAME of {{secret:NAME}}: what Argent's placeholder
// pattern accepts, so a name that is valid here resolves there too.
var secretName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// secretNames returns the placeholder names in text in order of first
// appearance. A "{{secret:" that does not close or names an invalid NAME is
// an error: Argent would type it literally, which is never what the author
// meant.
func secretNames(n *yaml.Node, text string) ([]string, *Error) {
	var names []string
	rest := text
	for {
		i := strings.Index(rest, secretMarker)
		if i < 0 {
			return names, nil
		}
		rest = rest[i+len(secretMarker):]
		j := strings.Index(rest, "}}")
		if j < 0 {
			return nil, errAt(n, ProblemValue, "text: the placeholder %q is not closed with }}", secretMarker+rest)
		}
		name := rest[:j]
		if !secretName.MatchString(name) {
			return nil, errAt(n, ProblemValue, "text: the placeholder {{secret:%s}} names no valid secret: NAME is letters, digits and _, not starting with a digit", name)
		}
		if !slices.Contains(names, name) {
			names = append(names, name)
		}
		rest = rest[j+2:]
	}
}

func (p *parser) scrollTo(v *yaml.Node) (Directive, *Error) {
	v = resolve(v)
	s := &ScrollTo{Direction: "down"}
	budget := MaxSelectorScopes
	if v == nil || v.Kind != yaml.MappingNode {
		if _, ok := strValue(v); !ok {
			return nil, errAt(v, ProblemShape, "scroll-to needs a selector or { target, direction, within }, got %s", describe(v))
		}
		var err *Error
		s.Target, err = p.selector(v, "target", &budget)
		return s, err
	}
	o, err := newObject(v)
	if err != nil {
		return nil, err
	}
	if !o.has("target") {
		for _, e := range o.entries {
			if e.name != "within" && slices.Contains(selectorKeys, e.name) {
				return nil, errAt(e.key, ProblemShape, "scroll-to takes its selector under target:, e.g. scroll-to: { target: { id: row-40 }, direction: down }")
			}
		}
	}
	if err := o.only("", directiveOptions[KindScrollTo]...); err != nil {
		return nil, err
	}
	if !o.has("target") {
		return nil, errAt(v, ProblemSelector, "scroll-to needs target: <selector>; its own within: names the scroll container, a selector's scopes go inside target")
	}
	if dv := o.get("direction"); dv != nil {
		d, ok := strValue(dv)
		if !ok || !slices.Contains(scrollDirections, d) {
			return nil, errAt(dv, ProblemValue, "direction must be one of %s, got %s", strings.Join(scrollDirections, ", "), describe(dv))
		}
		s.Direction = d
	}
	if s.Target, err = p.selector(o.get("target"), "target", &budget); err != nil {
		return nil, err
	}
	if o.has("within") {
		wb := MaxSelectorScopes
		if s.Within, err = p.selector(o.get("within"), "within", &wb); err != nil {
			return nil, err
		}
	}
	return s, nil
}

func (p *parser) wait(v *yaml.Node) (Directive, *Error) {
	ms, ok := numValue(v)
	if !ok || ms < 0 {
		return nil, errAt(v, ProblemValue, "wait needs a number of milliseconds (e.g. wait: 500), got %s", describe(v))
	}
	return &Wait{Duration: millis(ms)}, nil
}

func (p *parser) snapshot(v *yaml.Node) (Directive, *Error) {
	v = resolve(v)
	s := &Snapshot{MaxMismatch: DefaultMaxMismatch}
	nameNode := v
	var o *object
	if v != nil && v.Kind == yaml.MappingNode {
		var err *Error
		if o, err = newObject(v); err != nil {
			return nil, err
		}
		if err := o.only("", directiveOptions[KindSnapshot]...); err != nil {
			return nil, err
		}
		nameNode = o.get("name")
	}
	name, ok := strValue(nameNode)
	if nameNode == nil || !ok || name == "" {
		return nil, errAt(orNode(nameNode, v), ProblemShape, "snapshot needs a name (snapshot: home, or { name: home }), got %s", describe(nameNode))
	}
	// The name becomes a baseline file name, so it must be path-safe.
	if !ValidName(name) {
		return nil, errAt(nameNode, ProblemValue, "snapshot name %q may hold only letters, digits, _ and -", name)
	}
	s.Name = name
	if o == nil {
		return s, nil
	}
	if mv := o.get("maxMismatch"); mv != nil {
		m, ok := numValue(mv)
		if !ok || m < 0 || m > 100 {
			return nil, errAt(mv, ProblemValue, "maxMismatch must be a percent from 0 to 100, got %s", describe(mv))
		}
		s.MaxMismatch = m
	}
	if o.has("cropOn") {
		budget := MaxSelectorScopes
		var err *Error
		if s.CropOn, err = p.selector(o.get("cropOn"), "cropOn", &budget); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// run checks a run: target's shape as Argent does (parseRunTarget): a
// relative, forward-slashed path whose last segment is a flow name, .yaml
// optional. ".." is allowed: shared fragments may live beside the flows
// directory. Where the path lands is the runner's question.
func (p *parser) run(v *yaml.Node) (Directive, *Error) {
	t, ok := strValue(v)
	if !ok || t == "" {
		return nil, errAt(v, ProblemShape, "run needs a path to a flow file relative to this file (e.g. run: fragments/login.yaml), got %s", describe(v))
	}
	if strings.Contains(t, `\`) {
		return nil, errAt(v, ProblemValue, "a run path uses forward slashes, e.g. run: fragments/login.yaml")
	}
	if strings.HasPrefix(t, "/") || driveLetter.MatchString(t) {
		return nil, errAt(v, ProblemValue, "a run path must be relative to the flow file that names it, got %q", t)
	}
	r := &Run{Target: t}
	file := t
	if !strings.HasSuffix(t, ".yaml") && flowFileName.MatchString(path.Base(t+".yaml")) {
		file = r.File()
	}
	if !strings.HasSuffix(file, ".yaml") {
		if strings.HasSuffix(strings.ToLower(file), ".yaml") {
			return nil, errAt(v, ProblemValue, "a run path must use the lowercase .yaml extension, got %q", t)
		}
		return nil, errAt(v, ProblemValue, "a run path must end in .yaml or name a sibling flow (run: login), got %q", t)
	}
	if !flowFileName.MatchString(path.Base(file)) {
		return nil, errAt(v, ProblemValue, "a run target's file name may hold only letters, digits, _ and - before .yaml, got %q", t)
	}
	return r, nil
}

// when parses a when: step. Its inner steps are parsed (and their problems
// reported) with the path path.N and one more level of depth.
func (p *parser) when(o *object, path StepPath, depth int) (Directive, *Error) {
	if depth >= MaxWhenDepth {
		return nil, errAt(o.node, ProblemShape, "when: blocks nest deeper than %d levels; check for a cyclic YAML alias", MaxWhenDepth)
	}
	cond, err := p.whenGuard(o.get("when"))
	if err != nil {
		return nil, err
	}
	sv := resolve(o.get("steps"))
	switch {
	case sv == nil || isNull(sv):
		return nil, errAt(o.key("when"), ProblemShape, "when needs a non-empty steps: list beside it to guard")
	case sv.Kind != yaml.SequenceNode:
		return nil, errAt(sv, ProblemShape, "when: steps must be a list of steps, got %s", describe(sv))
	case len(sv.Content) == 0:
		return nil, errAt(sv, ProblemShape, "when needs a non-empty steps: list to guard")
	}
	before := len(p.errs)
	steps := p.steps(sv, path, depth+1)
	if len(p.errs) > before {
		return nil, nil
	}
	return &When{Condition: cond, Steps: steps}, nil
}

func (p *parser) echo(v *yaml.Node) (Directive, *Error) {
	v = resolve(v)
	if v == nil || v.Kind != yaml.ScalarNode || isNull(v) {
		return nil, errAt(v, ProblemShape, "echo needs a message, got %s", describe(v))
	}
	return &Echo{Message: v.Value}, nil
}

// Bounds on a tool step's args, which are free-form YAML: a cyclic alias or
// an alias bomb must fail cleanly instead of recursing or expanding forever.
const (
	maxArgDepth = 64
	maxArgNodes = 100_000
)

func (p *parser) tool(o *object) (Directive, *Error) {
	nv := o.get("tool")
	name, ok := strValue(nv)
	if !ok || strings.TrimSpace(name) == "" {
		return nil, errAt(nv, ProblemShape, "tool needs the tool's name (e.g. tool: gesture-swipe), got %s", describe(nv))
	}
	t := &Tool{Name: name, Args: map[string]any{}, ArgLines: map[string]int{}}
	if av := resolve(o.get("args")); av != nil && !isNull(av) {
		if av.Kind != yaml.MappingNode {
			return nil, errAt(av, ProblemShape, "args must be a map of the tool's arguments, got %s", describe(av))
		}
		t.ArgsLine = o.key("args").Line
		ao, err := newObject(av)
		if err != nil {
			return nil, err
		}
		budget := maxArgNodes
		for _, e := range ao.entries {
			val, err := jsonValue(e.val, 1, &budget)
			if err != nil {
				return nil, err
			}
			t.Args[e.name] = val
			t.ArgLines[e.name] = e.key.Line
		}
	}
	if dv := o.get("delayMs"); dv != nil {
		ms, ok := numValue(dv)
		if !ok || ms < 0 {
			return nil, errAt(dv, ProblemValue, "delayMs needs a number of milliseconds, got %s", describe(dv))
		}
		t.Delay = millis(ms)
	}
	return t, nil
}

// jsonValue decodes a YAML node into the value JSON decoding would give,
// so a tool receives the same arguments whether they came from a flow or a
// direct call. Scalars are read as the YAML 1.2 core schema reads them
// (a timestamp stays a string, as in Argent's YAML library).
func jsonValue(n *yaml.Node, depth int, budget *int) (any, *Error) {
	n = resolve(n)
	*budget--
	if *budget < 0 {
		return nil, errAt(n, ProblemValue, "args hold more than %d values; check for a YAML alias that expands without end", maxArgNodes)
	}
	if depth > maxArgDepth {
		return nil, errAt(n, ProblemValue, "args nest deeper than %d levels; check for a cyclic YAML alias", maxArgDepth)
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

// script parses script: { path, timeout }. Like Argent, it is a map only: a
// script soon needs a timeout, and a bare form would have to be rewritten.
func (p *parser) script(v *yaml.Node) (Directive, *Error) {
	v = resolve(v)
	if _, ok := strValue(v); ok {
		return nil, errAt(v, ProblemShape, "script takes a map, not a bare path: write script: { path: scripts/seed.mjs }")
	}
	if v == nil || v.Kind != yaml.MappingNode {
		return nil, errAt(v, ProblemShape, "script needs { path, timeout }, e.g. script: { path: scripts/seed.mjs }, got %s", describe(v))
	}
	o, err := newObject(v)
	if err != nil {
		return nil, err
	}
	if err := o.only("", directiveOptions[KindScript]...); err != nil {
		return nil, err
	}
	pv := o.get("path")
	pth, ok := strValue(pv)
	switch {
	case pv == nil || !ok || pth == "":
		return nil, errAt(orNode(pv, v), ProblemShape, "script needs path: a .mjs file relative to this flow file, e.g. script: { path: scripts/seed.mjs }")
	case strings.Contains(pth, `\`):
		return nil, errAt(pv, ProblemValue, "a script path uses forward slashes, e.g. path: scripts/seed.mjs")
	case strings.HasPrefix(pth, "/") || driveLetter.MatchString(pth):
		return nil, errAt(pv, ProblemValue, "a script path must be relative to the flow file that names it, got %q", pth)
	case !strings.HasSuffix(pth, ".mjs") && strings.HasSuffix(strings.ToLower(pth), ".mjs"):
		return nil, errAt(pv, ProblemValue, "a script path must use the lowercase .mjs extension, got %q", pth)
	case !strings.HasSuffix(pth, ".mjs"):
		// The extension pins the module type whatever package.json says.
		return nil, errAt(pv, ProblemValue, "a script path must end in .mjs, got %q", pth)
	case !scriptFileName.MatchString(path.Base(pth)):
		return nil, errAt(pv, ProblemValue, "a script's file name may hold only letters, digits, _ and - before .mjs, got %q", pth)
	}
	s := &Script{Path: pth}
	if tv := o.get("timeout"); tv != nil {
		if s.Timeout, err = positiveMillis(tv, "timeout"); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// twoFinger parses the map of pinch: and rotate:: { on, <amount> }; they
// have no bare form, since a bare selector names no scale or angle.
func (p *parser) twoFinger(v *yaml.Node, kind Kind, amount, example string) (*Selector, *yaml.Node, *Error) {
	v = resolve(v)
	if v == nil || v.Kind != yaml.MappingNode {
		return nil, nil, errAt(v, ProblemShape, "%s takes a map, e.g. %s, got %s", kind, example, describe(v))
	}
	o, err := newObject(v)
	if err != nil {
		return nil, nil, err
	}
	for _, e := range o.entries {
		if slices.Contains(selectorKeys, e.name) {
			return nil, nil, errAt(e.key, ProblemShape, "%s takes its selector under on:, e.g. %s", kind, example)
		}
	}
	if err := o.only("", directiveOptions[kind]...); err != nil {
		return nil, nil, err
	}
	av := o.get(amount)
	if av == nil {
		return nil, nil, errAt(v, ProblemShape, "%s needs %s, e.g. %s", kind, amount, example)
	}
	var sel *Selector
	if o.has("on") {
		budget := MaxSelectorScopes
		if sel, err = p.selector(o.get("on"), "on", &budget); err != nil {
			return nil, nil, err
		}
	}
	return sel, av, nil
}

func (p *parser) pinch(v *yaml.Node) (Directive, *Error) {
	sel, sv, err := p.twoFinger(v, KindPinch, "scale", "pinch: { on: { id: map }, scale: 2 }")
	if err != nil {
		return nil, err
	}
	s, ok := numValue(sv)
	if !ok || s <= 0 || s == 1 {
		return nil, errAt(sv, ProblemValue, "scale must be a number above 0 and not 1 (2 zooms in 2x, 0.5 zooms out), got %s", describe(sv))
	}
	return &Pinch{On: sel, Scale: s}, nil
}

func (p *parser) rotate(v *yaml.Node) (Directive, *Error) {
	sel, bv, err := p.twoFinger(v, KindRotate, "by", "rotate: { on: { id: map }, by: 90 }")
	if err != nil {
		return nil, err
	}
	b, ok := numValue(bv)
	if !ok || b == 0 || math.Abs(b) > MaxRotateDegrees {
		return nil, errAt(bv, ProblemValue, "by must be a non-zero number of degrees within ±%d (clockwise positive), got %s", MaxRotateDegrees, describe(bv))
	}
	return &Rotate{On: sel, By: b}, nil
}

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
		return errAt(e.key, ProblemUnknownKey, "%sunknown %s %q%s (allowed: %s)", pfx(where), what, e.name, suggest(e.name, allowed), strings.Join(allowed, ", "))
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
		if d := osaDistance(strings.ToLower(key), strings.ToLower(c)); d < bestD {
			best, bestD = c, d
		}
	}
	if best == "" || bestD > max(1, len(best)/3) {
		return ""
	}
	return fmt.Sprintf(" (did you mean %q?)", best)
}

// osaDistance is Levenshtein distance plus adjacent transposition, so the
// commonest typo ("roel" for "role") counts one edit.
func osaDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	d := make([][]int, len(ra)+1)
	for i := range d {
		d[i] = make([]int, len(rb)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(ra); i++ {
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(ra)][len(rb)]
}

// Marshal writes f as a flow file: executionPrerequisite (when set), then
// steps, in the compact spelling Argent's serializer uses — defaults left
// out, bare strings for name-only snapshots and loose selectors. It parses
// the result back before returning it, so a step built by hand that the
// parser would refuse fails here, where it was built, and not on the next
// load of the file.
func Marshal(f *Flow) ([]byte, error) {
	root, err := f.node()
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(root); err != nil {
		return nil, fmt.Errorf("flow: encode: %w", err)
	}
	if err := enc.Close(); err != nil {
		return nil, fmt.Errorf("flow: encode: %w", err)
	}
	name := f.Name
	if name == "" {
		name = "marshalled flow"
	}
	if _, err := Parse(name, buf.Bytes()); err != nil {
		return nil, fmt.Errorf("flow: the marshalled flow does not parse back: %w", err)
	}
	return buf.Bytes(), nil
}

// MarshalYAML implements yaml.Marshaler, so yaml.Marshal(f) writes the same
// document as Marshal (without Marshal's parse-back check).
func (f *Flow) MarshalYAML() (any, error) { return f.node() }

// MarshalYAML implements yaml.Marshaler for one step: the step's map.
func (s *Step) MarshalYAML() (any, error) { return s.node() }

func (f *Flow) node() (*yaml.Node, error) {
	root := mapNode(false)
	if f.ExecutionPrerequisite != "" {
		addPair(root, "executionPrerequisite", strNode(f.ExecutionPrerequisite))
	}
	seq, err := stepsNode(f.Steps)
	if err != nil {
		return nil, err
	}
	return addPair(root, "steps", seq), nil
}

func stepsNode(steps []*Step) (*yaml.Node, error) {
	seq := &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq"}
	for _, s := range steps {
		n, err := s.node()
		if err != nil {
			return nil, err
		}
		seq.Content = append(seq.Content, n)
	}
	return seq, nil
}

// node encodes one step as its map: the directive key and, for when: and
// tool:, the sibling keys.
func (s *Step) node() (*yaml.Node, error) {
	m := mapNode(false)
	if s == nil || s.Directive == nil {
		return nil, errors.New("flow: a step without a directive")
	}
	k := string(s.Kind())
	switch d := s.Directive.(type) {
	case *When:
		guard, err := d.Condition.node()
		if err != nil {
			return nil, err
		}
		steps, err := stepsNode(d.Steps)
		if err != nil {
			return nil, err
		}
		return addPair(addPair(m, k, guard), "steps", steps), nil
	case *Tool:
		addPair(m, k, strNode(d.Name))
		if len(d.Args) > 0 {
			args := &yaml.Node{}
			if err := args.Encode(d.Args); err != nil {
				return nil, fmt.Errorf("flow: tool %s args: %w", d.Name, err)
			}
			addPair(m, "args", args)
		}
		if d.Delay > 0 {
			addPair(m, "delayMs", msNode(d.Delay))
		}
		return m, nil
	}
	v, err := directiveNode(s.Directive)
	if err != nil {
		return nil, fmt.Errorf("flow: %s: %w", k, err)
	}
	return addPair(m, k, v), nil
}

// directiveNode encodes a directive's value, writing an option only when it
// differs from the default the parser would fill in.
func directiveNode(d Directive) (*yaml.Node, error) {
	switch d := d.(type) {
	case *Launch:
		if d.URL != "" {
			return strNode(d.URL), nil
		}
		m := mapNode(true)
		for _, kv := range [][2]string{{"native", d.Native}, {"ios", d.IOS}, {"android", d.Android}, {"vega", d.Vega}} {
			if kv[1] != "" {
				addPair(m, kv[0], strNode(kv[1]))
			}
		}
		switch {
		case len(d.ChromiumArgs) > 0:
			args := &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq", Style: yaml.FlowStyle}
			for _, a := range d.ChromiumArgs {
				args.Content = append(args.Content, strNode(a))
			}
			addPair(m, "chromium", addPair(addPair(mapNode(true), "path", strNode(d.Chromium)), "args", args))
		case d.Chromium != "":
			addPair(m, "chromium", strNode(d.Chromium))
		}
		return m, nil
	case *Tap:
		t, err := targetNode(d.On, d.Point, d.X, d.Y)
		if err != nil || d.Times <= 1 {
			return t, err
		}
		return addPair(addPair(mapNode(true), "on", t), "times", numNode(float64(d.Times))), nil
	case *LongPress:
		t, err := targetNode(d.On, d.Point, d.X, d.Y)
		if err != nil || d.Duration == 0 || d.Duration == DefaultLongPress {
			return t, err
		}
		return addPair(addPair(mapNode(true), "on", t), "duration", msNode(d.Duration)), nil
	case *Type:
		into, err := d.Into.node()
		if err != nil {
			return nil, err
		}
		m := addPair(addPair(mapNode(true), "into", into), "text", strNode(d.Text))
		if !d.Submit {
			addPair(m, "submit", boolNode(false))
		}
		return m, nil
	case *ScrollTo:
		t, err := d.Target.node()
		if err != nil {
			return nil, err
		}
		down := d.Direction == "" || d.Direction == "down"
		if d.Target.Loose && down && d.Within == nil {
			return t, nil
		}
		m := addPair(mapNode(true), "target", t)
		if !down {
			addPair(m, "direction", strNode(d.Direction))
		}
		if d.Within != nil {
			w, err := d.Within.node()
			if err != nil {
				return nil, err
			}
			addPair(m, "within", w)
		}
		return m, nil
	case *Await:
		m, err := d.Condition.node()
		if err == nil && d.Timeout != 0 && d.Timeout != DefaultAwaitTimeout {
			addPair(m, "timeout", msNode(d.Timeout))
		}
		return m, err
	case *Assert:
		return d.Condition.node()
	case *Wait:
		return msNode(d.Duration), nil
	case *Snapshot:
		if d.MaxMismatch == DefaultMaxMismatch && d.CropOn == nil {
			return strNode(d.Name), nil
		}
		m := addPair(mapNode(true), "name", strNode(d.Name))
		if d.MaxMismatch != DefaultMaxMismatch {
			addPair(m, "maxMismatch", numNode(d.MaxMismatch))
		}
		if d.CropOn != nil {
			c, err := d.CropOn.node()
			if err != nil {
				return nil, err
			}
			addPair(m, "cropOn", c)
		}
		return m, nil
	case *Run:
		return strNode(d.Target), nil
	case *Echo:
		return strNode(d.Message), nil
	case *Script:
		m := addPair(mapNode(true), "path", strNode(d.Path))
		if d.Timeout > 0 {
			addPair(m, "timeout", msNode(d.Timeout))
		}
		return m, nil
	case *Pinch:
		return twoFingerNode(d.On, "scale", d.Scale)
	case *Rotate:
		return twoFingerNode(d.On, "by", d.By)
	}
	return nil, fmt.Errorf("no YAML spelling for %T", d)
}

func targetNode(sel *Selector, point bool, x, y float64) (*yaml.Node, error) {
	if point {
		if sel != nil {
			return nil, errors.New("a target is a selector or a point, not both")
		}
		return addPair(addPair(mapNode(true), "x", numNode(x)), "y", numNode(y)), nil
	}
	return sel.node()
}

func twoFingerNode(on *Selector, amount string, v float64) (*yaml.Node, error) {
	m := mapNode(true)
	if on != nil {
		n, err := on.node()
		if err != nil {
			return nil, err
		}
		addPair(m, "on", n)
	}
	return addPair(m, amount, numNode(v)), nil
}

func mapNode(flow bool) *yaml.Node {
	n := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
	if flow {
		n.Style = yaml.FlowStyle
	}
	return n
}

// addPair appends key: v to the map m and returns m.
func addPair(m *yaml.Node, key string, v *yaml.Node) *yaml.Node {
	m.Content = append(m.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: key}, v)
	return m
}

// strNode is a string scalar. The encoder quotes it when the plain form
// would read as another type; a multi-line string is double-quoted because
// a block scalar does not round-trip whitespace-only lines (Argent turns
// block scalars off for the same reason).
func strNode(s string) *yaml.Node {
	n := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s}
	if strings.ContainsAny(s, "\n\r") || isOldBool(s) {
		n.Style = yaml.DoubleQuotedStyle
	}
	return n
}

func isOldBool(s string) bool {
	switch strings.ToLower(s) {
	case "y", "n", "yes", "no", "on", "off":
		return true
	}
	return false
}

func boolNode(b bool) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!bool", Value: strconv.FormatBool(b)}
}

func numNode(f float64) *yaml.Node {
	if f == math.Trunc(f) && math.Abs(f) < 1e15 {
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!int", Value: strconv.FormatInt(int64(f), 10)}
	}
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!float", Value: strconv.FormatFloat(f, 'f', -1, 64)}
}

// msNode writes a duration as the milliseconds the YAML counts in.
func msNode(d time.Duration) *yaml.Node {
	return numNode(float64(d) / float64(time.Millisecond))
}

// FormatStep renders a step on one line in YAML flow style, the way the
// seed quotes a step in a FLOW_FILE_INVALID message:
// `script: { path: ../../scripts/hello.mjs }`. It writes what Marshal
// would, defaults left out, and "<invalid step: …>" for a step that has no
// YAML spelling.
func FormatStep(step *Step) string {
	n, err := step.node()
	if err != nil {
		return fmt.Sprintf("<invalid step: %v>", err)
	}
	var b strings.Builder
	writePairs(&b, n)
	return b.String()
}

func writeFlow(b *strings.Builder, n *yaml.Node) {
	switch n.Kind {
	case yaml.MappingNode:
		if len(n.Content) == 0 {
			b.WriteString("{}")
			return
		}
		b.WriteString("{ ")
		writePairs(b, n)
		b.WriteString(" }")
	case yaml.SequenceNode:
		if len(n.Content) == 0 {
			b.WriteString("[]")
			return
		}
		b.WriteString("[ ")
		for i, c := range n.Content {
			if i > 0 {
				b.WriteString(", ")
			}
			writeFlow(b, c)
		}
		b.WriteString(" ]")
	case yaml.AliasNode:
		writeFlow(b, n.Alias)
	default:
		writeScalar(b, n)
	}
}

func writePairs(b *strings.Builder, m *yaml.Node) {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if i > 0 {
			b.WriteString(", ")
		}
		// Keys are the format's own words (on, y): never quoted.
		b.WriteString(m.Content[i].Value)
		b.WriteString(": ")
		writeFlow(b, m.Content[i+1])
	}
}

// writeScalar writes a scalar plain when that reads back as the same
// string inside a flow collection, else double-quoted.
func writeScalar(b *strings.Builder, n *yaml.Node) {
	if n.ShortTag() != "!!str" || plainInFlow(n.Value) {
		b.WriteString(n.Value)
		return
	}
	b.WriteString(strconv.Quote(n.Value))
}

func plainInFlow(s string) bool {
	if s == "" || s != strings.TrimSpace(s) || strings.ContainsAny(s, ",[]{}\n\r\t\"'") ||
		strings.Contains(s, ": ") || strings.Contains(s, " #") || strings.HasSuffix(s, ":") ||
		strings.ContainsAny(s[:1], "#&*!|>%@`") || isOldBool(s) {
		return false
	}
	// "-", "?" and ":" start a plain scalar only when a non-space follows.
	if strings.ContainsAny(s[:1], "-?:") && (len(s) == 1 || s[1] == ' ') {
		return false
	}
	var n yaml.Node
	if yaml.Unmarshal([]byte(s), &n) != nil || len(n.Content) != 1 {
		return false
	}
	c := n.Content[0]
	return c.Kind == yaml.ScalarNode && c.ShortTag() == "!!str" && c.Value == s
}
