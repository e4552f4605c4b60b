package flow

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/toolserver/toolserver/internal/clientfs"
	"github.com/toolserver/toolserver/internal/clientpath"
	"github.com/toolserver/toolserver/link/wire"
)

// Options configure a run.
type Options struct {
	Device Device
	Source Source
	// Tools calls the server's tools for tool: steps; nil rejects them.
	Tools     ToolCaller
	Artifacts ArtifactSink
	// UpdateBaselines adopts the current screens instead of comparing.
	UpdateBaselines bool
	// Platform is the device platform when: { platform } compares with.
	Platform string
	// Linked marks a run over a link: files are members, launch paths must
	// be URLs, and baselines are kept for the result instead of written.
	Linked bool
	// Secret fills {{secret:NAME}}; nil reads ARGENT_SECRET_<NAME>, then
	// <NAME>, from the environment.
	Secret func(name string) (string, bool)
	// Progress receives each step report as it finishes.
	Progress func(StepReport)
	// MaxCaptures bounds the captures of one snapshot (default 5).
	MaxCaptures int
	// Snapshot holds the project's snapshot limits (config file, then
	// flags) for the snapshots that do not set their own.
	Snapshot SnapshotDefaults
	// Strict makes a selector that matches several elements fail the
	// step, and equals:/contains: compare case (Playwright's strict mode).
	Strict bool
	// StepTimeout, when set, bounds every step instead of its own timeout
	// plus 30 s of slack.
	StepTimeout time.Duration
}

// Runner runs one call: a flow, its fragments and nested flows, into one
// report.
type Runner struct {
	opts    Options
	rep     *Report
	stopped bool
	// ended tells that the report takes no more lines: the line that
	// says the run was aborted, or that it reached MaxRunSteps, is its
	// last. A client that went away needs no line per step it left.
	ended bool
	// written holds the baselines this call wrote, so a later step (also
	// in another nested run) compares against them.
	written map[string][]byte
	// stack holds the canonical paths of the files being run, root first,
	// with their display names, for cycle detection and messages.
	stack    []string
	displays []string
	started  time.Time
	// secretsUsed are the secrets filled so far, redacted from reports.
	secretsUsed []usedSecret
}

// runScope is one run: the flow the call names, or a nested flow-execute.
type runScope struct {
	name        string // the report's flow name of the run
	baselineDir string
	update      bool
}

// frame is one file being run: the root of a scope or a run: fragment.
type frame struct {
	file    *File
	flow    *Flow
	display string
	depth   int
	scope   *runScope
}

// Entry is the flow a call names.
type Entry struct {
	File *File
	// Name is the report's flow name (the name argument, or the file's
	// stem for a path).
	Name string
	// StemFallback keys the baselines when the canonical's stem is not a
	// valid flow name: the stem of the path as the caller spelled it.
	StemFallback string
}

// Prepare parses the entry and checks what stops a run before its first
// step: a missing or refused file, a case-folded spelling, a parse error.
func Prepare(e Entry) (*Flow, error) {
	f := e.File
	if f.Spelling.State == wire.SpellCaseFolded {
		return nil, caseFoldedNameError(strings.TrimSuffix(clientpath.Base(f.Path), ".yaml"), f.Spelling)
	}
	if f.Err != nil {
		return nil, openError(f)
	}
	return Parse(f.Canonical, f.Data)
}

// openError renders a file that has no bytes as Node does, as clients
// expect: ENOENT: no such file or directory, open '<canonical>'.
func openError(f *File) error {
	var refused *RefusedError
	switch {
	case errors.As(f.Err, &refused):
		return refused
	case IsMissing(f.Err):
		return &OpenError{Path: f.Canonical, Err: f.Err}
	}
	return f.Err
}

// OpenError is a flow file that is not there.
type OpenError struct {
	Path string
	Err  error
}

func (e *OpenError) Error() string { return clientfs.NotFoundText(e.Path) }

func (e *OpenError) Unwrap() error { return e.Err }

// caseFoldedNameError is the message of a flow named with another case
// than its file has.
func caseFoldedNameError(name string, sp wire.Spelling) error {
	tail := fmt.Sprintf("Pass name %q.", strings.TrimSuffix(sp.Actual, ".yaml"))
	if sp.Addressable == nil || !*sp.Addressable {
		tail = fmt.Sprintf("Rename %q to %q to run it — flow files must be lowercase .yaml.", sp.Actual, name+".yaml")
	}
	return &NameError{Msg: fmt.Sprintf("Invalid flow name %q: no saved flow is named %q — this filesystem matched it case-insensitively to %q, so the flow name (which keys the report and __baselines__/) would be one no directory entry carries. %s", name, name+".yaml", sp.Actual, tail)}
}

// NameError is an invalid or mis-cased flow name.
type NameError struct{ Msg string }

func (e *NameError) Error() string { return e.Msg }

// Execute runs the entry flow and returns its report. An error means the flow
// was rejected before its first step (see Prepare, and a run: fan-out that
// could pass MaxRunSteps); a failing step is in the report, not an error.
func Execute(ctx context.Context, opts Options, e Entry) (*Report, error) {
	fl, err := Prepare(e)
	if err != nil {
		return nil, err
	}
	if opts.Platform == "" {
		opts.Platform = "chromium"
	}
	if opts.MaxCaptures <= 0 {
		opts.MaxCaptures = 5
	}
	r := &Runner{opts: opts, written: map[string][]byte{}, started: time.Now()}
	r.rep = &Report{Flow: e.Name, ExecutionPrerequisite: fl.ExecutionPrerequisite, StartedAt: r.started.UnixMilli(), Steps: []StepReport{}}
	if opts.Device != nil {
		r.rep.Device = opts.Device.ID()
	}
	sc := &runScope{name: e.Name, baselineDir: baselineDir(e.File.Canonical, e.StemFallback), update: opts.UpdateBaselines}
	fr := &frame{file: e.File, flow: fl, display: e.Name, scope: sc}
	if err := r.checkFanOut(fr); err != nil {
		return nil, err
	}
	r.runFile(ctx, fr)
	r.rep.DurationMs = ms(time.Since(r.started))
	r.rep.OK = r.rep.Failed == 0 && r.rep.Errored == 0 && !r.rep.Aborted
	return r.rep, nil
}

func (r *Runner) runFile(ctx context.Context, fr *frame) {
	r.stack = append(r.stack, fr.file.Canonical)
	r.displays = append(r.displays, fr.display)
	defer func() {
		r.stack = r.stack[:len(r.stack)-1]
		r.displays = r.displays[:len(r.displays)-1]
	}()
	r.steps(ctx, fr, fr.flow.Steps, fr.depth)
}

func (r *Runner) steps(ctx context.Context, fr *frame, steps []*Step, depth int) {
	for _, s := range steps {
		if r.ended {
			return
		}
		if len(r.rep.Steps) >= MaxRunSteps {
			// The authoritative bound: Execute counted the run's fan-out
			// before its first step, but a fragment can change on disk
			// while the run goes on.
			r.emit(r.base(fr, s, depth))
			return
		}
		if r.stopped || r.rep.Aborted {
			r.skip(fr, s, depth)
			continue
		}
		if ctx.Err() != nil {
			r.rep.Aborted = true
			r.skip(fr, s, depth)
			continue
		}
		r.step(ctx, fr, s, depth)
	}
}

// skip reports a step that will not run: after a stop with no reason,
// after an abort with "run aborted" (and nothing after that line); a
// when: block lists its steps, a run: stays one line.
func (r *Runner) skip(fr *frame, s *Step, depth int) {
	if r.ended {
		return
	}
	reason := ""
	if r.rep.Aborted {
		reason = "run aborted"
	}
	sr := r.base(fr, s, depth)
	sr.Status, sr.Reason = StatusSkip, reason
	r.emit(sr)
	if w, ok := s.Directive.(*When); ok {
		for _, in := range w.Steps {
			r.skip(fr, in, depth+1)
		}
	}
}

// base is the report line of s before it runs.
func (r *Runner) base(fr *frame, s *Step, depth int) StepReport {
	sr := StepReport{Kind: string(s.Kind()), Flow: fr.display, Depth: depth, Line: s.Line, Target: target(s)}
	switch d := s.Directive.(type) {
	case *Echo:
		sr.Message = d.Message
	case *Tool:
		sr.Tool = d.Name
	case *Await:
		if d.Condition.Kind == CondIdle {
			sr.Kind = "idle"
		}
	case *Run:
		sr.Flow = r.displayFor(d)
	}
	return sr
}

// emit finishes a report line: index, totals, progress. Once the report
// has ended it drops the line; the line past MaxRunSteps becomes the one
// that says the run reached it, and ends the report.
func (r *Runner) emit(sr StepReport) {
	if r.ended {
		return
	}
	if len(r.rep.Steps) >= MaxRunSteps {
		sr = stepLimitLine(sr)
		r.ended = true
	}
	sr.Index = len(r.rep.Steps)
	r.rep.Steps = append(r.rep.Steps, sr)
	r.rep.count(sr)
	if sr.Status == StatusFail || sr.Status == StatusError {
		r.stopped = true
	}
	if r.rep.Aborted {
		// This line says the run was aborted (a step cut short, or the
		// first one that did not start): the steps after it stay out.
		r.ended = true
	}
	if r.opts.Progress != nil {
		r.opts.Progress(sr)
	}
}

// stepLimitLine turns the line of the step that would pass MaxRunSteps
// into the error that ends the run. An echo's line keeps its kind and
// carries the reason as its message, since an echo line shows only that.
func stepLimitLine(sr StepReport) StepReport {
	out := StepReport{Kind: sr.Kind, Flow: sr.Flow, Depth: sr.Depth, Line: sr.Line, Target: sr.Target, Tool: sr.Tool, Status: StatusError}
	out.Reason = fmt.Sprintf("the run reached its limit of %d steps (the steps of its run: fragments, nested flows and when: blocks count): this step and every later one did not run", MaxRunSteps)
	if out.Kind == string(KindEcho) {
		out.Message = out.Reason
	}
	out.setErr(ErrTooManySteps)
	return out
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// step runs one step and reports it.
func (r *Runner) step(ctx context.Context, fr *frame, s *Step, depth int) {
	sr := r.base(fr, s, depth)
	start := time.Now()
	switch d := s.Directive.(type) {
	case *When:
		r.when(ctx, fr, s, d, sr, depth)
		return
	case *Run:
		r.runFragment(ctx, fr, d, sr, depth)
		return
	case *Tool:
		if d.Name == ToolFlowExecute {
			r.nested(ctx, fr, s, d, sr, depth)
			return
		}
	}
	budget := stepBudget(s)
	if r.opts.StepTimeout > 0 {
		budget = r.opts.StepTimeout
	}
	sctx, cancel := context.WithTimeout(ctx, budget)
	res := r.leaf(sctx, fr, s)
	timedOut := errors.Is(sctx.Err(), context.DeadlineExceeded)
	cancel()
	if res.status == "" {
		res.status = StatusPass
	}
	if ctx.Err() == nil && timedOut && res.status != StatusPass {
		// The page stopped answering (a script that never returns, a
		// renderer that hung): the run goes on to its end, never hangs.
		res = errored("the step did not finish within %s: the page stopped answering (a script that never returns?)", budget)
	}
	if ctx.Err() != nil && res.status != StatusPass {
		r.rep.Aborted = true
		res = outcome{status: StatusSkip, reason: "run aborted"}
		if _, ok := s.Directive.(*Wait); ok {
			res.reason = "run aborted during wait"
		}
	}
	sr.Status, sr.Reason, sr.Warning = res.status, r.redact(res.reason), r.redact(res.warning)
	sr.Artifacts, sr.Result, sr.SnapshotKey, sr.Mismatch, sr.ScriptLog = res.artifacts, res.result, res.snapshotKey, res.mismatch, res.scriptLog
	sr.Baseline = res.baseline
	sr.Captures = res.captures
	sr.Element = res.element
	if res.status == StatusFail || res.status == StatusError {
		sr.setErr(res.err)
	}
	sr.DurationMs = ms(time.Since(start))
	r.emit(sr)
}

// stepSlack is what a step may take beyond its own timeout before the
// runner gives up on it.
const stepSlack = 30 * time.Second

// stepBudget bounds one step: its own timeout or duration, plus slack.
func stepBudget(s *Step) time.Duration {
	base := DefaultAwaitTimeout
	switch d := s.Directive.(type) {
	case *Await:
		base = max(base, d.Timeout)
	case *Wait:
		base = max(base, d.Duration)
	case *LongPress:
		base += d.Duration
	case *Script:
		base = max(base, d.Timeout, 60*time.Second)
	case *Tool:
		// A tool runs as long as it needs (an await tool has its own
		// timeout); give it generous room, and the delay after it.
		base = 10*time.Minute + d.Delay
	}
	return base + stepSlack
}

// outcome is what a leaf step produced.
type outcome struct {
	status, reason, warning string
	artifacts               map[string]Artifact
	result                  json.RawMessage
	snapshotKey             string
	baseline                *SnapshotBaseline
	mismatch                *Mismatch
	scriptLog               string
	// captures counts a snapshot step's captures.
	captures int
	// element is what a step that acts on an element acted on.
	element *StepElement
	// err is the error behind a fail or error status, kept typed for
	// StepReport.Err: a dead browser must stay told apart from a failed
	// assertion after its text went into reason.
	err error
}

// fail is a step that failed; the first error among a, if any, is kept as
// its cause, so a reason formatted from an error stays typed.
func fail(format string, a ...any) outcome {
	return outcome{status: StatusFail, reason: fmt.Sprintf(format, a...), err: cause(a)}
}

// errored is a step that could not run; it keeps its cause as fail does.
func errored(format string, a ...any) outcome {
	return outcome{status: StatusError, reason: fmt.Sprintf(format, a...), err: cause(a)}
}

// cause returns the first error among the arguments of a reason.
func cause(a []any) error {
	for _, v := range a {
		if err, ok := v.(error); ok {
			return err
		}
	}
	return nil
}

// when runs a when: block: a marker line, then its steps (run, or skipped
// when the guard does not hold).
func (r *Runner) when(ctx context.Context, fr *frame, s *Step, w *When, sr StepReport, depth int) {
	start := time.Now()
	label := w.Condition.String()
	met := false
	if w.Condition.Kind == CondPlatform {
		met = strings.EqualFold(w.Condition.Platform, r.opts.Platform)
	} else {
		if r.opts.Device == nil {
			sr.Status, sr.Reason = StatusError, fmt.Sprintf("could not evaluate when guard (%s): no device", label)
			r.emit(sr)
			r.skipBlock(fr, w, depth, "when guard errored")
			return
		}
		out, err := r.opts.Device.Check(ctx, r.condition(w.Condition), AssertGrace)
		if err != nil {
			if ctx.Err() != nil {
				r.rep.Aborted = true
				sr.Status, sr.Reason = StatusSkip, "run aborted"
				r.emit(sr)
				r.skipBlock(fr, w, depth, "run aborted")
				return
			}
			sr.Status, sr.Reason = StatusError, fmt.Sprintf("could not evaluate when guard (%s): %v", label, err)
			sr.setErr(err)
			sr.DurationMs = ms(time.Since(start))
			r.emit(sr)
			r.skipBlock(fr, w, depth, "when guard errored")
			return
		}
		met = out.OK
	}
	sr.DurationMs = ms(time.Since(start))
	if !met {
		sr.Status = StatusSkip
		sr.Reason = fmt.Sprintf("condition not met (%s) — block skipped (%s)", label, plural(len(w.Steps), "step"))
		r.emit(sr)
		r.skipBlock(fr, w, depth, "when block skipped")
		return
	}
	sr.Status, sr.Reason = StatusPass, fmt.Sprintf("condition met (%s)", label)
	r.emit(sr)
	r.steps(ctx, fr, w.Steps, depth+1)
}

func (r *Runner) skipBlock(fr *frame, w *When, depth int, reason string) {
	for _, in := range w.Steps {
		if r.ended {
			return
		}
		sr := r.base(fr, in, depth+1)
		sr.Status, sr.Reason = StatusSkip, reason
		r.emit(sr)
		if inner, ok := in.Directive.(*When); ok {
			r.skipBlock(fr, inner, depth+1, reason)
		}
	}
}

func plural(n int, word string) string {
	if n == 1 {
		return fmt.Sprintf("1 %s", word)
	}
	return fmt.Sprintf("%d %ss", n, word)
}
