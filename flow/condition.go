package flow

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// ConditionKind names what a condition checks.
type ConditionKind string

// The conditions of await:, assert: and when:. Idle is only for await:,
// Platform only for when:.
const (
	CondExists   ConditionKind = "exists"   // an element matches
	CondVisible  ConditionKind = "visible"  // a visible element matches
	CondHidden   ConditionKind = "hidden"   // no visible element matches
	CondText     ConditionKind = "text"     // the text of the element in Selector satisfies Match
	CondIdle     ConditionKind = "idle"     // the page stopped changing for StableFor
	CondPlatform ConditionKind = "platform" // the run's platform is Platform
)

// TextMatch is the comparator of a text condition.
type TextMatch string

// The comparators of { text: { in, contains|equals|matches } }.
const (
	MatchContains TextMatch = "contains" // case-insensitive substring
	MatchEquals   TextMatch = "equals"   // case-insensitive full match
	MatchMatches  TextMatch = "matches"  // case-sensitive regex, unanchored
)

// Condition is the condition of an await:, an assert: or a when: guard.
type Condition struct {
	Kind ConditionKind
	// Selector is the element of exists/visible/hidden, and the in: element
	// of a text condition.
	Selector *Selector
	// Match, Expected and Regexp are set for CondText; Expected is the text
	// or, for MatchMatches, the pattern (Regexp is its Go compilation).
	Match    TextMatch
	Expected string
	Regexp   *regexp.Regexp
	// StableFor is set for CondIdle: DefaultIdleStableFor unless the file says.
	StableFor time.Duration
	// Platform is set for CondPlatform: "ios", "android", "chromium" or "vega".
	Platform string
	// Line and Column locate the condition's map in the YAML.
	Line, Column int
	// MatchCase makes contains and equals compare case. A file never
	// sets it (Argent compares without case); the runner sets it on the
	// conditions of a strict run (Options.Strict).
	MatchCase bool
}

// String describes the condition for messages: `visible id="save"`,
// `text in "Total" equals "3"`, `idle`, `platform chromium`.
func (c Condition) String() string {
	switch c.Kind {
	case CondText:
		exp := fmt.Sprintf("%q", c.Expected)
		if c.Match == MatchMatches {
			exp = "/" + c.Expected + "/"
		}
		return fmt.Sprintf("text in %s %s %s", c.Selector, c.Match, exp)
	case CondIdle:
		return "idle"
	case CondPlatform:
		return "platform " + c.Platform
	}
	return fmt.Sprintf("%s %s", c.Kind, c.Selector)
}

var (
	selectorConditions = []string{"exists", "visible", "hidden", "text"}
	platforms          = []string{"ios", "android", "chromium", "vega"}
	textCheckKeys      = []string{"in", "contains", "equals", "matches"}
	textMatches        = []string{"contains", "equals", "matches"}
)

// Argent's idle cadence: a settle needs two still intervals of one 200 ms
// poll each, plus one poll of budget to start the closing round, so a
// timeout below max(400 ms, stableFor) + 200 ms can never pass however still
// the page is. Rejecting it at parse time beats a step that fails at random.
const (
	idlePoll         = 200 * time.Millisecond
	idleSettleSpan   = 2 * idlePoll
	maxIdleStableFor = 600_000 * time.Millisecond
)

func idleMinimumTimeout(stableFor time.Duration) time.Duration {
	return max(idleSettleSpan, stableFor) + idlePoll
}

// await parses an await: body.
func (p *parser) await(v *yaml.Node) (Directive, *Error) {
	o, err := conditionObject(v, "await needs a condition: { visible|hidden|exists: <selector> }, { text: { in, contains|equals|matches } } or { idle: true }")
	if err != nil {
		return nil, err
	}
	if err := o.only("", directiveOptions[KindAwait]...); err != nil {
		return nil, err
	}
	if o.has("idle") {
		return p.idle(o)
	}
	a := &Await{Timeout: DefaultAwaitTimeout}
	if t := o.get("timeout"); t != nil {
		if a.Timeout, err = positiveMillis(t, "timeout"); err != nil {
			return nil, err
		}
	}
	if o.has("stableFor") {
		return nil, errAt(o.key("stableFor"), ProblemShape, "stableFor belongs to await: { idle: true, stableFor }")
	}
	a.Condition, err = p.uiCondition(o, "await", selectorConditions)
	return a, err
}

// idle parses await: { idle: true, stableFor, timeout }.
func (p *parser) idle(o *object) (Directive, *Error) {
	for _, k := range selectorConditions {
		if o.has(k) {
			return nil, errAt(o.key(k), ProblemShape, "mixes idle with %s; a step checks exactly one condition, so give each its own await:", k)
		}
	}
	if b, ok := boolValue(o.get("idle")); !ok || !b {
		return nil, errAt(o.get("idle"), ProblemValue, "idle takes only true (await: { idle: true })")
	}
	a := &Await{Timeout: DefaultAwaitTimeout, Condition: Condition{Kind: CondIdle, StableFor: DefaultIdleStableFor, Line: o.node.Line, Column: o.node.Column}}
	var err *Error
	if t := o.get("timeout"); t != nil {
		if a.Timeout, err = positiveMillis(t, "timeout"); err != nil {
			return nil, err
		}
	}
	if s := o.get("stableFor"); s != nil {
		ms, ok := numValue(s)
		if !ok || ms != float64(int64(ms)) || ms < 0 || millis(ms) > maxIdleStableFor {
			return nil, errAt(s, ProblemValue, "stableFor needs a whole number of milliseconds from 0 to %d, got %s", maxIdleStableFor.Milliseconds(), describe(s))
		}
		a.Condition.StableFor = millis(ms)
	}
	if need := idleMinimumTimeout(a.Condition.StableFor); a.Timeout < need {
		at := o.node
		if t := o.get("timeout"); t != nil {
			at = t
		}
		return nil, errAt(at, ProblemValue, "idle needs a timeout of at least %dms to hold still for %dms: a settle takes three reads 200ms apart and one more poll of budget; raise timeout", need.Milliseconds(), a.Condition.StableFor.Milliseconds())
	}
	return a, nil
}

// assert parses an assert: body: one condition, checked now.
func (p *parser) assert(v *yaml.Node) (Directive, *Error) {
	o, err := conditionObject(v, "assert needs one condition: { visible|hidden|exists: <selector> } or { text: { in, contains|equals|matches } }")
	if err != nil {
		return nil, err
	}
	if o.has("idle") {
		return nil, errAt(o.key("idle"), ProblemShape, "idle has no assert form: waiting for the page to stop changing is an await: { idle: true }")
	}
	if o.has("timeout") {
		return nil, errAt(o.key("timeout"), ProblemUnknownKey, "assert takes no timeout: it is checked now with a %dms grace; use await for a timed wait", AssertGrace.Milliseconds())
	}
	if err := o.only("", directiveOptions[KindAssert]...); err != nil {
		return nil, err
	}
	c, err := p.uiCondition(o, "assert", selectorConditions)
	if err != nil {
		return nil, err
	}
	return &Assert{Condition: c}, nil
}

// whenGuard parses the condition of a when: step.
func (p *parser) whenGuard(v *yaml.Node) (Condition, *Error) {
	o, err := conditionObject(v, "when needs one condition: { visible|hidden|exists: <selector> }, { text: { in, contains|equals|matches } } or { platform: chromium }")
	if err != nil {
		return Condition{}, err
	}
	if o.has("idle") {
		return Condition{}, errAt(o.key("idle"), ProblemShape, "when has no idle form: a guard asks what is on the page now; put await: { idle: true } before the block")
	}
	if o.has("timeout") {
		return Condition{}, errAt(o.key("timeout"), ProblemUnknownKey, "when takes no timeout: the guard is checked with the %dms assert grace so a skipped block stays cheap", AssertGrace.Milliseconds())
	}
	if err := o.only("", whenGuardKeys...); err != nil {
		return Condition{}, err
	}
	if pv := o.get("platform"); pv != nil {
		if len(o.entries) != 1 {
			return Condition{}, errAt(o.node, ProblemShape, "when: { platform } takes no other condition")
		}
		s, ok := strValue(pv)
		if !ok || !slices.Contains(platforms, s) {
			return Condition{}, errAt(pv, ProblemValue, "platform must be one of %s, got %s", strings.Join(platforms, ", "), describe(pv))
		}
		return Condition{Kind: CondPlatform, Platform: s, Line: o.node.Line, Column: o.node.Column}, nil
	}
	c, err := p.uiCondition(o, "when", selectorConditions)
	if err != nil {
		return Condition{}, err
	}
	// A guard never resolves {{secret:…}} (only type: does), so a placeholder
	// there tests for literal text that is never on the page and the guard
	// silently becomes a constant. Argent rejects it for that reason.
	texts := []string{c.Expected}
	for s := range c.Selector.all() {
		texts = append(texts, s.ID, s.Text, s.Matches, s.Role)
	}
	for _, t := range texts {
		if strings.Contains(t, secretMarker) {
			return Condition{}, errAt(o.node, ProblemValue, "when takes no {{secret:…}} placeholder: secrets are filled only in type: steps, so the guard would test for text that is never on the page")
		}
	}
	return c, nil
}

// whenGuardKeys are the keys of a when: guard.
var whenGuardKeys = append(append([]string(nil), selectorConditions...), "platform")

// conditionObject checks that v is a map and returns it; msg explains the
// shapes when it is not.
func conditionObject(v *yaml.Node, msg string) (*object, *Error) {
	v = resolve(v)
	if v == nil || v.Kind != yaml.MappingNode {
		return nil, errAt(v, ProblemShape, "%s, got %s", msg, describe(v))
	}
	return newObject(v)
}

// uiCondition parses the one selector condition of o; keys lists the
// condition names it may hold. kind names the directive in messages.
func (p *parser) uiCondition(o *object, kind string, keys []string) (Condition, *Error) {
	var found []string
	for _, e := range o.entries {
		if slices.Contains(keys, e.name) {
			found = append(found, e.name)
		}
	}
	switch len(found) {
	case 0:
		return Condition{}, errAt(o.node, ProblemShape, "%s needs a condition (%s)", kind, strings.Join(keys, ", "))
	case 1:
	default:
		return Condition{}, errAt(o.key(found[1]), ProblemShape, "%s checks exactly one condition, got %s", kind, strings.Join(found, " and "))
	}
	k := found[0]
	c := Condition{Kind: ConditionKind(k), Line: o.node.Line, Column: o.node.Column}
	budget := MaxSelectorScopes
	if k != "text" {
		sel, err := p.selector(o.get(k), k, &budget)
		c.Selector = sel
		return c, err
	}
	tv := resolve(o.get(k))
	if tv.Kind != yaml.MappingNode {
		return Condition{}, errAt(tv, ProblemShape, "text needs { in: <selector>, contains|equals|matches: <string> }, got %s", describe(tv))
	}
	to, err := newObject(tv)
	if err != nil {
		return Condition{}, err
	}
	if err := to.only("text", textCheckKeys...); err != nil {
		return Condition{}, err
	}
	var modes []string
	for _, m := range textMatches {
		if to.has(m) {
			modes = append(modes, m)
		}
	}
	if len(modes) != 1 {
		return Condition{}, errAt(tv, ProblemShape, "text needs exactly one of contains, equals or matches")
	}
	c.Match = TextMatch(modes[0])
	ev := to.get(modes[0])
	exp, ok := strValue(ev)
	if !ok || exp == "" {
		return Condition{}, errAt(ev, ProblemShape, "text.%s needs a non-empty string, got %s; quote numbers and booleans", modes[0], describe(ev))
	}
	c.Expected = exp
	if c.Match == MatchMatches {
		if c.Regexp, err = compilePattern(ev, "text.matches", exp); err != nil {
			return Condition{}, err
		}
	}
	if !to.has("in") {
		return Condition{}, errAt(tv, ProblemSelector, "text needs in: <selector>, the element whose text is checked")
	}
	c.Selector, err = p.selector(to.get("in"), "text.in", &budget)
	return c, err
}

// all iterates over s and every selector in its scopes.
func (s *Selector) all() func(func(*Selector) bool) {
	return func(yield func(*Selector) bool) {
		var walk func(*Selector) bool
		walk = func(s *Selector) bool {
			if s == nil {
				return true
			}
			return yield(s) && walk(s.Within) && walk(s.After) && walk(s.Next)
		}
		walk(s)
	}
}

// node encodes the condition as the map of an await:, assert: or when:
// body, without the await's timeout.
func (c Condition) node() (*yaml.Node, error) {
	m := mapNode(true)
	switch c.Kind {
	case CondPlatform:
		return addPair(m, "platform", strNode(c.Platform)), nil
	case CondIdle:
		addPair(m, "idle", boolNode(true))
		if c.StableFor != DefaultIdleStableFor {
			addPair(m, "stableFor", msNode(c.StableFor))
		}
		return m, nil
	case CondExists, CondVisible, CondHidden, CondText:
	default:
		return nil, fmt.Errorf("flow: unknown condition kind %q", c.Kind)
	}
	sel, err := c.Selector.node()
	if err != nil {
		return nil, err
	}
	if c.Kind != CondText {
		return addPair(m, string(c.Kind), sel), nil
	}
	t := addPair(mapNode(true), "in", sel)
	addPair(t, string(c.Match), strNode(c.Expected))
	return addPair(m, "text", t), nil
}
