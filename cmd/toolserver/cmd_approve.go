package main

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/toolserver/toolserver/report"
)

// approveOptions are the flags of approve.
type approveOptions struct {
	streams
	reportDir, project string
	flows, snapshots   []string
	all, dryRun        bool
	output             outputFlags
}

const approveLong = `Adopt the current images of a report's failed or missing snapshots as
baselines, without running anything: the review loop's last step.

CI fails → download the report artifact → review it (open index.html, or
toolserver report serve DIR) → toolserver approve --report DIR --flow NAME
→ commit the baselines.

approve writes only inside the baseline directories the report records
for the run, relative to --project (default: the current directory, your
checkout of the project the run ran in), each file through a temp file and
one rename. It refuses, naming it, a baseline that changed on disk since
the run (the report records each baseline's hash), one that appeared
since a run that had none, and any path outside those directories.

Select with --flow (a flow's name), --snapshot (a key, or a snapshot's
name), both (both must match), or --all. --dry-run checks the same and
writes nothing.`

func newApproveCommand(s streams) *cobra.Command {
	opts := approveOptions{streams: s}
	cmd := &cobra.Command{
		Use:   "approve --report DIR [--flow NAME]... [--snapshot KEY]... [--all] [--dry-run]",
		Short: "Adopt a report's current images as baselines",
		Long:  approveLong,
		Example: `  toolserver approve --report flow-report --all --dry-run
  toolserver approve --report flow-report --flow checkout
  toolserver approve --report flow-report --snapshot basket`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runApprove(cmd.Context(), opts)
		},
	}
	setExitStatus(cmd, exitStatusApprove)
	f := cmd.Flags()
	f.StringVar(&opts.reportDir, "report", "", "the report `DIR` (flow run --report)")
	f.StringVar(&opts.project, "project", ".", "the project `DIR` the baselines' paths are relative to")
	f.StringArrayVar(&opts.flows, "flow", nil, "approve the snapshots of the flow `NAME` (repeatable)")
	f.StringArrayVar(&opts.snapshots, "snapshot", nil, "approve the snapshot `KEY` (or name; repeatable)")
	f.BoolVar(&opts.all, "all", false, "approve every failed or missing snapshot of the report")
	f.BoolVar(&opts.dryRun, "dry-run", false, "write nothing; list what would be written")
	opts.output.register(cmd, f)
	_ = cmd.MarkFlagDirname("report")
	_ = cmd.MarkFlagDirname("project")
	return cmd
}

func runApprove(ctx context.Context, opts approveOptions) error {
	format, err := opts.output.resolve()
	if err != nil {
		return err
	}
	if opts.reportDir == "" {
		return usageError("approve: --report DIR is required")
	}
	sel := report.Selection{All: opts.all, Flows: opts.flows, Snapshots: opts.snapshots}
	if sel.Empty() {
		return usageError("approve: nothing selected: give --flow NAME, --snapshot KEY or --all")
	}
	rep, err := report.Read(opts.reportDir)
	if err != nil {
		return usageError("approve: %v", err)
	}
	results, err := report.Approve(opts.reportDir, opts.project, rep, sel, opts.dryRun)
	if err != nil {
		return usageError("approve: %v", err)
	}
	refused := 0
	for _, r := range results {
		if r.Message != "" {
			refused++
		}
	}
	if format != "" {
		if err := printData(opts.stdout, format, map[string]any{"results": results}); err != nil {
			return err
		}
	} else {
		for _, r := range results {
			fmt.Fprintln(opts.stdout, approveLine(r))
		}
	}
	if refused > 0 {
		return failed(fmt.Errorf("approve: %d of %d %s refused", refused, len(results), plural(len(results), "baseline", "baselines")))
	}
	return nil
}

// approveLine is one result of approve as the terminal shows it.
func approveLine(r report.Result) string {
	what := fmt.Sprintf("(%s, %s, %d bytes)", r.FlowName, r.Key, r.Bytes)
	switch {
	case r.Message != "":
		return fmt.Sprintf("✗ refused %s: %s", r.Baseline, r.Message)
	case r.DryRun:
		return fmt.Sprintf("· would approve %s %s", r.Baseline, what)
	}
	return fmt.Sprintf("✓ approved %s %s", r.Baseline, what)
}
