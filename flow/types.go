package flow

import (
	"fmt"
	"iter"
	"path"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/toolserver/toolserver/internal/clientpath"
	"github.com/toolserver/toolserver/wire"
)

// Defaults and limits of the flow format. The values come from docs/product.md
// where it names them and from Argent's tool-server where it is silent, so a
// flow behaves the same on both.
const (
	// DefaultAwaitTimeout is how long await: waits when it names no timeout.
	DefaultAwaitTimeout = 7500 * time.Millisecond
	// DefaultIdleStableFor is how long await: { idle: true } wants the page
	// still when it names no stableFor (Argent's IDLE_DEFAULT_STABLE_FOR_MS).
	DefaultIdleStableFor = 250 * time.Millisecond
	// AssertGrace is the fixed time an assert: (and a when: guard) gets to
	// become true; it takes no timeout of its own.
	AssertGrace = 1000 * time.Millisecond
	// DefaultMaxMismatch is the percent of pixels a snapshot may differ by.
	DefaultMaxMismatch = 0.5
	// DefaultLongPress is how long long-press: holds when it names no
	// duration (Argent's DEFAULT_LONG_PRESS_MS).
	DefaultLongPress = 800 * time.Millisecond
	// MaxSelectorScopes bounds the within/after/next keys of one selector,
	// counted over its whole tree like Argent's MAX_SELECTOR_SCOPES: a count
	// rather than a depth, because each level can open three branches.
	MaxSelectorScopes = 6
	// MaxWhenDepth bounds nested when: blocks (Argent's MAX_BLOCK_DEPTH); no
	// real flow comes close.
	MaxWhenDepth = 20
	// MaxRunSteps bounds the lines of one run's report: every step it runs
	// or reports, the steps of its run: fragments and nested flows and of
	// its when: blocks included. A real suite stays far below it (ten
	// thousand steps take minutes on a live page); a few lines of run:
	// fan-out (each fragment running the next several times) would
	// otherwise expand to hundreds of thousands. Parse refuses a file that
	// holds more steps, Execute refuses a flow whose fan-out could reach
	// more, and the runner ends a run that reaches it anyway.
	MaxRunSteps = 10_000
	// MaxAliasValues bounds what a flow file's YAML aliases add once
	// followed, counted in YAML values (each map, list and scalar a copy
	// of an anchored value brings): the "billion laughs" guard. Reusing a
	// selector or a few steps by alias costs tens or hundreds; a file
	// that nests aliases of aliases would otherwise grow a few kilobytes
	// into millions of steps. A cyclic alias expands without end and is
	// refused whatever its size.
	MaxAliasValues = 100_000
	// MaxTapTimes bounds tap: { times } (Argent's gesture-tap clickCount cap).
	MaxTapTimes = 10
	// MaxRotateDegrees bounds rotate: { by }, the largest sweep Argent's
	// single rotate gesture delivers.
	MaxRotateDegrees = 3000
	// ToolFlowExecute is the tool a nested flow runs through.
	ToolFlowExecute = "flow-execute"
)

// Kind names a directive exactly as the YAML spells it.
type Kind string

// The directives of a flow file.
const (
	KindLaunch    Kind = "launch"
	KindTap       Kind = "tap"
	KindLongPress Kind = "long-press"
	KindType      Kind = "type"
	KindScrollTo  Kind = "scroll-to"
	KindAwait     Kind = "await"
	KindAssert    Kind = "assert"
	KindWait      Kind = "wait"
	KindSnapshot  Kind = "snapshot"
	KindRun       Kind = "run"
	KindWhen      Kind = "when"
	KindEcho      Kind = "echo"
	KindTool      Kind = "tool"
	KindScript    Kind = "script"
	KindPinch     Kind = "pinch"
	KindRotate    Kind = "rotate"
	// KindPress is this project's addition: Argent has no key directive.
	KindPress Kind = "press"
)

var allKinds = []Kind{
	KindLaunch, KindTap, KindLongPress, KindType, KindScrollTo, KindAwait,
	KindAssert, KindWait, KindSnapshot, KindRun, KindWhen, KindEcho, KindTool,
	KindScript, KindPinch, KindRotate, KindPress,
}

// Flow is one parsed flow file.
type Flow struct {
	// Name is the name Parse was given: the file's path, used in messages.
	Name string
	// ExecutionPrerequisite is the fragment's declared start state, "" when
	// the file declares none.
	ExecutionPrerequisite string
	// PrerequisiteLine is the YAML line of executionPrerequisite, 0 if absent.
	PrerequisiteLine int
	// Steps are the top-level steps in file order.
	Steps []*Step
}

// StepPath is a step's 1-based position: [3] is the file's third step, [2, 1]
// the first step of the when: block that is the second step.
type StepPath []int

// String renders the path as people count steps: "3", "2.1".
func (p StepPath) String() string {
	parts := make([]string, len(p))
	for i, n := range p {
		parts[i] = strconv.Itoa(n)
	}
	return strings.Join(parts, ".")
}

// Step is one entry of a steps: list.
type Step struct {
	// Directive is a pointer to one of the directive types below.
	Directive Directive
	// Path is where the step sits, for reports and messages.
	Path StepPath
	// Line and Column locate the step's mapping in the YAML.
	Line, Column int
}

// Kind returns the step's directive name.
func (s *Step) Kind() Kind { return s.Directive.Kind() }

// Depth is how many when: blocks enclose the step (0 for a top-level step).
func (s *Step) Depth() int { return len(s.Path) - 1 }

// ChromiumUnsupported returns an error wrapping ErrUnsupported for a step
// that parses but has no meaning on Chromium (pinch, rotate), with the reason
// Argent gives, and nil otherwise. The runner calls it so the rejection reads
// the same wherever it comes from.
func (s *Step) ChromiumUnsupported() error {
	switch s.Directive.(type) {
	case *Pinch:
		return fmt.Errorf("%w: pinch is unsupported on chromium: a desktop page has no uniform pinch-zoom mapping (it zooms with ctrl+wheel or its own controls); drive its zoom controls with tap or a keyboard tool step instead", ErrUnsupported)
	case *Rotate:
		return fmt.Errorf("%w: rotate is unsupported on chromium: a desktop page has no rotate-gesture idiom; drive its rotate controls with tap or a keyboard tool step instead", ErrUnsupported)
	}
	return nil
}

// Directive is the body of one step. Its concrete type is one of *Launch,
// *Tap, *LongPress, *Type, *ScrollTo, *Await, *Assert, *Wait, *Snapshot,
// *Run, *When, *Echo, *Tool, *Script, *Pinch, *Rotate or *Press.
type Directive interface {
	// Kind names the directive as the YAML spells it.
	Kind() Kind
	directive()
}

// Launch opens the app: on Chromium a fresh browser context navigated to a
// URL, or to a file path resolved beside the flow file. A bare string applies
// to every platform; the map form names one target per platform, and only
// Chromium (and ChromiumArgs) matter here — the others are kept so a
// cross-platform Argent flow parses and round-trips.
type Launch struct {
	URL          string   // the bare-string form; "" when the map form is used
	Chromium     string   // map form: chromium: <url or path> (or its path:)
	ChromiumArgs []string // map form: chromium: { path, args }
	Native       string   // map form: native:, the shared iOS/Android/Vega id
	IOS          string   // map form: ios:
	Android      string   // map form: android:
	Vega         string   // map form: vega:
}

// ChromiumTarget returns what to open on Chromium, and false when the map
// form names no chromium target (the runner reports the step then).
func (l *Launch) ChromiumTarget() (string, bool) {
	if l.URL != "" {
		return l.URL, true
	}
	return l.Chromium, l.Chromium != ""
}

// Tap clicks an element's centre, or a point.
type Tap struct {
	On    *Selector // the element; nil for a point tap
	Point bool      // true for { x, y }
	X, Y  float64   // normalized 0..1 of the viewport, when Point
	Times int       // clicks in one gesture, 1 by default (2 = double-click)
}

// LongPress presses, holds and releases an element or a point.
type LongPress struct {
	On       *Selector     // the element; nil for a point
	Point    bool          // true for { x, y }
	X, Y     float64       // normalized 0..1, when Point
	Duration time.Duration // the hold; DefaultLongPress unless the file says
}

// Type focuses an element and types text.
type Type struct {
	Into *Selector
	// Text is the text as written, {{secret:NAME}} placeholders included;
	// the runner fills them and redacts them from reports.
	Text string
	// Submit presses Enter after the text; true unless the file says
	// submit: false (set it when building a step by hand).
	Submit bool
	// Secrets are the NAMEs of the {{secret:NAME}} placeholders in Text, in
	// order of first appearance, without repeats.
	Secrets []string
}

// ScrollTo wheel-scrolls until Target is visible.
type ScrollTo struct {
	Target    *Selector
	Direction string    // "down" (the default), "up", "left" or "right"
	Within    *Selector // the scroll container, or nil for the page
}

// Await waits up to Timeout for a condition (or for the page to be idle).
type Await struct {
	Condition Condition
	Timeout   time.Duration // DefaultAwaitTimeout unless the file says
}

// Assert checks a condition now, with AssertGrace to become true.
type Assert struct {
	Condition Condition
}

// Wait pauses.
type Wait struct {
	Duration time.Duration
}

// Snapshot compares a capture with the named baseline.
//
// Name, MaxMismatch and CropOn are Argent's. The rest are this project's
// additions; a flow that leaves them out means what it means to Argent.
type Snapshot struct {
	Name        string    // a ValidName; it becomes part of the baseline file name
	MaxMismatch float64   // percent of pixels, DefaultMaxMismatch unless the file says
	CropOn      *Selector // compare only this element's frame, or nil

	// MaxMismatchSet tells that the file spelled maxMismatch out, so it
	// wins over the project's defaults (SnapshotDefaults).
	MaxMismatchSet bool
	// MaxDiffPixels is an absolute count of differing pixels allowed;
	// nil when the file leaves it to the defaults.
	MaxDiffPixels *int
	// Threshold is pixelmatch's colour threshold, 0..1; nil when the file
	// leaves it to the defaults (DefaultThreshold).
	Threshold *float64
	// Metric is the colour distance, one of SnapshotMetrics; empty when
	// the file leaves it to the defaults (yiq, pixelmatch 7's).
	Metric string
	// WindowSize, when set, makes the count the limits see pixelmatch 8's
	// windowed count: the most differing pixels in any N×N square.
	WindowSize *int
	// Mask paints each match of each selector with MaskColor in the
	// capture that is compared and stored.
	Mask []*Selector
	// MaskColor is "#RRGGBB"; empty means DefaultMaskColor.
	MaskColor string
	// Hide makes each match of each selector visibility: hidden for the
	// capture only.
	Hide []*Selector
	// Ignore leaves the box of each match of each selector out of the
	// comparison, found at the capture; IgnoreRegions leaves out
	// rectangles of the capture. Neither paints: the capture and the
	// baseline keep those pixels.
	Ignore        []*Selector
	IgnoreRegions []Rect
	// FullPage captures the whole scrollable page instead of the
	// viewport; its baseline key has its own form (snapshot.FullPageKey).
	FullPage bool
	// Style is CSS applied for the capture only.
	Style string
	// StylePath is a CSS file, as written, relative to the flow file;
	// its content is applied as Style is (after it, when both are set).
	StylePath string
	// StopOnFailure, when true, makes a failed comparison stop the flow
	// as Argent does; false lets the flow go on to compare its later
	// snapshots and fail at its end (on chromium-cdp-* devices). nil
	// leaves it to the project's default (SnapshotDefaults), else false.
	StopOnFailure *bool
}

// DefaultMaskColor paints a mask, as Playwright's maskColor default.
const DefaultMaskColor = "#FF00FF"

// SnapshotDefaults are a project's limits for every snapshot that does
// not set its own: from .argent/toolserver.yaml, then overridden by the
// flags of flow run. A nil field is not set at that level.
type SnapshotDefaults struct {
	MaxMismatch   *float64 `json:"maxMismatch,omitempty" yaml:"maxMismatch,omitempty"`
	MaxDiffPixels *int     `json:"maxDiffPixels,omitempty" yaml:"maxDiffPixels,omitempty"`
	Threshold     *float64 `json:"threshold,omitempty" yaml:"threshold,omitempty"`
	Metric        *string  `json:"metric,omitempty" yaml:"metric,omitempty"`
	WindowSize    *int     `json:"windowSize,omitempty" yaml:"windowSize,omitempty"`
	// StopOnFailure is the project's stopOnFailure for the snapshots
	// that do not set their own; it is no limit, so it has no source.
	StopOnFailure *bool `json:"stopOnFailure,omitempty" yaml:"stopOnFailure,omitempty"`
	// Sources name where each set field came from, for the report:
	// "flag --max-mismatch", ".argent/toolserver.yaml". Keyed by the JSON
	// field name.
	Sources map[string]string `json:"-" yaml:"-"`
}

// Run runs another flow file inline.
type Run struct {
	// Target is the path exactly as the YAML spells it ("login",
	// "../shared/login.yaml"); the link keys members by it.
	Target string
}

// File returns Target with ".yaml" appended when the file left it off, as
// Argent completes it ("login" becomes "login.yaml").
func (r *Run) File() string {
	if strings.HasSuffix(r.Target, ".yaml") {
		return r.Target
	}
	return r.Target + ".yaml"
}

// Name returns the fragment's flow name: the base name of File without
// ".yaml", which the runner reports its steps under.
func (r *Run) Name() string { return strings.TrimSuffix(path.Base(r.File()), ".yaml") }

// When runs Steps only when Condition holds; it has no else.
type When struct {
	Condition Condition // a UI condition or CondPlatform; never idle
	Steps     []*Step
}

// Echo prints a message in the report.
type Echo struct {
	Message string
}

// Tool calls any tool of the server.
type Tool struct {
	Name string
	// Args are the YAML args: decoded to JSON-compatible values (string,
	// bool, int, float64, nil, []any, map[string]any); empty, not nil, when
	// the step has none.
	Args map[string]any
	// ArgsLine is the YAML line of args:, 0 when absent.
	ArgsLine int
	// ArgLines maps each top-level argument name to its YAML line, for
	// messages about one argument ("argument flow_path of flow-execute").
	ArgLines map[string]int
	// Delay is the delayMs: pause after the call; 0 when absent.
	Delay time.Duration
}

// Script runs a local .mjs file on the tool-server host.
type Script struct {
	Path    string        // relative to the flow file, as written
	Timeout time.Duration // 0 means the runner's default
}

// Pinch is parsed for compatibility and rejected on Chromium.
type Pinch struct {
	On    *Selector // nil pinches around the viewport centre
	Scale float64
}

// Rotate is parsed for compatibility and rejected on Chromium.
type Rotate struct {
	On *Selector
	By float64 // degrees, clockwise positive
}

func (*Launch) directive()    {}
func (*Tap) directive()       {}
func (*LongPress) directive() {}
func (*Type) directive()      {}
func (*ScrollTo) directive()  {}
func (*Await) directive()     {}
func (*Assert) directive()    {}
func (*Wait) directive()      {}
func (*Snapshot) directive()  {}
func (*Run) directive()       {}
func (*When) directive()      {}
func (*Echo) directive()      {}
func (*Tool) directive()      {}
func (*Script) directive()    {}
func (*Pinch) directive()     {}
func (*Rotate) directive()    {}

// Kind implements Directive.
func (*Launch) Kind() Kind { return KindLaunch }

// Kind implements Directive.
func (*Tap) Kind() Kind { return KindTap }

// Kind implements Directive.
func (*LongPress) Kind() Kind { return KindLongPress }

// Kind implements Directive.
func (*Type) Kind() Kind { return KindType }

// Kind implements Directive.
func (*ScrollTo) Kind() Kind { return KindScrollTo }

// Kind implements Directive.
func (*Await) Kind() Kind { return KindAwait }

// Kind implements Directive.
func (*Assert) Kind() Kind { return KindAssert }

// Kind implements Directive.
func (*Wait) Kind() Kind { return KindWait }

// Kind implements Directive.
func (*Snapshot) Kind() Kind { return KindSnapshot }

// Kind implements Directive.
func (*Run) Kind() Kind { return KindRun }

// Kind implements Directive.
func (*When) Kind() Kind { return KindWhen }

// Kind implements Directive.
func (*Echo) Kind() Kind { return KindEcho }

// Kind implements Directive.
func (*Tool) Kind() Kind { return KindTool }

// Kind implements Directive.
func (*Script) Kind() Kind { return KindScript }

// Kind implements Directive.
func (*Pinch) Kind() Kind { return KindPinch }

// Kind implements Directive.
func (*Rotate) Kind() Kind { return KindRotate }

// validName is Argent's FLOW_NAME_PATTERN: a flow or snapshot name becomes a
// path segment, so it may hold no separator, no dot and no space.
var validName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9_-]+$`) })

// ValidName reports whether name is a valid flow (or snapshot) name: one or
// more letters, digits, '_' or '-'.
func ValidName(name string) bool { return validName().MatchString(name) }

// ValidFileName reports whether base is a flow file name: a valid flow
// name and ".yaml", case-sensitively. A recording's savedTo, a run:
// target and a case-folded spelling's addressable all use it.
func ValidFileName(base string) bool {
	stem, ok := strings.CutSuffix(base, ".yaml")
	return ok && ValidName(stem)
}

// Walk calls fn for every step in document order, descending into when:
// blocks; depth is the number of enclosing when: blocks. Walk stops as soon
// as fn returns false, and reports whether it visited every step.
func (f *Flow) Walk(fn func(step *Step, depth int) bool) bool {
	return walkSteps(f.Steps, 0, fn)
}

func walkSteps(steps []*Step, depth int, fn func(*Step, int) bool) bool {
	for _, s := range steps {
		if !fn(s, depth) {
			return false
		}
		if w, ok := s.Directive.(*When); ok && !walkSteps(w.Steps, depth+1, fn) {
			return false
		}
	}
	return true
}

// All iterates over every step in document order, when: blocks included.
func (f *Flow) All() iter.Seq[*Step] {
	return func(yield func(*Step) bool) {
		f.Walk(func(s *Step, _ int) bool { return yield(s) })
	}
}

// Leading returns the step that decides whether the flow is end-to-end: the
// first step that is not an echo: or a script: (Argent's
// precedesLeadingLaunch — narration and host-side setup may come before the
// launch). It returns nil for a flow of only such steps.
func (f *Flow) Leading() *Step {
	for _, s := range f.Steps {
		switch s.Directive.(type) {
		case *Echo, *Script:
			continue
		}
		return s
	}
	return nil
}

// IsEndToEnd reports whether the flow starts by launching its app; every
// other flow is a fragment.
func (f *Flow) IsEndToEnd() bool {
	s := f.Leading()
	return s != nil && s.Kind() == KindLaunch
}

// RunTarget is one run: step found by RunTargets.
type RunTarget struct {
	Step   *Step
	Target string // as written; see Run.File for the completed spelling
}

// RunTargets returns every run: target in all steps and all when: blocks, in
// document order (docs/link-protocol.md, "Members": a client reads them all, a
// run: in a when: block that will not run included).
func (f *Flow) RunTargets() []RunTarget {
	var out []RunTarget
	for s := range f.All() {
		if r, ok := s.Directive.(*Run); ok {
			out = append(out, RunTarget{Step: s, Target: r.Target})
		}
	}
	return out
}

// SnapshotNames returns the name of every snapshot: step, in document order
// without repeats; the link sends the baselines <name>__*.png of these names.
func (f *Flow) SnapshotNames() []string {
	var out []string
	seen := map[string]bool{}
	for s := range f.All() {
		if sn, ok := s.Directive.(*Snapshot); ok && !seen[sn.Name] {
			seen[sn.Name] = true
			out = append(out, sn.Name)
		}
	}
	return out
}

// ToolStep is one tool: step found by ToolSteps.
type ToolStep struct {
	Step *Step
	Tool *Tool
}

// ToolSteps returns every tool: step, in all when: blocks, in document order.
func (f *Flow) ToolSteps() []ToolStep {
	var out []ToolStep
	for s := range f.All() {
		if t, ok := s.Directive.(*Tool); ok {
			out = append(out, ToolStep{Step: s, Tool: t})
		}
	}
	return out
}

// NestedFlow is the flow a flow-execute call names: a tool: step's (found
// by NestedFlows), or a recorded step's. A string field is "" when the
// argument is absent or not a string.
type NestedFlow struct {
	Step            *Step // the tool: step; nil for a recorded step's
	Name            string
	ProjectRoot     string
	FlowPath        string
	UpdateBaselines *bool // nil when absent or not a bool
	// PrerequisiteAcknowledged is the step's prerequisiteAcknowledged:
	// true, which a nested flow with an execution prerequisite needs.
	PrerequisiteAcknowledged bool
}

// NestedOf reads the flow a flow-execute call's arguments name (wire's
// ExecuteArgs, as YAML or a client's map holds them).
func NestedOf(args map[string]any) NestedFlow {
	a := wire.StepArgs(args)
	return NestedFlow{Name: a.Name, ProjectRoot: a.ProjectRoot, FlowPath: a.FlowPath,
		UpdateBaselines: a.UpdateBaselines, PrerequisiteAcknowledged: a.PrerequisiteAcknowledged}
}

// InvalidName is the refusal of a flow name that is not letters, digits,
// _ and -, as Argent's tools word it.
func InvalidName(name string) string {
	return fmt.Sprintf("Invalid flow name %q. Flow names must match /^[A-Za-z0-9_-]+$/ (letters, digits, underscore, hyphen — no path separators, no \"..\", no spaces).", name)
}

// Target is where the nested flow's file is: the name a run gives it, the
// directory and the file to open there; msg is the step's error when the
// arguments name no flow it may run. It is the one rule of a nested
// flow's reference: exactly one of name and flow_path; a valid name under
// an absolute project_root without a ".." segment; or an absolute
// flow_path without one, which only a run of this machine's files
// (linked false) may follow.
func (n NestedFlow) Target(linked bool) (name, dir, file, msg string) {
	switch {
	case (n.Name == "") == (n.FlowPath == ""):
		return "", "", "", "Pass exactly one flow source: name or flow_path."
	case n.FlowPath != "":
		if linked || !clientpath.IsAbs(n.FlowPath) || clientpath.HasDotDot(n.FlowPath) {
			return "", "", "", fmt.Sprintf("Invalid flow_path %q: a nested flow-execute names its flow with name and an absolute project_root; flow_path must be an absolute path without \"..\" and works only in a local run", n.FlowPath)
		}
		return strings.TrimSuffix(path.Base(n.FlowPath), ".yaml"), clientpath.Dir(n.FlowPath), clientpath.Base(n.FlowPath), ""
	case !ValidName(n.Name):
		return "", "", "", InvalidName(n.Name)
	case !clientpath.IsAbs(n.ProjectRoot) || clientpath.HasDotDot(n.ProjectRoot):
		return "", "", "", fmt.Sprintf("project_root must be an absolute path without \"..\" segments (got %q)", n.ProjectRoot)
	}
	return n.Name, n.FlowsDir(), n.FileName(), ""
}

// Followable reports whether the step names its flow the way a client can
// follow (docs/link-protocol.md, "Members"): Target over a link, a valid
// name under an absolute project_root without a ".." segment. A
// flow-execute step that is not followable stops a run over a link before
// its first step.
func (n NestedFlow) Followable() bool {
	_, _, _, msg := n.Target(true)
	return msg == ""
}

// FlowsDir returns <project_root>/.argent/flows, the directory half of the
// nested flow's member key.
func (n NestedFlow) FlowsDir() string {
	return clientpath.FlowsDir(n.ProjectRoot)
}

// FileName returns <name>.yaml, the target half of the nested flow's member key.
func (n NestedFlow) FileName() string { return n.Name + ".yaml" }

// NestedFlows returns every tool: flow-execute step, in all when: blocks, in
// document order.
func (f *Flow) NestedFlows() []NestedFlow {
	var out []NestedFlow
	for _, ts := range f.ToolSteps() {
		if ts.Tool.Name != ToolFlowExecute {
			continue
		}
		n := NestedOf(ts.Tool.Args)
		n.Step = ts.Step
		out = append(out, n)
	}
	return out
}

var schemeRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z][A-Za-z0-9+.-]*:`) })

// IsLaunchURL reports whether a launch: target is a URL (it has a scheme)
// rather than a file path; a Windows drive path such as C:\site\a.html is
// a path. Only a local run can open a path, beside the flow file.
func IsLaunchURL(t string) bool {
	return schemeRE().MatchString(t) && !(len(t) > 2 && t[1] == ':' && (t[2] == '\\' || t[2] == '/') && !strings.Contains(t, "://"))
}
