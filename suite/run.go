package suite

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"github.com/toolserver/toolserver/internal/atomicfile"
	"github.com/toolserver/toolserver/internal/clientpath"

	"github.com/toolserver/toolserver/fault"
	"github.com/toolserver/toolserver/flow"
	flowrun "github.com/toolserver/toolserver/flow/run"
)

// MaxWorkers bounds the flows a run runs at once: each worker is a page
// of Chromium.
const MaxWorkers = 64

// Result is what running one target gave.
type Result struct {
	// Ran tells a target Run started; the others were left when the run
	// stopped.
	Ran    bool
	Report *flow.Report
	// NotWritten counts the baselines of the result the client refused.
	NotWritten int
	// Plans are the baselines a dry run would have written.
	Plans []flowrun.Plan
	Err   error
	// Stop makes Err the run's error (a usage error, a bad --device): it
	// stops the targets not yet started, and Collect returns it. A flow
	// whose machinery failed does not stop the others (a replica behind a
	// load balancer died: the others may still run them).
	Stop bool
}

// Run runs the targets, workers at a time, with runOne, and returns their
// results in the targets' order. One worker runs them one after another
// as worker 0; several run them at once, each worker numbered 0 to
// workers-1 (a device of its own). A result that stops the run, or the
// end of ctx, leaves the targets not yet started.
func Run(ctx context.Context, targets []Target, workers int, runOne func(ctx context.Context, t Target, worker int) Result) []Result {
	results := make([]Result, len(targets))
	do := func(ctx context.Context, i, worker int) bool {
		results[i] = runOne(ctx, targets[i], worker)
		results[i].Ran = true
		return results[i].Stop
	}
	if workers <= 1 {
		for i := range targets {
			if ctx.Err() != nil || do(ctx, i, 0) {
				break
			}
		}
		return results
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	next := make(chan int)
	var wg sync.WaitGroup
	for w := range min(workers, len(targets)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				if do(ctx, i, w) {
					cancel()
				}
			}
		}()
	}
	for i := range targets {
		if ctx.Err() != nil {
			break
		}
		select {
		case next <- i:
		case <-ctx.Done():
		}
	}
	close(next)
	wg.Wait()
	return results
}

// Report is a flow's report as a run prints it: the report, and in a dry
// run the baselines it would have written.
type Report struct {
	*flow.Report
	WouldWrite *[]flowrun.Plan `json:"wouldWriteBaselines,omitempty"`
}

// Reports are the flow reports of a run, without the dry run's plans.
func Reports(reports []Report) []*flow.Report {
	out := make([]*flow.Report, len(reports))
	for i, r := range reports {
		out[i] = r.Report
	}
	return out
}

// Rejected is the report that stands for a flow rejected before its
// first step, for the outputs that list every flow (JSON, JUnit).
func Rejected(name, device string, err error) *flow.Report {
	return &flow.Report{Flow: name, Device: device, Errored: 1, Steps: []flow.StepReport{},
		Warnings: []string{"not run: " + err.Error()}}
}

// Outcome is what a run's results come to.
type Outcome struct {
	// Reports are the flows' reports in the targets' order, a rejected
	// flow's included.
	Reports []Report
	// Plans are the baselines a dry run would have written, of every flow.
	Plans []flowrun.Plan
	// Failure fails the run outside its reports: a baseline the client did
	// not write (docs/link-protocol.md, "Baselines in the result").
	Failure error
	// Broken is the first flow whose machinery failed (the run went on
	// with the others).
	Broken error
}

// Collect turns the results of Run into the run's outcome; device is the
// run's, for a rejected flow's report, and dryRun adds each report's
// plans. A result that stopped the run is returned as the error.
func Collect(targets []Target, results []Result, device string, dryRun bool) (Outcome, error) {
	var o Outcome
	for i, r := range results {
		if !r.Ran {
			continue
		}
		t := targets[i]
		switch {
		case r.Stop:
			return Outcome{}, r.Err
		case r.Err != nil:
			o.Reports = append(o.Reports, Report{Report: Rejected(t.Name, t.DeviceOr(device), r.Err)})
			if o.Broken == nil && fault.IsInfrastructure(r.Err) {
				o.Broken = fmt.Errorf("flow %s: %w", t.Name, r.Err)
			}
			continue
		}
		rr := Report{Report: r.Report}
		if dryRun {
			planned := r.Plans
			if planned == nil {
				planned = []flowrun.Plan{}
			}
			rr.WouldWrite = &planned
			o.Plans = append(o.Plans, planned...)
		}
		o.Reports = append(o.Reports, rr)
		if r.NotWritten > 0 {
			o.Failure = errors.New("a baseline was not written")
		}
	}
	return o, nil
}

// ArtifactDir is the flowrun.ArtifactSink of --artifacts DIR: the images
// of a failed snapshot go to DIR/<flow>/<name>, each written atomically.
type ArtifactDir string

// Put writes one image of flow fl.
func (d ArtifactDir) Put(fl, name, mime string, data []byte) (flow.Artifact, error) {
	p := filepath.Join(string(d), filepath.FromSlash(fl), name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return flow.Artifact{}, err
	}
	if err := atomicfile.WriteFile(p, data); err != nil {
		return flow.Artifact{}, err
	}
	return flow.Artifact{Path: p}, nil
}

var _ flowrun.ArtifactSink = ArtifactDir("")

// Unused are the project's baselines no snapshot step reads, told only
// by a run of all its flows (-r over <project>/.argent/flows, not a
// shard): only such a run has read every flow. Any other run, or a
// project whose baselines cannot be listed, has none to tell.
func Unused(project, arg string, recursive bool, shard Shard) []string {
	if !recursive || shard.N > 0 || !sameDir(arg, clientpath.LocalFlowsDir(project)) {
		return nil
	}
	use, err := flowrun.ProjectBaselines(project)
	if err != nil {
		return nil
	}
	return use.Unused()
}

// sameDir tells that a and b are one directory.
func sameDir(a, b string) bool {
	fa, erra := os.Stat(a)
	fb, errb := os.Stat(b)
	return erra == nil && errb == nil && os.SameFile(fa, fb)
}
