package flow

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"

	"go.yaml.in/yaml/v3"
)

// maxErrors bounds how many problems one Parse reports, as the Go compiler
// stops at ten: past that the list stops helping, and a file sent over a
// link can be large.
const maxErrors = 10

// stepSiblings are the keys a step may carry beside its directive key: a
// when: has its steps:, a tool: its args: and delayMs:. Every other
// directive keeps its options inside its value.
var stepSiblings = map[Kind][]string{
	KindWhen: {"steps"},
	KindTool: {"args", "delayMs"},
}

// The patterns are compiled on first use, not before main, which every
// command pays (docs/performance.md, "Start-up").
var (
	topLevelKeys  = []string{"steps", "executionPrerequisite"}
	yamlLineError = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?s)^yaml: line (\d+): (.*)$`) })
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
	// stepCount counts the steps read so far, when: blocks included; past
	// MaxRunSteps the file is refused and reading stops.
	stepCount int
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

// full tells that reading should stop: the errors reached maxErrors, or
// the file holds more steps than a run reports.
func (p *parser) full() bool { return len(p.errs) >= maxErrors || p.stepCount > MaxRunSteps }

func (p *parser) parseFile(data []byte) *Flow {
	doc, err := decodeDocument(data)
	if err != nil {
		p.add(err, nil, "")
		return nil
	}
	if doc != nil {
		if e := checkAliases(doc); e != nil {
			p.add(e, nil, "")
			return nil
		}
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
		return nil, syntaxError(err, data)
	}
	var extra yaml.Node
	switch err := dec.Decode(&extra); {
	case err == nil:
		return nil, &Error{Line: extra.Line, Problem: ProblemSyntax, Msg: "the file holds more than one YAML document (---); a flow file is one document"}
	case err != io.EOF:
		return nil, syntaxError(err, data)
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

// syntaxError turns a YAML error into an Error at its line, with the
// quoting hint when an unquoted colon (quoteHint) or a flow indicator
// such as '?' or '{' (indicatorHint) in a value of data caused it; the
// hint moves the error to the line and column of that value, which
// yaml.v3 does not give.
func syntaxError(err error, data []byte) *Error {
	msg := err.Error()
	if m := yamlLineError().FindStringSubmatch(msg); m != nil {
		line, _ := strconv.Atoi(m[1])
		if slices.Contains(yamlParserProblems, m[2]) {
			line++
		}
		e := &Error{Line: line, Problem: ProblemSyntax, Msg: "invalid YAML: " + m[2], Err: err}
		where, hint := quoteHint(data, line, m[2])
		if hint == "" {
			where, hint = indicatorHint(data, line, m[2])
		}
		if hint != "" {
			e.Line, e.Column = where.line, where.column
			e.Msg += hint
		}
		return e
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
		if p.stepCount++; p.stepCount > MaxRunSteps {
			p.add(errAt(resolve(item), ProblemSize, "the file holds more than %d steps, when: blocks included; a run reports at most %d, so split it into several flows", MaxRunSteps, MaxRunSteps), path, "")
			break
		}
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
	kind, err := stepKind(o)
	if err != nil {
		return nil, kind, err
	}
	d, err := p.directive(kind, o, path, depth)
	if err != nil || d == nil {
		return nil, kind, err
	}
	return &Step{Directive: d, Path: path, Line: n.Line, Column: n.Column}, kind, nil
}

// stepKind finds the one directive key of a step's map and checks that
// every other key is a sibling that directive takes (stepSiblings). With an
// error it returns the kind when it is known, for the error's attribution.
func stepKind(o *object) (Kind, *Error) {
	if len(o.entries) == 0 {
		return "", errAt(o.node, ProblemEmptyStep, "empty step: a step is a map with one directive, e.g. - tap: { id: save }")
	}
	if o.has("optional") {
		// Maestro habits produce optional:, and silently dropping it would
		// leave a step its author believes cannot fail stopping the flow.
		return "", errAt(o.key("optional"), ProblemUnknownKey, "optional is not supported; guard the step with a when: block instead (when: { visible: <selector> } with steps:)")
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
			return "", errAt(o.key("else"), ProblemElse, "else without when: flows have no else; a when: block runs its steps: or skips them")
		case o.has("idle"):
			return "", errAt(o.key("idle"), ProblemUnknownDirective, "idle is a condition, not a directive; write await: { idle: true }")
		}
		return "", errAt(first.key, ProblemUnknownDirective, "%s", unknownDirective(first.name))
	case 1:
	default:
		return "", errAt(kindKeys[1], ProblemDirectiveCount, "a step takes exactly one directive, found %s and %s; give each its own step", kinds[0], kinds[1])
	}
	kind := kinds[0]
	for _, e := range o.entries {
		if e.name == string(kind) || slices.Contains(stepSiblings[kind], e.name) {
			continue
		}
		if e.name == "else" && kind == KindWhen {
			return kind, errAt(e.key, ProblemElse, "when has no else: paths may only reconverge; put the other path in its own flow, or in a second when: block with the opposite condition")
		}
		if kind == KindTool || kind == KindWhen {
			return kind, errAt(e.key, ProblemUnknownKey, "unknown option %q%s beside %s: (allowed: %s)", e.name, suggest(e.name, stepSiblings[kind]), kind, strings.Join(stepSiblings[kind], ", "))
		}
		return kind, errAt(e.key, ProblemUnknownKey, "unknown option %q beside %s: (options go inside the %s: value)", e.name, kind, kind)
	}
	return kind, nil
}

// directive parses the value of a step's directive key (and, for when: and
// tool:, its siblings) with that directive's parser in parse_directives.go.
func (p *parser) directive(kind Kind, o *object, path StepPath, depth int) (Directive, *Error) {
	v := o.get(string(kind))
	switch kind {
	case KindLaunch:
		return p.launch(v)
	case KindTap:
		return p.tap(v)
	case KindLongPress:
		return p.longPress(v)
	case KindType:
		return p.typeText(v)
	case KindScrollTo:
		return p.scrollTo(v)
	case KindAwait:
		return p.await(v)
	case KindAssert:
		return p.assert(v)
	case KindWait:
		return p.wait(v)
	case KindSnapshot:
		return p.snapshot(v)
	case KindRun:
		return p.run(v)
	case KindWhen:
		return p.when(o, path, depth)
	case KindEcho:
		return p.echo(v)
	case KindTool:
		return p.tool(o)
	case KindScript:
		return p.script(v)
	case KindPinch:
		return p.pinch(v)
	case KindRotate:
		return p.rotate(v)
	case KindPress:
		return p.press(v)
	}
	return nil, nil
}
