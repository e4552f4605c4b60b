package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/toolserver/toolserver/flow"
	"github.com/toolserver/toolserver/internal/printable"
	"github.com/toolserver/toolserver/runs"
)

const exitStatusRuns = `0  the command succeeded (runs events: the run passed)
1  runs events: the run failed, errored, was cancelled or interrupted; runs cancel: the run had ended
2  a usage error, an unknown run, or the tool-server unreachable`

// runsOptions are the flags every runs command shares.
type runsOptions struct {
	streams
	link     string
	stateDir string
	output   outputFlags
}

// runSource is where the reading commands get runs: a tool-server over
// /v1, or a run store read directly.
type runSource interface {
	List(ctx context.Context, f runs.Filter) ([]runs.Run, error)
	Get(ctx context.Context, id string) (*runs.Detail, error)
	FollowEvents(ctx context.Context, id string, from int64, each func(runs.Event) error) (runs.EndFrame, error)
}

// linked is a tool-server's runs; a dropped stream is said on stderr.
type linked struct {
	*runs.Client
	stderr io.Writer
}

func (l linked) FollowEvents(ctx context.Context, id string, from int64, each func(runs.Event) error) (runs.EndFrame, error) {
	return l.Follow(ctx, id, from, each, func(err error) {
		fmt.Fprintf(l.stderr, "toolserver: the event stream dropped (%s); reconnecting from its cursor\n", printable.String(err.Error()))
	})
}

// source is the runs a reading command reads: --state-dir's store, read
// directly (no server, beside the one that may hold it); else the server
// of --link or $ARGENT_TOOLS_URL; else the local store, serve's default
// state directory. close releases it.
func (o runsOptions) source(cmd string) (src runSource, close func(), err error) {
	if o.stateDir != "" && o.link != "" {
		return nil, nil, usageError("%s: give --state-dir or --link, not both", cmd)
	}
	dir := o.stateDir
	if dir == "" {
		if u := o.linkURL(o.link); u != "" {
			return linked{runs.NewClient(u, o.getenv(envAuthToken)), o.stderr}, func() {}, nil
		}
		if dir = defaultStateDir(o.getenv); dir == "" {
			return nil, nil, usageError("%s: name the run store with --state-dir DIR, or the tool-server with --link URL or $%s", cmd, envToolsURL)
		}
	}
	st, err := runs.OpenReader(dir)
	if errors.Is(err, runs.ErrNoStore) && o.stateDir == "" {
		return nil, nil, usageError("%s: %v; name the run store with --state-dir DIR, or the tool-server with --link URL or $%s", cmd, err, envToolsURL)
	}
	if err != nil {
		return nil, nil, usageError("%s: %v", cmd, err)
	}
	return st, func() { st.Close() }, nil
}

// client is the /v1 client of --link (or $ARGENT_TOOLS_URL) with the
// token of $ARGENT_AUTH_TOKEN.
func (o runsOptions) client(cmd string) (*runs.Client, error) {
	u := o.linkURL(o.link)
	if u == "" {
		return nil, usageError("%s: name the tool-server with --link URL or $%s", cmd, envToolsURL)
	}
	return runs.NewClient(u, o.getenv(envAuthToken)), nil
}

func newRunsCommand(s streams) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "runs",
		Short: "List, follow and cancel the runs a tool-server keeps",
		Long: `The runs a tool-server keeps (serve --state-dir): every flow-execute call
and every run started with flow run --detach or POST /v1/runs.`,
	}
	asGroup(cmd)
	cmd.AddCommand(newRunsListCommand(s), newRunsGetCommand(s), newRunsEventsCommand(s), newRunsCancelCommand(s))
	return cmd
}

// register adds the shared flags.
func (o *runsOptions) register(cmd *cobra.Command) {
	cmd.Flags().StringVar(&o.link, "link", "", "the tool-server at `URL` (default $"+envToolsURL+"; token from $"+envAuthToken+")")
	o.output.register(cmd, cmd.Flags())
	setExitStatus(cmd, exitStatusRuns)
}

// registerStore adds --state-dir to a command that only reads.
func (o *runsOptions) registerStore(cmd *cobra.Command) {
	cmd.Flags().StringVar(&o.stateDir, "state-dir", "", "read the run store in `DIR` directly, no server needed, even while a serve holds it (default without --link or $"+envToolsURL+": serve's default state directory)")
	_ = cmd.MarkFlagDirname("state-dir")
}

// apiError gives an error of the API its exit: a run that is not in the
// state the command needs (cancelling a run that ended) is a failed
// result (1); an unknown run or a bad request is the caller's (2, usage);
// the rest the machinery's (2).
func apiError(cmd string, err error) error {
	var api *runs.APIError
	switch {
	case errors.Is(err, runs.ErrUnknownRun), errors.Is(err, runs.ErrBadCursor):
		return badInput(fmt.Errorf("%s: %w", cmd, err))
	case errors.As(err, &api) && api.Code == runs.CodeWrongState:
		return failed(fmt.Errorf("%s: %s", cmd, api.Message))
	case errors.As(err, &api):
		return badInput(fmt.Errorf("%s: %s", cmd, api.Message))
	}
	return fmt.Errorf("%s: %w", cmd, err)
}

func newRunsListCommand(s streams) *cobra.Command {
	o := runsOptions{streams: s}
	var f runs.Filter
	var labels []string
	cmd := &cobra.Command{
		Use:   "list [--status S] [--label KEY:VALUE]... [--limit N] [--before ID]",
		Short: "List runs, newest first",
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			c, done, err := o.source("runs list")
			if err != nil {
				return err
			}
			defer done()
			if f.Labels, err = runs.ParseLabels(labels); err != nil {
				return usageError("runs list: --label %v", err)
			}
			format, err := o.output.resolve()
			if err != nil {
				return err
			}
			list, err := c.List(cmd.Context(), f)
			if err != nil {
				return apiError("runs list", err)
			}
			if format != "" {
				return printData(o.stdout, format, map[string]any{"runs": list})
			}
			printRuns(o.stdout, list)
			return nil
		},
	}
	cmd.Flags().StringVar(&f.Status, "status", "", "only runs in this state ("+strings.Join(runs.States, ", ")+")")
	cmd.Flags().StringVar(&f.Outcome, "outcome", "", "only completed runs with this outcome ("+strings.Join(runs.Outcomes, ", ")+")")
	cmd.Flags().StringArrayVar(&labels, "label", nil, "only runs with this label, `KEY:VALUE` (repeatable; all must match)")
	cmd.Flags().IntVar(&f.Limit, "limit", 50, "at most `N` runs")
	cmd.Flags().StringVar(&f.Before, "before", "", "the page after the run `ID` (older runs)")
	_ = cmd.RegisterFlagCompletionFunc("status", cobra.FixedCompletions(runs.States, cobra.ShellCompDirectiveNoFileComp))
	_ = cmd.RegisterFlagCompletionFunc("outcome", cobra.FixedCompletions(runs.Outcomes, cobra.ShellCompDirectiveNoFileComp))
	o.register(cmd)
	o.registerStore(cmd)
	return cmd
}

// printRuns prints runs as a table. Every cell but the time is the
// server's, so each is escaped (a label cannot retitle the terminal or
// break the columns with a tab), and the labels are sorted.
func printRuns(w io.Writer, list []runs.Run) {
	if len(list) == 0 {
		fmt.Fprintln(w, "no runs")
		return
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "RUN\tSTATUS\tFLOW\tDEVICE\tSTARTED\tLAST EVENT\tLABELS")
	for _, r := range list {
		var labels []string
		for k, v := range r.Labels {
			labels = append(labels, k+":"+v)
		}
		slices.Sort(labels)
		cells := []string{r.ID, statusWord(r), r.Flow, r.Device, r.FirstRecordedAt.Local().Format(time.DateTime), r.LastRecordedAt.Local().Format(time.DateTime), strings.Join(labels, ",")}
		for i, c := range cells {
			cells[i] = printable.String(c)
		}
		fmt.Fprintln(tw, strings.Join(cells, "\t"))
	}
	tw.Flush()
}

// statusWord is a run's state in a word: a completed run's outcome
// (passed, failed), a running one with no driver "running (no driver)".
func statusWord(r runs.Run) string {
	switch {
	case r.Outcome != "":
		return r.Outcome
	case r.Status.State == runs.Running && r.Driver == runs.DriverNone:
		return "running (no driver)"
	}
	return r.Status.State
}

// statusLine is the last line of a run's output: its counts, or why it
// failed or was abandoned.
func statusLine(st runs.Status) string {
	switch {
	case st.Output != nil:
		o := st.Output
		return fmt.Sprintf("%d passed, %d failed, %d errored, %d skipped", o.Passed, o.Failed, o.Errored, o.Skipped)
	case st.Error != "":
		return "failed: " + printable.String(st.Error)
	case st.Reason != "":
		return "abandoned: " + printable.String(st.Reason)
	case st.State == runs.Abandoned:
		return "abandoned"
	}
	return ""
}

// runHeader is the first line of runs get: the run, its status, its flow,
// the device it ran on (a run rejected before it had one has none) and
// when it started, each of the server's strings escaped.
func runHeader(d *runs.Detail) string {
	on := ""
	if d.Device != "" {
		on = " on " + printable.String(d.Device)
	}
	return fmt.Sprintf("Run %s: %s (flow %q%s, started %s)", printable.String(d.ID), printable.String(statusWord(d.Run)), d.Flow, on, d.FirstRecordedAt.Local().Format(time.DateTime))
}

func newRunsGetCommand(s streams) *cobra.Command {
	o := runsOptions{streams: s}
	cmd := &cobra.Command{
		Use:   "get ID",
		Short: "Show a run with its steps",
		Args:  exactArgs(1, "one run id"),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, done, err := o.source("runs get")
			if err != nil {
				return err
			}
			defer done()
			format, err := o.output.resolve()
			if err != nil {
				return err
			}
			d, err := c.Get(cmd.Context(), args[0])
			if err != nil {
				return apiError("runs get", err)
			}
			if format != "" {
				return printData(o.stdout, format, d)
			}
			fmt.Fprintln(o.stdout, runHeader(d))
			out := newRenderer(o.stdout, o.stderr, false)
			for _, st := range d.Steps {
				out.progress(st)
			}
			if line := statusLine(d.Status); line != "" {
				fmt.Fprintln(o.stdout, line)
			}
			return nil
		},
	}
	o.register(cmd)
	o.registerStore(cmd)
	return cmd
}

func newRunsEventsCommand(s streams) *cobra.Command {
	o := runsOptions{streams: s}
	var from int64
	cmd := &cobra.Command{
		Use:   "events ID [--from-seq N]",
		Short: "Follow a run's events until it ends",
		Long: `Print a run's events from the start (or --from-seq) and follow it until it
ends; a dropped connection is reconnected with its cursor, so no event is
missed or repeated. Exit 0 when the run passed, 1 when it did not.`,
		Args: exactArgs(1, "one run id"),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, done, err := o.source("runs events")
			if err != nil {
				return err
			}
			defer done()
			format, err := o.output.resolve()
			if err != nil {
				return err
			}
			return followRun(cmd.Context(), c, args[0], from, format, o.streams)
		},
	}
	cmd.Flags().Int64Var(&from, "from-seq", 0, "start at the event with sequence number `N`")
	o.register(cmd)
	o.registerStore(cmd)
	return cmd
}

// followRun prints a run's events as they come and exits by its final
// status. With -o json each event is one line of JSON (JSON Lines); with
// -o yaml each is a document of a YAML stream, so a reader can act on
// every event as it arrives.
func followRun(ctx context.Context, c runSource, id string, from int64, format string, s streams) error {
	out := newRenderer(s.stdout, s.stderr, false)
	end, err := c.FollowEvents(ctx, id, from, func(e runs.Event) error {
		switch format {
		case formatJSON:
			b, _ := json.Marshal(e)
			_, err := s.stdout.Write(append(escapeJSONControls(b), '\n'))
			return err
		case formatYAML:
			if _, err := io.WriteString(s.stdout, "---\n"); err != nil {
				return err
			}
			return printYAML(s.stdout, e)
		}
		switch e.Event.Kind {
		case runs.KindStepCompleted:
			var st flow.StepReport
			if json.Unmarshal(e.Event.Payload, &st) == nil {
				out.progress(st)
			}
		case runs.KindRunResumed:
			fmt.Fprintf(s.stdout, "Run %s resumed: the flow runs again from its first step\n", id)
		case runs.KindRunStarted:
			var b runs.Begin
			json.Unmarshal(e.Event.Payload, &b)
			fmt.Fprintf(s.stdout, "Run %s of %q started\n", id, b.Flow)
		}
		return nil
	})
	if err != nil {
		return apiError("runs events", err)
	}
	if format == "" {
		word := end.Status.State
		if o := end.Status.Outcome(); o != "" {
			word = o
		}
		if end.Detached {
			word = "is running with no driver (its tool-server stopped); resume it with runs resume"
		}
		fmt.Fprintf(s.stdout, "Run %s %s\n", printable.String(id), printable.String(word))
		if line := statusLine(end.Status); line != "" {
			fmt.Fprintln(s.stdout, line)
		}
	}
	if end.Status.Outcome() != runs.Passed {
		return failed(nil)
	}
	return nil
}

func newRunsCancelCommand(s streams) *cobra.Command {
	o := runsOptions{streams: s}
	var dryRun bool
	cmd := &cobra.Command{
		Use:   "cancel ID [--dry-run]",
		Short: "Cancel a running run",
		Args:  exactArgs(1, "one run id"),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := o.client("runs cancel")
			if err != nil {
				return err
			}
			format, err := o.output.resolve()
			if err != nil {
				return err
			}
			if dryRun {
				return cancelDryRun(cmd.Context(), c, args[0], format, o.streams)
			}
			rc, err := c.Abandon(cmd.Context(), args[0], "cancelled (runs cancel)")
			if err != nil {
				return apiError("runs cancel", err)
			}
			if format != "" {
				return printData(o.stdout, format, rc)
			}
			fmt.Fprintf(o.stdout, "Run %s: abandoned\n", printable.String(rc.Run))
			return nil
		},
	}
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "cancel nothing; say whether the run is running and would be cancelled")
	o.register(cmd)
	return cmd
}

// cancelDryRun reads the run (GET, which writes nothing) and says what
// runs cancel would do, with the exits it would have: 0 the run is
// running, 1 it has ended, 2 there is no such run.
func cancelDryRun(ctx context.Context, c *runs.Client, id, format string, s streams) error {
	d, err := c.Get(ctx, id)
	if err != nil {
		return apiError("runs cancel", err)
	}
	if runs.Terminal(d.Status.State) {
		return failed(fmt.Errorf("runs cancel: run %s is %s, not running: nothing to cancel", printable.String(id), printable.String(d.Status.State)))
	}
	if format != "" {
		return printData(s.stdout, format, map[string]any{"run": id, "status": d.Status, "dry_run": true})
	}
	fmt.Fprintf(s.stdout, "Run %s is running: runs cancel would cancel it\n", printable.String(id))
	return nil
}
