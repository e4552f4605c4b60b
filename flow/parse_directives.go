package flow

import (
	"math"
	"path"
	"regexp"
	"slices"
	"strings"
	"sync"

	"go.yaml.in/yaml/v3"
)

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
	KindSnapshot:  {"name", "maxMismatch", "cropOn", "maxDiffPixels", "threshold", "metric", "windowSize", "fullPage", "mask", "maskColor", "hide", "ignore", "ignoreRegions", "style", "stylePath", "stopOnFailure"},
	KindRun:       nil,
	KindWhen:      whenGuardKeys,
	KindEcho:      nil,
	KindTool:      nil,
	KindScript:    {"path", "timeout"},
	KindPinch:     {"on", "scale"},
	KindRotate:    {"on", "by"},
	KindPress:     {"key", "times"},
}

// The patterns are compiled on first use, not before main, which every
// command pays (docs/performance.md, "Start-up").
var (
	launchChromiumKeys = []string{"path", "args"}
	scrollDirections   = []string{"down", "up", "left", "right"}
	scriptFileName     = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9_-]+\.mjs$`) })
	driveLetter        = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z]:`) })
)

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
var secretName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`) })

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
		if !secretName().MatchString(name) {
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
	if err := p.snapshotOptions(o, s); err != nil {
		return nil, err
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
	if strings.HasPrefix(t, "/") || driveLetter().MatchString(t) {
		return nil, errAt(v, ProblemValue, "a run path must be relative to the flow file that names it, got %q", t)
	}
	r := &Run{Target: t}
	file := t
	if !strings.HasSuffix(t, ".yaml") && ValidFileName(path.Base(t+".yaml")) {
		file = r.File()
	}
	if !strings.HasSuffix(file, ".yaml") {
		if strings.HasSuffix(strings.ToLower(file), ".yaml") {
			return nil, errAt(v, ProblemValue, "a run path must use the lowercase .yaml extension, got %q", t)
		}
		return nil, errAt(v, ProblemValue, "a run path must end in .yaml or name a sibling flow (run: login), got %q", t)
	}
	if !ValidFileName(path.Base(file)) {
		return nil, errAt(v, ProblemValue, "a run target's file name may hold only letters, digits, _ and - before .yaml, got %q", t)
	}
	return r, nil
}

// when parses a when: step. Its inner steps are parsed (and their problems
// reported) with the path path.N and one more level of depth.
func (p *parser) when(o *object, path StepPath, depth int) (Directive, *Error) {
	if depth >= MaxWhenDepth {
		return nil, errAt(o.node, ProblemShape, "when: blocks nest deeper than %d levels", MaxWhenDepth)
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

// Bounds on a tool step's args, which are free-form YAML: a tool takes
// its arguments as JSON, and no tool needs more. (Parse refuses a cyclic
// alias and bounds what aliases add to the whole file before any step is
// read: MaxAliasValues.)
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
	case strings.HasPrefix(pth, "/") || driveLetter().MatchString(pth):
		return nil, errAt(pv, ProblemValue, "a script path must be relative to the flow file that names it, got %q", pth)
	case !strings.HasSuffix(pth, ".mjs") && strings.HasSuffix(strings.ToLower(pth), ".mjs"):
		return nil, errAt(pv, ProblemValue, "a script path must use the lowercase .mjs extension, got %q", pth)
	case !strings.HasSuffix(pth, ".mjs"):
		// The extension pins the module type whatever package.json says.
		return nil, errAt(pv, ProblemValue, "a script path must end in .mjs, got %q", pth)
	case !scriptFileName().MatchString(path.Base(pth)):
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
