package main

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	flowrun "github.com/toolserver/toolserver/flow/run"
	"github.com/toolserver/toolserver/report"
	"github.com/toolserver/toolserver/suite"
)

// envReport names the report directory when --report is not given.
const envReport = "TOOLSERVER_REPORT"

// writer is this toolserver as a report names it.
func writer() report.Version {
	return report.Version{Version: version, Commit: buildCommit()}
}

// startReport prepares the HTML report a run asked for (--report or
// $TOOLSERVER_REPORT), or returns nil. Without --artifacts the run's
// images go straight into the report.
func (o *flowRunOptions) startReport(ctx context.Context, out *renderer) (*report.Builder, error) {
	dir := o.reportDir
	if dir == "" {
		dir = o.getenv(envReport)
	}
	if dir == "" {
		return nil, nil
	}
	project, err := filepath.Abs(o.project)
	if err != nil {
		return nil, err
	}
	run := report.Run{
		Device: o.device, Toolserver: writer(), Project: project,
		Linked: o.linkURL(o.link), UpdateBaselines: o.update != flowrun.UpdateNone, UpdateOnly: o.update.Only(), DryRun: o.dryRun,
		StartedAt: time.Now(), Git: report.GitOf(ctx, project),
	}
	rb, err := report.Create(dir, run, writer(), out.warn)
	if err != nil {
		return nil, usageError("--report %s: %v", dir, err)
	}
	if o.artifacts == "" {
		o.artifacts = rb.ImagesDir()
	}
	return rb, nil
}

// finishReport adds the run's flows to the report and writes it; a nil
// builder is no report.
func finishReport(rb *report.Builder, reports []suite.Report, unused []string, out *renderer) error {
	if rb == nil {
		return nil
	}
	for _, r := range reports {
		rb.AddFlow(r.Report)
	}
	rb.SetUnusedBaselines(unused)
	if err := rb.Finish(time.Now()); err != nil {
		return fmt.Errorf("--report %s: %w", rb.Dir(), err)
	}
	if !out.asJSON && len(unused) > 0 {
		fmt.Fprintf(out.stderr, "%d %s no flow reads (toolserver baselines list --unused; prune deletes them)\n", len(unused), plural(len(unused), "baseline", "baselines"))
	}
	if !out.asJSON {
		fmt.Fprintf(out.stderr, "Report: %s (toolserver report serve %s to review and approve)\n", filepath.Join(rb.Dir(), report.PageFile), rb.Dir())
	}
	return nil
}
