package run

import (
	"context"
	"strings"
	"time"

	"github.com/toolserver/toolserver/flow"
	"github.com/toolserver/toolserver/internal/clientpath"
	"github.com/toolserver/toolserver/wire"
)

// parseFlow is flow.Parse, the one parser of every file a run reads; the
// test that a run parses its own file once counts its calls.
var parseFlow = flow.Parse

// Prepared is the flow a call names, read and parsed: what Run takes, so
// a run parses its own file once, whoever asks for it.
type Prepared struct {
	Entry
	Flow *flow.Flow
}

// Prepare parses the entry and checks what stops a run before its first
// step: a missing or refused file, a case-folded spelling, a parse error.
func Prepare(e Entry) (*Prepared, error) {
	f := e.File
	if f.Spelling.State == wire.SpellCaseFolded {
		return nil, caseFoldedNameError(strings.TrimSuffix(clientpath.Base(f.Path), ".yaml"), f.Spelling)
	}
	if f.Err != nil {
		return nil, openError(f)
	}
	fl, err := parseFlow(f.Canonical, f.Data)
	if err != nil {
		return nil, err
	}
	return &Prepared{Entry: e, Flow: fl}, nil
}

// Run is the one flow run of the project: toolserver flow run on this
// machine and the flow-execute tool (for a local or a linked client) both
// call it with a prepared flow, each passing in what is its own (the
// device, the source of the files — the disk, or the members a linked
// client sent —, the tools, the limits). It returns the run's report; an
// error means the flow was rejected before its first step (a run: fan-out
// that could pass flow.MaxRunSteps); a failing step is in the report, not
// an error.
//
// With opts.DryRun no baseline is written: each adoption is recorded as a
// Plan instead, later steps compare with the capture it would have
// written, and the report's adoptions say so (MarkDryRun).
func Run(ctx context.Context, opts Options, p *Prepared) (*flow.Report, []Plan, error) {
	var dry *dryRunSource
	if opts.DryRun {
		dry = &dryRunSource{Source: opts.Source}
		opts.Source = dry
	}
	if opts.Platform == "" {
		opts.Platform = "chromium"
	}
	if opts.MaxCaptures <= 0 {
		opts.MaxCaptures = 5
	}
	e := p.Entry
	r := &Runner{opts: opts, written: map[string][]byte{}, started: time.Now(),
		parsed: map[string]parsedFile{e.File.Canonical: {data: e.File.Data, flow: p.Flow}}}
	r.rep = &flow.Report{Flow: e.Name, ExecutionPrerequisite: p.Flow.ExecutionPrerequisite, StartedAt: r.started.UnixMilli(), Steps: []flow.StepReport{}}
	if opts.Device != nil {
		r.rep.Device = opts.Device.ID()
	}
	sc := &runScope{name: e.Name, baselineDir: baselineDir(e.File.Canonical, e.StemFallback), update: opts.update()}
	fr := &frame{file: e.File, flow: p.Flow, display: e.Name, scope: sc}
	if err := r.checkFanOut(fr); err != nil {
		return nil, nil, err
	}
	r.runFile(ctx, fr)
	r.rep.DurationMs = ms(time.Since(r.started))
	r.rep.OK = r.rep.Failed == 0 && r.rep.Errored == 0 && !r.rep.Aborted
	if dry == nil {
		return r.rep, nil, nil
	}
	MarkDryRun(r.rep)
	return r.rep, dry.plans, nil
}

// Execute prepares e and runs it: for a caller that has no prepared flow.
func Execute(ctx context.Context, opts Options, e Entry) (*flow.Report, error) {
	p, err := Prepare(e)
	if err != nil {
		return nil, err
	}
	rep, _, err := Run(ctx, opts, p)
	return rep, err
}
