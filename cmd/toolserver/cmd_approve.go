package main

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/toolserver/toolserver/internal/printable"
	"github.com/toolserver/toolserver/report"
)

// approveOptions are the flags of approve.
type approveOptions struct {
	streams
	reportDir, project string
	flows, snapshots   []string
	all, dryRun        bool
	// undo is --undo: restore what the last approve of the report replaced.
	undo   bool
	output outputFlags
}

const approveLong = `Adopt the current images of a report's failed or missing snapshots as
baselines, without running anything: the review loop's last step.

CI fails → download the report artifact → review it (open index.html, or
toolserver report serve DIR) → toolserver approve --report DIR --flow NAME
→ commit the baselines.

approve writes only inside the baseline directories the report records
for the run, relative to --project: by default the project the run ran in
(the report records it) when it is on this machine, else the current
directory (your checkout of a project that ran on CI); the first line
says which. A project without the directories the baselines lie in is
refused as the wrong project. It refuses, naming it, a baseline that
changed on disk since the run (the report records each baseline's hash),
one that appeared since a run that had none, and any path outside those
directories; each file is written through a temp file and one rename.
Nothing to approve (every selected snapshot passed) is no error.

Select with --flow (a flow's name), --snapshot (a key, or a snapshot's
name), both (both must match), or --all. --dry-run checks the same and
writes nothing.

Before it replaces a baseline, approve keeps its bytes beside the report
(DIR/` + report.ApprovedDir + `/, with a manifest of what it wrote). approve --undo --report
DIR puts back what the last approve of that report replaced (and removes
the baselines it created), into the project it wrote into; it refuses,
naming it, any baseline that changed since that approve, which stays on
record for a later --undo.`

func newApproveCommand(s streams) *cobra.Command {
	opts := approveOptions{streams: s}
	cmd := &cobra.Command{
		Use:   "approve --report DIR [--flow NAME]... [--snapshot KEY]... [--all] [--dry-run] | --undo",
		Short: "Adopt a report's current images as baselines",
		Long:  approveLong,
		Example: `  toolserver approve --report flow-report --all --dry-run
  toolserver approve --report flow-report --flow checkout
  toolserver approve --report flow-report --snapshot basket
  toolserver approve --report flow-report --undo`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runApprove(cmd.Context(), opts)
		},
	}
	setExitStatus(cmd, exitStatusApprove)
	f := cmd.Flags()
	f.StringVar(&opts.reportDir, "report", "", "the report `DIR` (flow run --report)")
	f.StringVar(&opts.project, "project", "", "the project `DIR` the baselines' paths are relative to (default: the project the run ran in when it is on this machine, else the current directory)")
	f.StringArrayVar(&opts.flows, "flow", nil, "approve the snapshots of the flow `NAME` (repeatable)")
	f.StringArrayVar(&opts.snapshots, "snapshot", nil, "approve the snapshot `KEY` (or name; repeatable)")
	f.BoolVar(&opts.all, "all", false, "approve every failed or missing snapshot of the report")
	f.BoolVar(&opts.dryRun, "dry-run", false, "write nothing; list what would be written")
	f.BoolVar(&opts.undo, "undo", false, "restore the baselines the last approve of the report replaced, refusing any that changed since")
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
	if opts.undo {
		return runUndo(opts, format)
	}
	sel := report.Selection{All: opts.all, Flows: opts.flows, Snapshots: opts.snapshots}
	if sel.Empty() {
		return usageError("approve: nothing selected: give --flow NAME, --snapshot KEY or --all")
	}
	rep, err := report.Read(opts.reportDir)
	if err != nil {
		return usageError("approve: %s", printable.String(err.Error()))
	}
	project, note, err := approveProject(opts.project, rep)
	if err != nil {
		return fmt.Errorf("approve: %w", err)
	}
	if format == "" {
		fmt.Fprintln(opts.stdout, printable.String("Approving into "+project+note))
	}
	results, err := report.Approve(opts.reportDir, project, rep, sel, opts.dryRun)
	if err != nil && results == nil {
		return usageError("approve: %s", printable.String(err.Error()))
	}
	if err != nil {
		// Written, but not recorded for --undo: the machinery failed.
		for _, r := range results {
			fmt.Fprintln(opts.stdout, approveLine(r))
		}
		return fmt.Errorf("approve: %s", printable.String(err.Error()))
	}
	if format != "" {
		return printData(opts.stdout, format, map[string]any{"project": project, "results": results})
	}
	if len(results) == 0 {
		fmt.Fprintln(opts.stdout, "Nothing to approve: no selected snapshot failed or misses its baseline")
		return nil
	}
	refused := 0
	for _, r := range results {
		if r.Message != "" {
			refused++
		}
		fmt.Fprintln(opts.stdout, approveLine(r))
	}
	if refused > 0 {
		return failed(fmt.Errorf("approve: %d of %d %s refused", refused, len(results), plural(len(results), "baseline", "baselines")))
	}
	return nil
}

// approveProject is the project approvals write into, absolute
// (report.ApproveInto), with a note that says where it came from when no
// --project named it.
func approveProject(flag string, rep *report.Report) (dir, note string, err error) {
	dir, from, err := rep.ApproveInto(flag)
	if from != "" {
		note = " (" + from + ")"
	}
	return dir, note, err
}

// approveLine is one result of approve as the terminal shows it; every
// string in it comes from the report, so it is escaped.
func approveLine(r report.Result) string {
	what := fmt.Sprintf("(%s, %s, %d bytes)", r.FlowName, r.Key, r.Bytes)
	var line string
	switch {
	case r.Message != "":
		line = fmt.Sprintf("✗ refused %s: %s", r.Baseline, r.Message)
	case r.DryRun:
		line = fmt.Sprintf("· would approve %s %s", r.Baseline, what)
	default:
		line = fmt.Sprintf("✓ approved %s %s", r.Baseline, what)
	}
	return printable.String(line)
}

// runUndo is approve --undo: the last approve of the report put back,
// into the project that approve wrote into.
func runUndo(opts approveOptions, format string) error {
	if opts.all || opts.dryRun || len(opts.flows) > 0 || len(opts.snapshots) > 0 {
		return usageError("approve: --undo takes only --report, --project and -o: it restores what the last approve of the report replaced")
	}
	project, err := report.LastApproveProject(opts.reportDir)
	if errors.Is(err, report.ErrNothingToUndo) {
		if format != "" {
			return printData(opts.stdout, format, map[string]any{"results": []report.UndoResult{}})
		}
		fmt.Fprintln(opts.stdout, "Nothing to undo: no approve of this report replaced a baseline")
		return nil
	}
	if err != nil {
		return usageError("approve --undo: %s", printable.String(err.Error()))
	}
	if opts.project != "" {
		given, err := filepath.Abs(opts.project)
		if err != nil {
			return usageError("approve --undo: --project: %v", err)
		}
		if given != project {
			return usageError("approve --undo: the last approve of this report wrote into %s, not %s", printable.String(project), printable.String(given))
		}
	}
	results, err := report.Undo(opts.reportDir, project)
	if err != nil && results == nil {
		return usageError("approve --undo: %s", printable.String(err.Error()))
	}
	if format != "" {
		if perr := printData(opts.stdout, format, map[string]any{"project": project, "results": results}); perr != nil {
			return perr
		}
	} else {
		fmt.Fprintln(opts.stdout, printable.String("Undoing the last approve into "+project))
		for _, r := range results {
			fmt.Fprintln(opts.stdout, undoLine(r))
		}
	}
	if err != nil {
		return fmt.Errorf("approve --undo: %s", printable.String(err.Error()))
	}
	refused := 0
	for _, r := range results {
		if r.Message != "" {
			refused++
		}
	}
	if refused > 0 {
		return failed(fmt.Errorf("approve --undo: %d of %d %s refused", refused, len(results), plural(len(results), "baseline", "baselines")))
	}
	return nil
}

// undoLine is one result of approve --undo as the terminal shows it,
// escaped: the paths come from the report's directory.
func undoLine(r report.UndoResult) string {
	switch {
	case r.Message != "":
		return printable.String(fmt.Sprintf("✗ refused %s: %s", r.Baseline, r.Message))
	case r.Action == report.UndoRemoved:
		return printable.String(fmt.Sprintf("✓ removed %s (the approve had created it)", r.Baseline))
	}
	return printable.String(fmt.Sprintf("✓ restored %s", r.Baseline))
}
