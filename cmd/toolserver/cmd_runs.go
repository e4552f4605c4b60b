package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/toolserver/toolserver/control"
	"github.com/toolserver/toolserver/flow"
	"github.com/toolserver/toolserver/internal/printable"
	"github.com/toolserver/toolserver/runs"
	v1 "github.com/toolserver/toolserver/runs/v1"
)

const exitStatusRuns = `0  the command succeeded (runs events: the run completed and passed; runs resume: the run is driving, or had finished and is left alone)
1  runs events: the run did not pass (its checks failed, it failed, it was abandoned, or it is running with no driver); runs abandon: the run had ended; runs resume: the run cannot be re-driven
2  a usage error, an unknown run, the tool-server unreachable, or a run store a serve holds (runs abandon without --link)`

// runsOptions are the flags every runs command shares.
type runsOptions struct {
	streams
	link     string
	stateDir string
	store    storeFlags
	output   outputFlags
}

// where is what a runs command works on: --state-dir's store; else the
// server of --link or $ARGENT_TOOLS_URL (link set); else the local store,
// serve's default state directory (dir set). A fleet's store (--store,
// $TOOLSERVER_STORE) is fleet's.
func (o runsOptions) where(cmd string) (link, dir string, err error) {
	given := 0
	for _, v := range []string{o.stateDir, o.link, o.store.dsn + o.store.file} {
		if v != "" {
			given++
		}
	}
	switch {
	case given > 1:
		return "", "", usageError("%s: give one of --state-dir, --store and --link", cmd)
	case o.stateDir != "":
		return "", o.stateDir, nil
	}
	if u := o.linkURL(o.link); u != "" {
		return u, "", nil
	}
	if dir = defaultStateDir(o.getenv); dir == "" {
		return "", "", usageError("%s: name the run store with --state-dir DIR, or the tool-server with --link URL or $%s", cmd, envToolsURL)
	}
	return "", dir, nil
}

// runsAt is where a runs command found the runs: a runs.Service, and
// dir when it is the store of that directory read or written directly.
type runsAt struct {
	runs.Service
	dir   string
	close func()
}

// open is the one rule of where the runs are, for every runs command:
// the fleet's store (--store, or the environment when no other flag is
// given); else --state-dir's store, read directly (no server, beside the
// one that may hold it); else the server of --link or $ARGENT_TOOLS_URL;
// else the local store, serve's default state directory. A store is
// opened to read it; to write the run writes (runs abandon), when that
// is set, which a serve holding it refuses. close releases it.
func (o runsOptions) open(cmd, writes string) (runsAt, error) {
	if st, err := o.fleet(cmd); st != nil || err != nil {
		if err != nil {
			return runsAt{}, err
		}
		return runsAt{Service: control.New(control.Config{Runs: st}), close: func() { st.Close() }}, nil
	}
	u, dir, err := o.where(cmd)
	if err != nil {
		return runsAt{}, err
	}
	if u != "" {
		c := v1.NewClient(u, o.getenv(envAuthToken))
		c.OnDrop = func(err error) {
			fmt.Fprintf(o.stderr, "toolserver: the event stream dropped (%s); reconnecting from its cursor\n", printable.String(err.Error()))
		}
		return runsAt{Service: c, close: func() {}}, nil
	}
	st, err := o.openReader(cmd, dir)
	if err != nil {
		return runsAt{}, err
	}
	if writes != "" {
		st.Close()
		if st, err = openToWrite(cmd, writes, dir); err != nil {
			return runsAt{}, err
		}
	}
	return runsAt{Service: control.New(control.Config{Runs: st}), dir: dir, close: func() { st.Close() }}, nil
}

// fleet opens the fleet's store that --store, --store-file or the
// environment names, when one does (and --state-dir and --link do not):
// any process may read and write it, beside the replicas.
func (o runsOptions) fleet(cmd string) (*runs.Store, error) {
	flags := o.store.dsn != "" || o.store.file != ""
	if !flags && (o.stateDir != "" || o.link != "") {
		return nil, nil // the flags given win over the environment
	}
	if flags && (o.stateDir != "" || o.link != "") {
		return nil, usageError("%s: give one of --state-dir, --store and --link", cmd)
	}
	dsn, err := o.store.resolve(cmd, o.getenv)
	if err != nil || dsn == "" {
		return nil, err
	}
	return openRunStore(context.Background(), cmd, dsn, "", runs.Options{Keep: math.MaxInt32})
}

// openReader opens the store in dir to read it (runs.OpenReader); a
// directory without one is a usage error, which names the other ways
// when dir was the default.
func (o runsOptions) openReader(cmd, dir string) (*runs.Store, error) {
	st, err := runs.OpenReader(dir)
	if errors.Is(err, runs.ErrNoStore) && o.stateDir == "" {
		return nil, usageError("%s: %v; name the run store with --state-dir DIR, or the tool-server with --link URL or $%s", cmd, err, envToolsURL)
	}
	if err != nil {
		return nil, usageError("%s: %v", cmd, err)
	}
	return st, nil
}

func newRunsCommand(s streams) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "runs",
		Short: "List, follow, replay, abandon and resume the runs a tool-server keeps",
		Long: `The runs a tool-server keeps (serve --state-dir): every flow-execute call
and every run started with flow run --detach or POST /v1/runs. The commands
read the run store directly (--state-dir DIR, or serve's default state
directory), no server needed, even while a serve holds it; with --link URL
(or $ARGENT_TOOLS_URL) they ask that tool-server.`,
	}
	asGroup(cmd)
	cmd.AddCommand(newRunsListCommand(s), newRunsGetCommand(s), newRunsEventsCommand(s), newRunsReplayCommand(s),
		newRunsAbandonCommand(s), newRunsResumeCommand(s))
	return cmd
}

// register adds the shared flags.
func (o *runsOptions) register(cmd *cobra.Command) {
	cmd.Flags().StringVar(&o.link, "link", "", "the tool-server at `URL` (default $"+envToolsURL+"; token from $"+envAuthToken+")")
	o.store.register(cmd.Flags())
	o.output.register(cmd, cmd.Flags())
	setExitStatus(cmd, exitStatusRuns)
}

// registerStore adds --state-dir, the store a command reads directly.
func (o *runsOptions) registerStore(cmd *cobra.Command) {
	o.registerStoreUsage(cmd, "read the run store in `DIR` directly, no server needed, even while a serve holds it (default without --link or $"+envToolsURL+": serve's default state directory)")
}

// registerStoreUsage adds --state-dir with the usage line of a command
// that does more than read it.
func (o *runsOptions) registerStoreUsage(cmd *cobra.Command, usage string) {
	cmd.Flags().StringVar(&o.stateDir, "state-dir", "", usage)
	_ = cmd.MarkFlagDirname("state-dir")
}

// apiError gives an error of the runs, over /v1 or of a store read or
// written directly, its exit by its row of the run errors' table
// (runs.Errors): a result (the run is not in the state the command
// needs: abandoning a run that ended) is a failed result (1); any other
// row, or another answer of /v1, is the caller's (2, usage); the rest
// the machinery's (2). An answer of /v1 is said by its message.
func apiError(cmd string, err error) error {
	text := err.Error()
	api, isAPI := errors.AsType[*v1.APIError](err)
	if isAPI {
		text = api.Message
	}
	row, ok := runs.ErrorOf(err)
	switch {
	case ok && row.Result:
		return failed(fmt.Errorf("%s: %s", cmd, text))
	case ok, isAPI:
		return badInput(fmt.Errorf("%s: %s", cmd, text))
	}
	return fmt.Errorf("%s: %w", cmd, err)
}

func newRunsListCommand(s streams) *cobra.Command {
	o := runsOptions{streams: s}
	var f runs.Filter
	var labels []string
	cmd := &cobra.Command{
		Use:   "list [--status S] [--outcome O] [--label KEY:VALUE]... [--limit N] [--before ID]",
		Short: "List runs, newest first",
		Long: `List runs, newest first, a page of --limit at a time. When older runs
match, the last line says the --before of the next page (-o json|yaml:
the page's next_before).`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkFilter(f); err != nil {
				return err
			}
			var err error
			if f.Labels, err = runs.ParseLabels(labels); err != nil {
				return usageError("runs list: --label %v", err)
			}
			format, err := o.output.resolve()
			if err != nil {
				return err
			}
			c, err := o.open("runs list", "")
			if err != nil {
				return err
			}
			defer c.close()
			page, err := c.List(cmd.Context(), f)
			if err != nil {
				return apiError("runs list", err)
			}
			if format != "" {
				return printData(o.stdout, format, page)
			}
			printRuns(o.stdout, page.Runs)
			if page.NextBefore != "" {
				fmt.Fprintf(o.stdout, "more: --before %s\n", printable.String(page.NextBefore))
			}
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

// checkFilter refuses a filter no run could match (runs.ParseFilter),
// which a store read directly would answer with no runs.
func checkFilter(f runs.Filter) error {
	if f.Limit < 1 {
		return usageError("runs list: --limit %d: want a number from 1 to %d", f.Limit, runs.MaxListLimit)
	}
	if _, err := runs.ParseFilter(f.Status, f.Outcome, nil, f.Limit, f.Before); err != nil {
		return usageError("runs list: --%v", err)
	}
	return nil
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
			c, err := o.open("runs get", "")
			if err != nil {
				return err
			}
			defer c.close()
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
missed or repeated. Exit 0 when the run completed and passed, 1 when it
did not: its checks failed, it failed or was abandoned, or it is running
with no driver (its tool-server stopped under it; runs resume re-drives
it).`,
		Args: exactArgs(1, "one run id"),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := o.open("runs events", "")
			if err != nil {
				return err
			}
			defer c.close()
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
func followRun(ctx context.Context, c runs.Service, id string, from int64, format string, s streams) error {
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
		printEnd(s.stdout, id, end)
	}
	if end.Detached || end.Status.Outcome() != runs.Passed {
		return failed(nil)
	}
	return nil
}

// printEnd says how a run's stream ended: its outcome or state and its
// status line; a run running with no driver, how to resume it.
func printEnd(w io.Writer, id string, end runs.EndFrame) {
	id = printable.String(id)
	if end.Detached {
		fmt.Fprintf(w, "Run %s is running with no driver: its tool-server stopped under it.\n", id)
		fmt.Fprintf(w, "Resume it with toolserver runs resume %s --link URL (the serve that holds its store), or start one that resumes it: toolserver serve --state-dir DIR --resume-interrupted; or abandon it with toolserver runs abandon %s\n", id, id)
		return
	}
	word := end.Status.State
	if o := end.Status.Outcome(); o != "" {
		word = o
	}
	fmt.Fprintf(w, "Run %s %s\n", id, printable.String(word))
	if line := statusLine(end.Status); line != "" {
		fmt.Fprintln(w, line)
	}
}

func newRunsReplayCommand(s streams) *cobra.Command {
	o := runsOptions{streams: s}
	cmd := &cobra.Command{
		Use:   "replay ID",
		Short: "Fold a run's log to what it derives to, executing nothing",
		Long: `Fold a run's events, in order, to its status, outcome, step count,
attempt and next sequence number (GET /v1/runs/{id}/replay), executing
nothing. Read from the store directly (no server needed) or, with --link,
from the tool-server.`,
		Args: exactArgs(1, "one run id"),
		RunE: func(cmd *cobra.Command, args []string) error {
			format, err := o.output.resolve()
			if err != nil {
				return err
			}
			c, err := o.open("runs replay", "")
			if err != nil {
				return err
			}
			defer c.close()
			rp, err := c.Replay(cmd.Context(), args[0])
			if err != nil {
				return apiError("runs replay", err)
			}
			if format != "" {
				return printData(o.stdout, format, rp)
			}
			printReplay(o.stdout, args[0], rp)
			return nil
		},
	}
	o.register(cmd)
	o.registerStore(cmd)
	return cmd
}

// printReplay prints a run's fold: its state (and outcome), attempt and
// counts, the times of its first and newest events, and its status line.
func printReplay(w io.Writer, id string, rp runs.Replay) {
	word := rp.Status.State
	if rp.Outcome != "" {
		word += " (" + rp.Outcome + ")"
	}
	fmt.Fprintf(w, "Run %s: %s, attempt %d\n", printable.String(id), printable.String(word), rp.Attempt)
	fmt.Fprintf(w, "%d %s in its last attempt; next event seq %d\n", rp.StepCount, plural(int(rp.StepCount), "step", "steps"), rp.NextSeq)
	fmt.Fprintf(w, "first event %s, last event %s\n", rp.FirstRecordedAt.Local().Format(time.DateTime), rp.LastRecordedAt.Local().Format(time.DateTime))
	if line := statusLine(rp.Status); line != "" {
		fmt.Fprintln(w, line)
	}
}
