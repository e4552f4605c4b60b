package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"

	"github.com/spf13/cobra"

	"github.com/toolserver/toolserver/internal/printable"
	"github.com/toolserver/toolserver/runs"
	v1 "github.com/toolserver/toolserver/runs/v1"
)

// The verbs that write a run: abandon (and cancel, its alias) and resume.

func newRunsAbandonCommand(s streams) *cobra.Command {
	o := runsOptions{streams: s}
	var reason string
	var dryRun bool
	cmd := &cobra.Command{
		Use:     "abandon ID [--reason TEXT] [--dry-run]",
		Aliases: []string{"cancel"},
		Short:   "Abandon a running run (cancel is an alias of abandon)",
		Long: `Retire a run that is running: one RunAbandoned event ends it, with
--reason when given, and a driver running it stops. With --link URL (or
$ARGENT_TOOLS_URL) the tool-server abandons it; else the run store of
--state-dir DIR (or serve's default state directory) is written directly,
which only works while no serve holds it: a serve that holds the store
drives its runs, so abandon them through it with --link. A run that has
ended is left alone (exit 1). cancel is an alias of abandon.`,
		Args: exactArgs(1, "one run id"),
		RunE: func(cmd *cobra.Command, args []string) error {
			name := "runs " + cmd.CalledAs()
			format, err := o.output.resolve()
			if err != nil {
				return err
			}
			if cmd.CalledAs() == "cancel" && reason == "" {
				reason = "cancelled (runs cancel)"
			}
			return abandonRun(cmd.Context(), o, name, args[0], reason, dryRun, format)
		},
	}
	cmd.Flags().StringVar(&reason, "reason", "", "why the run is abandoned, kept in its status (`TEXT`)")
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "abandon nothing; read the run and say what abandon would do, with its exit")
	o.register(cmd)
	o.registerStoreUsage(cmd, "abandon in the run store in `DIR` directly, when no serve holds it (default without --link or $"+envToolsURL+": serve's default state directory)")
	return cmd
}

// abandonRun abandons the run id where the runs are (runsOptions.open),
// or with dryRun says what that would do.
func abandonRun(ctx context.Context, o runsOptions, name, id, reason string, dryRun bool, format string) error {
	writes := id
	if dryRun {
		writes = ""
	}
	at, err := o.open(name, writes)
	if err != nil {
		return err
	}
	defer at.close()
	if dryRun {
		held := ""
		if at.dir != "" && runs.Held(at.dir) {
			held = at.dir
		}
		return abandonPlan(ctx, at, name, id, held, format, o.streams)
	}
	return abandonWith(ctx, at, name, id, reason, format, o.streams)
}

// openToWrite opens the store in dir to write it, which a serve holding
// it refuses: that serve abandons its runs, over --link. The store is
// opened to prune nothing (a serve's --keep-runs is not known here; the
// serve prunes at its next write).
func openToWrite(name, runID, dir string) (*runs.Store, error) {
	st, err := runs.Open(dir, math.MaxInt32)
	if errors.Is(err, runs.ErrHeld) {
		return nil, badInput(fmt.Errorf("%s: a serve holds the run store in %s, and the process that holds a store writes it: abandon the run through that serve, toolserver %s %s --link URL (its address)",
			name, printable.String(dir), name, printable.String(runID)))
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return st, nil
}

// abandonWith abandons the run and prints the receipt.
func abandonWith(ctx context.Context, a runs.Service, name, id, reason, format string, s streams) error {
	rc, err := a.Abandon(ctx, id, reason)
	if err != nil {
		return apiError(name, err)
	}
	if format != "" {
		return printData(s.stdout, format, rc)
	}
	fmt.Fprintf(s.stdout, "Run %s: abandoned (event %d)\n", printable.String(rc.Run), rc.AppendedSeq)
	if rc.Status.Reason != "" {
		fmt.Fprintln(s.stdout, statusLine(rc.Status))
	}
	return nil
}

// abandonPlan reads the run (writing nothing) and says what abandon would
// do, with the exits it would have: 0 the run is running, 1 it has ended,
// 2 there is no such run, or (held names the store) a serve holds the
// store the command would write.
func abandonPlan(ctx context.Context, a runs.Service, name, id, held, format string, s streams) error {
	d, err := a.Run(ctx, id)
	if err != nil {
		return apiError(name, err)
	}
	id = printable.String(d.ID)
	if runs.WouldAbandon(d) != nil {
		return failed(fmt.Errorf("%s: run %s is %s, not running: nothing to abandon", name, id, printable.String(d.Status.State)))
	}
	if held != "" {
		return badInput(fmt.Errorf("%s: run %s is running, but a serve holds the run store in %s: %s would be refused; abandon it through that serve with --link URL",
			name, id, printable.String(held), name))
	}
	if format != "" {
		return printData(s.stdout, format, map[string]any{"run": d.ID, "status": d.Status, "dry_run": true})
	}
	fmt.Fprintf(s.stdout, "Run %s is running: %s would abandon it\n", id, name)
	return nil
}

func newRunsResumeCommand(s streams) *cobra.Command {
	o := runsOptions{streams: s}
	var dryRun bool
	cmd := &cobra.Command{
		Use:   "resume ID [--dry-run]",
		Short: "Re-drive a run whose tool-server stopped under it",
		Long: `Re-drive a run that is running with no driver (its tool-server was
killed or stopped under it) from its recorded arguments: the flow runs
again from its first step, as a new attempt. A resume drives the flow, so
a tool-server does it: give --link URL (or $ARGENT_TOOLS_URL), or start
one that resumes every such run, toolserver serve --state-dir DIR
--resume-interrupted. A run that has finished is left alone and its state
printed (exit 0). With --dry-run the run is read (a GET) and what resume
would do is said, with the exit resume would have.`,
		Args: exactArgs(1, "one run id"),
		RunE: func(cmd *cobra.Command, args []string) error {
			format, err := o.output.resolve()
			if err != nil {
				return err
			}
			if o.store.dsn != "" || o.store.file != "" {
				return usageError("runs resume: a resume drives the run's flow again, which a tool-server does: give --link URL of one of the fleet's replicas (a replica also takes over by itself a run whose own replica was lost)")
			}
			u := o.linkURL(o.link)
			if u == "" {
				return usageError("runs resume: a resume drives the run's flow again, which a tool-server does: give --link URL (or $%s) of the serve that holds the run store, or start one over the store that resumes its runs: toolserver serve --state-dir DIR --resume-interrupted", envToolsURL)
			}
			c := v1.NewClient(u, o.getenv(envAuthToken))
			if dryRun {
				return resumePlan(cmd.Context(), c, args[0], format, o.streams)
			}
			out, err := c.Resume(cmd.Context(), args[0])
			if err != nil {
				return apiError("runs resume", err)
			}
			return printResumed(o.streams, out, format)
		},
	}
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "resume nothing; read the run and say what resume would do, with its exit")
	o.register(cmd)
	return cmd
}

// printResumed prints a resume's answer: a run now driving, or the state
// of a finished one.
func printResumed(s streams, out runs.Resumed, format string) error {
	if format != "" {
		return printData(s.stdout, format, out)
	}
	id := printable.String(out.Run)
	if out.Outcome == runs.ResumeDriving {
		fmt.Fprintf(s.stdout, "Run %s: driving; follow it with toolserver runs events %s\n", id, id)
		return nil
	}
	var st runs.Status
	if err := json.Unmarshal(out.Status, &st); err != nil || st.State == "" {
		st.State = out.Outcome
	}
	word := st.State
	if o := st.Outcome(); o != "" {
		word += " (" + o + ")"
	}
	fmt.Fprintf(s.stdout, "Run %s had finished: %s; nothing to resume\n", id, printable.String(word))
	if line := statusLine(st); line != "" {
		fmt.Fprintln(s.stdout, line)
	}
	return nil
}

// resumePlan reads the run (writing nothing) and says what resume would
// do, with the exits it would have: 0 it would re-drive the run, or it
// is driven already, or it had finished (left alone); 1 it cannot be
// re-driven (a /tools call's, whose arguments are not recorded); 2 an
// unknown run.
func resumePlan(ctx context.Context, c runs.Service, id, format string, s streams) error {
	const name = "runs resume"
	r, err := c.Run(ctx, id)
	if err != nil {
		return apiError(name, err)
	}
	rid := printable.String(r.ID)
	var would string
	switch plan := runs.WouldResume(r); plan.Verdict {
	case runs.WouldLeave:
		word := r.Status.State
		if r.Outcome != "" {
			word += " (" + r.Outcome + ")"
		}
		would = fmt.Sprintf("run %s had finished: %s; resume would leave it alone and print its state", rid, printable.String(word))
	case runs.WouldKeep:
		would = fmt.Sprintf("run %s is running, driven by its tool-server: resume would change nothing", rid)
	case runs.WouldRefuse:
		return failed(fmt.Errorf("%s: run %s is running with no driver, but it was started by a /tools call, whose arguments are not recorded: it cannot be re-driven; abandon it with toolserver runs abandon %s", name, rid, rid))
	default:
		would = fmt.Sprintf("run %s is running with no driver: resume would re-drive it from its flow's first step, attempt %d", rid, plan.Attempt)
	}
	if format != "" {
		return printData(s.stdout, format, map[string]any{"run": r.ID, "status": r.Status, "dry_run": true, "would": would})
	}
	fmt.Fprintln(s.stdout, "Dry run: "+would)
	return nil
}
