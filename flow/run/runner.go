package run

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/toolserver/toolserver/fault"
	"github.com/toolserver/toolserver/flow"
	"github.com/toolserver/toolserver/wire"
)

// Options configure a run.
type Options struct {
	Device Device
	Source Source
	// Tools calls the server's tools for tool: steps; nil rejects them.
	Tools     ToolCaller
	Artifacts ArtifactSink
	// Update is which baselines the run adopts (UpdateAll, UpdateChanged,
	// UpdateMissing); UpdateNone compares.
	Update Update
	// UpdateBaselines is the older spelling of Update: UpdateAll.
	UpdateBaselines bool
	// Platform is the device platform when: { platform } compares with.
	Platform string
	// Linked marks a run over a link: files are members, launch paths must
	// be URLs, and baselines are kept for the result instead of written.
	Linked bool
	// BaseURL is what a launch: /path resolves against (flow run
	// --base-url, $TOOLSERVER_BASE_URL, baseURL: in the config file).
	BaseURL string
	// ClientFileURL, over a link whose client serves its files through
	// a tunnel (flow run --expose), is the URL a page opens the client's
	// file at (its path on the client): a launch: with a relative path
	// then opens the file beside its flow file. Nil over a link refuses
	// such a launch.
	ClientFileURL func(clientPath string) string
	// Secret fills {{secret:NAME}}; nil reads ARGENT_SECRET_<NAME>, then
	// <NAME>, from the environment.
	Secret func(name string) (string, bool)
	// Progress receives each step report as it finishes.
	Progress func(flow.StepReport)
	// MaxCaptures bounds the captures of one snapshot (default 5).
	MaxCaptures int
	// Snapshot holds the project's snapshot limits (config file, then
	// flags) for the snapshots that do not set their own.
	Snapshot flow.SnapshotDefaults
	// Strict makes a selector that matches several elements fail the
	// step, and equals:/contains: compare case (Playwright's strict mode).
	Strict bool
	// StepTimeout, when set, bounds every step instead of its own timeout
	// plus 30 s of slack.
	StepTimeout time.Duration
	// DryRun writes no baseline: Run records what it would write (Plan).
	DryRun bool
}

// Runner runs one call: a flow, its fragments and nested flows, into one
// report.
type Runner struct {
	opts    Options
	rep     *flow.Report
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
	// parsed holds the files this run parsed, by canonical path, so a
	// file is parsed once per run however often it is reached (the
	// fan-out count, a fragment run twice): Parse is pure, and a file
	// whose bytes changed since is parsed again.
	parsed map[string]parsedFile
}

// parsedFile is a file of the run as Parse left it.
type parsedFile struct {
	data []byte
	flow *flow.Flow
	err  error
}

// parse returns the flow of f, parsing it unless this run already parsed
// the same bytes at the same canonical path.
func (r *Runner) parse(f *flow.File) (*flow.Flow, error) {
	if p, ok := r.parsed[f.Canonical]; ok && bytes.Equal(p.data, f.Data) {
		return p.flow, p.err
	}
	fl, err := parseFlow(f.Canonical, f.Data)
	r.parsed[f.Canonical] = parsedFile{data: f.Data, flow: fl, err: err}
	return fl, err
}

// runScope is one run: the flow the call names, or a nested flow-execute.
type runScope struct {
	name        string // the report's flow name of the run
	baselineDir string
	update      Update
}

// frame is one file being run: the root of a scope or a run: fragment.
type frame struct {
	file    *flow.File
	flow    *flow.Flow
	display string
	depth   int
	scope   *runScope
}

// Entry is the flow a call names.
type Entry struct {
	File *flow.File
	// Name is the report's flow name (the name argument, or the file's
	// stem for a path).
	Name string
	// StemFallback keys the baselines when the canonical's stem is not a
	// valid flow name: the stem of the path as the caller spelled it.
	StemFallback string
}

// openError renders a file that has no bytes as Node does, as clients
// expect: ENOENT: no such file or directory, open '<canonical>'.
func openError(f *flow.File) error {
	var refused *flow.RefusedError
	switch {
	case errors.As(f.Err, &refused):
		return refused
	case flow.IsMissing(f.Err):
		return &flow.OpenError{Path: f.Canonical, Err: f.Err}
	}
	return f.Err
}

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

func (r *Runner) runFile(ctx context.Context, fr *frame) {
	r.stack = append(r.stack, fr.file.Canonical)
	r.displays = append(r.displays, fr.display)
	defer func() {
		r.stack = r.stack[:len(r.stack)-1]
		r.displays = r.displays[:len(r.displays)-1]
	}()
	r.steps(ctx, fr, fr.flow.Steps, fr.depth)
}

func (r *Runner) steps(ctx context.Context, fr *frame, steps []*flow.Step, depth int) {
	for _, s := range steps {
		if r.ended {
			return
		}
		if len(r.rep.Steps) >= flow.MaxRunSteps {
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
func (r *Runner) skip(fr *frame, s *flow.Step, depth int) {
	if r.ended {
		return
	}
	reason := ""
	if r.rep.Aborted {
		reason = "run aborted"
	}
	sr := r.base(fr, s, depth)
	sr.Status, sr.Reason = flow.StatusSkip, reason
	r.emit(sr)
	if w, ok := s.Directive.(*flow.When); ok {
		for _, in := range w.Steps {
			r.skip(fr, in, depth+1)
		}
	}
}

// base is the report line of s before it runs.
func (r *Runner) base(fr *frame, s *flow.Step, depth int) flow.StepReport {
	sr := flow.StepReport{Kind: string(s.Kind()), Flow: fr.display, Depth: depth, Line: s.Line, Target: flow.Target(s)}
	switch d := s.Directive.(type) {
	case *flow.Echo:
		sr.Message = d.Message
	case *flow.Tool:
		sr.Tool = d.Name
	case *flow.Await:
		if d.Condition.Kind == flow.CondIdle {
			sr.Kind = "idle"
		}
	case *flow.Run:
		sr.Flow = r.displayFor(d)
	}
	return sr
}

// emit finishes a report line: index, totals, progress. Once the report
// has ended it drops the line; the line past MaxRunSteps becomes the one
// that says the run reached it, and ends the report. A failed line stops
// the run.
func (r *Runner) emit(sr flow.StepReport) { r.record(sr, true) }

// record is emit, where a failed line stops the run only when stops says
// so (a snapshot's mismatch lets it go on: goesOn).
func (r *Runner) record(sr flow.StepReport, stops bool) {
	if r.ended {
		return
	}
	if len(r.rep.Steps) >= flow.MaxRunSteps {
		sr = stepLimitLine(sr)
		r.ended = true
	}
	sr.Index = len(r.rep.Steps)
	r.rep.Steps = append(r.rep.Steps, sr)
	count(r.rep, sr)
	if sr.Status == flow.StatusError || sr.Status == flow.StatusFail && stops {
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
func stepLimitLine(sr flow.StepReport) flow.StepReport {
	out := flow.StepReport{Kind: sr.Kind, Flow: sr.Flow, Depth: sr.Depth, Line: sr.Line, Target: sr.Target, Tool: sr.Tool, Status: flow.StatusError}
	out.Reason = fmt.Sprintf("the run reached its limit of %d steps (the steps of its run: fragments, nested flows and when: blocks count): this step and every later one did not run", flow.MaxRunSteps)
	if out.Kind == string(flow.KindEcho) {
		out.Message = out.Reason
	}
	setErr(&out, flow.ErrTooManySteps)
	return out
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// step runs one step and reports it.
func (r *Runner) step(ctx context.Context, fr *frame, s *flow.Step, depth int) {
	sr := r.base(fr, s, depth)
	start := time.Now()
	switch d := s.Directive.(type) {
	case *flow.When:
		r.when(ctx, fr, s, d, sr, depth)
		return
	case *flow.Run:
		r.runFragment(ctx, fr, d, sr, depth)
		return
	case *flow.Tool:
		if d.Name == flow.ToolFlowExecute {
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
		res.status = flow.StatusPass
	}
	if ctx.Err() == nil && timedOut && res.status != flow.StatusPass {
		// The page stopped answering (a script that never returns, a
		// renderer that hung): the run goes on to its end, never hangs.
		res = errored("the step did not finish within %s: the page stopped answering (a script that never returns?)", budget)
	}
	if ctx.Err() != nil && res.status != flow.StatusPass {
		r.rep.Aborted = true
		res = outcome{status: flow.StatusSkip, reason: "run aborted"}
		if _, ok := s.Directive.(*flow.Wait); ok {
			res.reason = "run aborted during wait"
		}
	}
	sr.Status, sr.Reason, sr.Warning = res.status, r.redact(res.reason), r.redact(res.warning)
	sr.Artifacts, sr.Result, sr.SnapshotKey, sr.Mismatch, sr.ScriptLog = res.artifacts, res.result, res.snapshotKey, res.mismatch, res.scriptLog
	sr.Baseline = res.baseline
	sr.Captures, sr.Ignored = res.captures, res.ignored
	sr.Element = res.element
	if res.status == flow.StatusFail || res.status == flow.StatusError {
		setErr(&sr, res.err)
	}
	sr.DurationMs = ms(time.Since(start))
	r.record(sr, !r.goesOn(s, res))
}

// goesOn tells that a failed step lets the flow go on: a snapshot whose
// comparison failed (a mismatch, a size change, no baseline: it has a
// key) on a chromium-cdp-* device, unless the step or the project's
// default says stopOnFailure: true. Its later snapshots are compared too
// and the flow fails at its end (docs/snapshots.md, "Every changed
// snapshot in one run"); a failed step of any other kind stops it.
func (r *Runner) goesOn(s *flow.Step, res outcome) bool {
	d, ok := s.Directive.(*flow.Snapshot)
	if !ok || res.status != flow.StatusFail || res.snapshotKey == "" || r.opts.Device == nil || !strings.HasPrefix(r.opts.Device.ID(), chromiumDevice) {
		return false
	}
	stop := r.opts.Snapshot.StopOnFailure
	if d.StopOnFailure != nil {
		stop = d.StopOnFailure
	}
	return stop == nil || !*stop
}

// stepSlack is what a step may take beyond its own timeout before the
// runner gives up on it.
const stepSlack = 30 * time.Second

// stepBudget bounds one step: its own timeout or duration, plus slack.
func stepBudget(s *flow.Step) time.Duration {
	base := flow.DefaultAwaitTimeout
	switch d := s.Directive.(type) {
	case *flow.Await:
		base = max(base, d.Timeout)
	case *flow.Wait:
		base = max(base, d.Duration)
	case *flow.LongPress:
		base += d.Duration
	case *flow.Script:
		base = max(base, d.Timeout, 60*time.Second)
	case *flow.Tool:
		// A tool runs as long as it needs (an await tool has its own
		// timeout); give it generous room, and the delay after it.
		base = 10*time.Minute + d.Delay
	}
	return base + stepSlack
}

// outcome is what a leaf step produced.
type outcome struct {
	status, reason, warning string
	artifacts               map[string]flow.Artifact
	result                  json.RawMessage
	snapshotKey             string
	baseline                *flow.SnapshotBaseline
	mismatch                *flow.Mismatch
	scriptLog               string
	// captures counts a snapshot step's captures; ignored are the
	// rectangles its comparison left out.
	captures int
	ignored  []flow.Rect
	// element is what a step that acts on an element acted on.
	element *flow.StepElement
	// err is the error behind a fail or error status, kept typed for
	// StepReport.Err: a dead browser must stay told apart from a failed
	// assertion after its text went into reason.
	err error
}

// fail is a step that failed; the first error among a, if any, is kept as
// its cause, so a reason formatted from an error stays typed.
func fail(format string, a ...any) outcome {
	return outcome{status: flow.StatusFail, reason: fmt.Sprintf(format, a...), err: cause(a)}
}

// errored is a step that could not run; it keeps its cause as fail does.
func errored(format string, a ...any) outcome {
	return outcome{status: flow.StatusError, reason: fmt.Sprintf(format, a...), err: cause(a)}
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
func (r *Runner) when(ctx context.Context, fr *frame, s *flow.Step, w *flow.When, sr flow.StepReport, depth int) {
	start := time.Now()
	label := w.Condition.String()
	met := false
	if w.Condition.Kind == flow.CondPlatform {
		met = strings.EqualFold(w.Condition.Platform, r.opts.Platform)
	} else {
		if r.opts.Device == nil {
			sr.Status, sr.Reason = flow.StatusError, fmt.Sprintf("could not evaluate when guard (%s): no device", label)
			r.emit(sr)
			r.skipBlock(fr, w, depth, "when guard errored")
			return
		}
		out, err := r.opts.Device.Check(ctx, r.condition(w.Condition), flow.AssertGrace)
		if err != nil {
			if ctx.Err() != nil {
				r.rep.Aborted = true
				sr.Status, sr.Reason = flow.StatusSkip, "run aborted"
				r.emit(sr)
				r.skipBlock(fr, w, depth, "run aborted")
				return
			}
			sr.Status, sr.Reason = flow.StatusError, fmt.Sprintf("could not evaluate when guard (%s): %v", label, err)
			setErr(&sr, err)
			sr.DurationMs = ms(time.Since(start))
			r.emit(sr)
			r.skipBlock(fr, w, depth, "when guard errored")
			return
		}
		met = out.OK
	}
	sr.DurationMs = ms(time.Since(start))
	if !met {
		sr.Status = flow.StatusSkip
		sr.Reason = fmt.Sprintf("condition not met (%s) — block skipped (%s)", label, plural(len(w.Steps), "step"))
		r.emit(sr)
		r.skipBlock(fr, w, depth, "when block skipped")
		return
	}
	sr.Status, sr.Reason = flow.StatusPass, fmt.Sprintf("condition met (%s)", label)
	r.emit(sr)
	r.steps(ctx, fr, w.Steps, depth+1)
}

func (r *Runner) skipBlock(fr *frame, w *flow.When, depth int, reason string) {
	for _, in := range w.Steps {
		if r.ended {
			return
		}
		sr := r.base(fr, in, depth+1)
		sr.Status, sr.Reason = flow.StatusSkip, reason
		r.emit(sr)
		if inner, ok := in.Directive.(*flow.When); ok {
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

// setErr keeps the error behind a failed step, and marks the step when
// the machinery failed.
func setErr(s *flow.StepReport, err error) {
	s.Err = err
	s.Infrastructure = fault.IsInfrastructure(err)
}

// count adds a finished step to the totals; echo lines never count,
// except the error line that ends a run at MaxRunSteps, which may be an
// echo's.
func count(r *flow.Report, s flow.StepReport) {
	if s.Kind == string(flow.KindEcho) && s.Status != flow.StatusError {
		return
	}
	switch s.Status {
	case flow.StatusPass:
		r.Passed++
	case flow.StatusFail:
		r.Failed++
	case flow.StatusSkip:
		r.Skipped++
	default:
		r.Errored++
	}
}
