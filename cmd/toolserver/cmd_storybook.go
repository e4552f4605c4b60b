package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/toolserver/toolserver/device/cdp"
	"github.com/toolserver/toolserver/flow"
	flowrun "github.com/toolserver/toolserver/flow/run"
	"github.com/toolserver/toolserver/internal/clientfs"
	"github.com/toolserver/toolserver/storybook"
	"github.com/toolserver/toolserver/suite"
	"github.com/toolserver/toolserver/tool/storybooktool"
)

// storybookOptions are the flags of toolserver storybook: flow run's
// (the gate, the outputs, workers, shards, the link) and the selection.
type storybookOptions struct {
	flowRunOptions
	devices []string
	filter  storybook.Filter
	timeout time.Duration
}

const storybookLong = `Snapshot every story of a Storybook (8 to 10) and compare each with its
baseline, <project>/__baselines__/storybook/<story id>__chromium-<W>x<H>.png.
The argument is the URL of a running Storybook, or the directory of a
static build (storybook build's storybook-static, the default), which the
command serves on 127.0.0.1 while it runs.

It reads index.json (v 5) and runs each story (docs entries left out) as a
flow: launch iframe.html?id=<id>&viewMode=story, wait until the preview
has rendered the story (its render phase finished, play function
included, then the page's fonts), and snapshot it under the snapshot's
settle rule. A story that throws or does not render within --timeout is
an error naming it; the other stories go on.

Stories the Storybook test-runner skips (tagged !test) are skipped.
--include and --exclude (globs, repeatable) match the story id or
title/name; --tag T keeps the stories tagged T. A story's
parameters.toolserver sets { skip, devices, mask, ignore, delay }: mask
and ignore are selector lists as snapshot: takes them, delay is
milliseconds to wait before the snapshot (at most 10000), devices
replaces --device for that story; the command reads them from the
preview (one page load of iframe.html).

--update-baselines, --dry-run, --report, --junit, --artifacts, the
limits, --workers, --shard and --link behave as in flow run; the report
and JUnit name each story by its id. Over --link a directory's server is
exposed to the tool-server's browser through the run's tunnel.`

func newStorybookCommand(s streams) *cobra.Command {
	opts := storybookOptions{flowRunOptions: flowRunOptions{streams: s, command: storybookCommand}}
	cmd := &cobra.Command{
		Use:   "storybook [URL|DIR] [flags]",
		Short: "Snapshot every story of a Storybook",
		Long:  storybookLong,
		Example: `  toolserver storybook storybook-static --update-baselines
  toolserver storybook storybook-static --report storybook-report --junit junit.xml
  toolserver storybook http://localhost:6006 --include 'button--*' --device chromium-cdp-375x667
  toolserver storybook storybook-static --link http://tool-server:3000`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.workersSet = cmd.Flags().Changed("workers")
			opts.exposeSet = cmd.Flags().Changed("expose") || cmd.Flags().Changed("expose-only")
			opts.summarySet = cmd.Flags().Changed("summary")
			arg := "storybook-static"
			if len(args) == 1 {
				arg = args[0]
			}
			return runStorybook(cmd.Context(), opts, arg)
		},
	}
	setExitStatus(cmd, exitStatusStorybook)
	f := cmd.Flags()
	o := &opts.flowRunOptions
	f.StringVar(&o.project, "project", ".", "the project `DIR`: baselines go to DIR/__baselines__/storybook/")
	f.StringArrayVar(&opts.devices, "device", []string{"chromium-cdp-1280x800"}, "the device `ID` chromium-cdp-<W>x<H> (repeatable: each story on each)")
	f.StringArrayVar(&opts.filter.Include, "include", nil, "run only the stories whose id or title/name matches `GLOB` (repeatable)")
	f.StringArrayVar(&opts.filter.Exclude, "exclude", nil, "leave out the stories whose id or title/name matches `GLOB` (repeatable)")
	f.StringArrayVar(&opts.filter.Tags, "tag", nil, "run only the stories tagged `TAG` (repeatable: all of them)")
	f.DurationVar(&opts.timeout, "timeout", storybooktool.DefaultTimeout, "how long a story may take to render")
	f.Var(updateFlag{&o.update}, "update-baselines", "adopt the current screens as baselines: all (a bare flag), changed (the failed and missing ones) or missing")
	f.Lookup("update-baselines").NoOptDefVal = string(flowrun.UpdateAll)
	f.BoolVar(&o.dryRun, "dry-run", false, "write no baseline; list the baselines the run would write or update")
	f.StringArrayVar(&o.expose, "expose", nil, "with --link: also expose `TARGET` of this machine to the tool-server's browser (a URL argument on localhost needs it)")
	f.BoolVar(&o.exposeOnly, "expose-only", false, "with --expose: the tool-server's browser reaches nothing but the exposed targets")
	f.StringVar(&o.artifacts, "artifacts", "", "write baseline, current and diff PNGs of failed snapshots to `DIR`/<story id>/")
	f.StringVarP(&o.format, "output", "o", "", "print the report as json or yaml")
	f.BoolVar(&o.json, "json", false, "same as -o json")
	f.StringVar(&o.junit, "junit", "", "also write a JUnit XML report to `FILE`")
	f.StringVar(&o.reportDir, "report", "", "write the HTML report of the run to `DIR` (default $"+envReport+")")
	f.StringVar(&o.summary, "summary", "", "write a Markdown summary of the run to `FILE` (default: appended to $"+envStepSummary+" when it is set)")
	f.BoolVar(&o.noSummary, "no-summary", false, "write no Markdown summary, not even to $"+envStepSummary)
	o.limits.register(f)
	f.IntVar(&o.workers, "workers", 1, "run `N` stories at once, each on a device of its own")
	f.Var(&o.shard, "shard", "run shard `i/n` of the sorted stories")
	f.StringVar(&o.link, "link", "", "run on the tool-server at `URL` (several, comma-separated) (default $"+envToolsURL+"; token from $"+envAuthToken+")")
	_ = cmd.MarkFlagDirname("project")
	_ = cmd.MarkFlagDirname("artifacts")
	_ = cmd.MarkFlagDirname("report")
	_ = cmd.RegisterFlagCompletionFunc("device", completeDevices)
	completeFormats(cmd, "output")
	return cmd
}

// storybookCommand is storybook's name in its messages.
const storybookCommand = "storybook"

const exitStatusStorybook = `0  every story passed
1  a story failed or errored (it threw, or did not render), or a baseline was not written
2  a usage error (no Storybook at the argument, an index.json that is not v 5) or an infrastructure failure`

// runStorybook snapshots the stories of the Storybook arg names.
func runStorybook(ctx context.Context, opts storybookOptions, arg string) error {
	o := &opts.flowRunOptions
	if o.format != "" && o.format != formatJSON && o.format != formatYAML {
		return usageError("storybook: -o %s: want json or yaml", o.format)
	}
	format, err := o.resolveFormat()
	if err != nil {
		return err
	}
	out := newRenderer(o.stdout, o.stderr, format != "")
	out.dryRun = o.dryRun
	out.units = [2]string{"story", "stories"}
	if err := o.checkSummary(); err != nil {
		return err
	}
	if err := opts.filter.Check(); err != nil {
		return usageError("storybook: %v", err)
	}
	if err := checkDevices("--device", opts.devices); err != nil {
		return usageError("storybook: %v", err)
	}
	if opts.timeout <= 0 || opts.timeout > storybooktool.MaxTimeout {
		return usageError("storybook: --timeout %s: want more than 0 and at most %s", opts.timeout, storybooktool.MaxTimeout)
	}
	if o.workers < 1 || o.workers > suite.MaxWorkers {
		return usageError("storybook: --workers %d: want 1 to %d", o.workers, suite.MaxWorkers)
	}
	o.device = opts.devices[0]
	if o.snapshot, err = o.limits.snapshotDefaults(o.project); err != nil {
		return err
	}
	src, err := storybook.Open(arg)
	var ae *storybook.ArgError
	switch {
	case errors.As(err, &ae):
		return usageError("storybook: %v", err)
	case err != nil:
		return fmt.Errorf("storybook: %w", err)
	}
	defer src.Close()
	if src.Served() && o.linkURL(o.link) != "" {
		// The tool-server's browser reaches the build this command serves
		// through the run's tunnel, beside what --expose (else the config
		// file's expose:) names.
		if !o.exposeSet {
			c, err := flow.LoadProjectConfig(o.project)
			if err != nil {
				return badInput(err)
			}
			o.expose, o.exposeOnly = c.Expose, c.ExposeOnly
		}
		o.expose = append(o.expose, fmt.Sprintf("127.0.0.1:%d", src.Port))
		o.exposeSet = true
	}
	if err := o.resolveExpose(); err != nil {
		return err
	}
	data, err := src.ReadIndex(ctx)
	if err != nil {
		return usageError("storybook: %v", err)
	}
	index, err := storybook.Parse(data, out.note)
	if err != nil {
		return usageError("storybook: %s: %v", arg, err)
	}
	project, err := filepath.Abs(o.project)
	if err != nil {
		return err
	}
	virtual := filepath.Join(clientfs.RealPath(project), storybook.FlowFile)

	run, skipped := opts.filter.Select(index)
	if len(run) == 0 {
		n := len(index.Stories)
		out.note(fmt.Sprintf("%d %s in %sindex.json, none selected: nothing to run", n, plural(n, "story", "stories"), src.Base))
		return nil
	}

	rb, err := o.startReport(ctx, out)
	if err != nil {
		return err
	}
	runOne, done, err := o.flowRunner(virtual, out)
	if err != nil {
		return err
	}
	defer done()
	params, err := readStoryParams(ctx, src, virtual, runOne)
	if err != nil {
		return err
	}
	planner := storybook.Planner{Base: src.Base, Devices: opts.devices, Timeout: opts.timeout, Device: checkDevice}
	var targets []flowTarget
	invalid := map[string]error{}
	for _, p := range planner.Plan(run, params, func(id string) {
		skipped = append(skipped, id+" (parameters.toolserver.skip)")
	}) {
		targets = append(targets, flowTarget{Name: p.ID, Path: virtual, Data: p.Flow, Device: p.Device})
		if p.Err != nil {
			invalid[p.ID] = p.Err
		}
	}
	if len(skipped) > 0 {
		out.note(fmt.Sprintf("skipping %d %s: %s", len(skipped), plural(len(skipped), "story", "stories"), strings.Join(skipped, ", ")))
	}
	if o.shard.N > 0 {
		all := len(targets)
		if targets = o.shard.Of(targets); len(targets) == 0 {
			out.note(fmt.Sprintf("shard %s has no stories (%d in all): nothing to run", o.shard.String(), all))
			return nil
		}
	}
	if len(targets) == 0 {
		out.note("no story left to run")
		return nil
	}
	checked := func(ctx context.Context, t flowTarget, worker int, out *renderer) (*flow.Report, int, []flowrun.Plan, error) {
		if err := invalid[t.Name]; err != nil {
			return nil, 0, nil, err
		}
		return runOne(ctx, t, worker, out)
	}
	return o.runAll(ctx, virtual, targets, checked, rb, out, format)
}

// checkDevices checks a list of device ids.
func checkDevices(what string, ids []string) error {
	return storybook.CheckDevices(what, ids, checkDevice)
}

// checkDevice checks a device id as the pool will read it.
func checkDevice(id string) error {
	_, _, err := cdp.ParseID(id)
	return err
}

// readStoryParams reads every story's parameters.toolserver from the
// preview: a flow that opens iframe.html and calls storybook-stories on
// the run's first device, run by the run's own runner (in-process or
// over the link, through its tunnel).
func readStoryParams(ctx context.Context, src *storybook.Source, virtual string, runOne runFlow) (map[string]storybook.Extracted, error) {
	data, err := storybook.StoriesFlow(src.Base)
	if err != nil {
		return nil, err
	}
	quiet := newRenderer(io.Discard, io.Discard, false)
	rep, _, _, err := runOne(ctx, flowTarget{Name: "storybook-stories", Path: virtual, Data: data}, 0, quiet)
	if err != nil {
		return nil, fmt.Errorf("storybook: reading the stories' parameters from %siframe.html: %w", src.Base, err)
	}
	for _, s := range rep.Steps {
		if s.Status != flow.StatusPass {
			return nil, failed(fmt.Errorf("storybook: reading the stories' parameters from %siframe.html: step %d (%s): %s", src.Base, s.Index+1, s.Kind, printableLines(s.Reason)))
		}
	}
	var res storybook.Stories
	if n := len(rep.Steps); n == 0 || json.Unmarshal(rep.Steps[n-1].Result, &res) != nil {
		return nil, failed(fmt.Errorf("storybook: %s answered no stories", storybooktool.ToolStories))
	}
	return res.Stories, nil
}
