package main

import (
	"fmt"
	"os"

	"github.com/toolserver/toolserver/flow"
	"github.com/toolserver/toolserver/report"
	mdsummary "github.com/toolserver/toolserver/report/summary"
)

// envStepSummary names the file GitHub Actions gives each step for its
// Markdown summary; a run appends to it when --summary is not given.
const envStepSummary = "GITHUB_STEP_SUMMARY"

// checkSummary refuses, before anything runs, a --summary the run could
// not write: an empty one, one with --no-summary or --detach (whose runs
// end after the command), or a directory.
func (o *flowRunOptions) checkSummary() error {
	switch {
	case o.summarySet && o.summary == "":
		return usageError("%s: --summary '': give a FILE, or --no-summary to write none", o.name())
	case o.summarySet && o.noSummary:
		return usageError("%s: --summary %s and --no-summary: give one", o.name(), o.summary)
	case o.summary != "" && (o.detach || len(o.labels) > 0):
		return usageError("%s: --summary does not go with --detach: a detached run ends after the command, so it has no results to sum up (toolserver runs get ID has them)", o.name())
	case o.summary == "":
		return nil
	}
	if st, err := os.Stat(o.summary); err == nil && st.IsDir() {
		return usageError("%s: --summary %s is a directory; give a file", o.name(), o.summary)
	}
	return nil
}

// writeSummary writes the run's Markdown summary: to --summary FILE
// (replacing it, atomically), else appended to $GITHUB_STEP_SUMMARY
// when it is set (GitHub shows what the step's commands appended to it),
// unless --no-summary.
func (o *flowRunOptions) writeSummary(rb *report.Builder, reps []*flow.Report) error {
	if o.noSummary || o.detach {
		return nil
	}
	path, from := o.summary, "--summary"
	if path == "" {
		path, from = o.getenv(envStepSummary), "$"+envStepSummary
	}
	if path == "" {
		return nil
	}
	opts := mdsummary.Options{Command: "toolserver " + o.name(), Unit: mdsummary.Flows, DryRun: o.dryRun}
	if o.command == storybookCommand {
		opts.Unit = mdsummary.Stories
	}
	if o.shard.N > 0 {
		opts.Command += " (shard " + o.shard.String() + ")"
	}
	if rb != nil {
		opts.ReportDir = rb.Dir()
	}
	if wd, err := os.Getwd(); err == nil {
		opts.WorkDir = wd
	}
	md := mdsummary.Markdown(reps, opts)
	var err error
	if o.summary != "" {
		err = mdsummary.WriteFile(path, md)
	} else {
		err = mdsummary.AppendFile(path, md)
	}
	if err != nil {
		return fmt.Errorf("%s %s: %w", from, path, err)
	}
	return nil
}
