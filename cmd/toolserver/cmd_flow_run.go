package main

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/toolserver/toolserver/fault"
	"github.com/toolserver/toolserver/flow"
	flowrun "github.com/toolserver/toolserver/flow/run"
	"github.com/toolserver/toolserver/report"
	"github.com/toolserver/toolserver/report/junit"
	"github.com/toolserver/toolserver/suite"
	"github.com/toolserver/toolserver/suite/linked"
	"github.com/toolserver/toolserver/suite/local"
	"github.com/toolserver/toolserver/wire"
)

// flowRunOptions are the flags of flow run.
type flowRunOptions struct {
	streams
	project, device, artifacts, junit, link string
	// command is the command that runs the flows, as its messages name
	// it: "" is flow run; storybook runs a flow per story.
	command string
	// summary is --summary FILE and noSummary --no-summary: the run's
	// Markdown summary (by default appended to $GITHUB_STEP_SUMMARY).
	summary   string
	noSummary bool
	// summarySet tells --summary given, to refuse --summary ''.
	summarySet bool
	// reportDir is --report (or $TOOLSERVER_REPORT): the HTML report's
	// directory.
	reportDir         string
	recursive, dryRun bool
	// update is --update-baselines[=all|changed|missing].
	update flowrun.Update
	// strict is --strict: Playwright's strict mode (flowrun.Options.Strict).
	strict bool
	// detach is --detach: start the runs on the tool-server (POST
	// /v1/runs) and print their ids; labels are their --label values.
	detach bool
	labels []string
	// workers is --workers: flows at once; shard is --shard i/n.
	workers int
	shard   shardFlag
	// workersSet tells --workers given from its default (several --link
	// URLs then default to one worker each).
	workersSet bool
	// format is -o/--output json|yaml (or --json); outputDir is a value of
	// --output that is not a format: the artifacts directory, as --output
	// named it before --artifacts.
	format, outputDir string
	json              bool
	// limits are --max-mismatch, --max-diff-pixels and --threshold;
	// snapshot is the run's limits, the config file's under them.
	limits   snapshotLimitFlags
	snapshot flow.SnapshotDefaults
	// baseURL is what a launch: /path resolves against: --base-url, else
	// $TOOLSERVER_BASE_URL, else the config file's baseURL.
	baseURL string
	// expose is --expose (else the config file's expose), exposeOnly
	// --expose-only: the tunnel of a linked run; exposeSet tells the
	// flags given, which a local run refuses.
	expose     []string
	exposeOnly bool
	exposeSet  bool
	// exposed are the targets of expose, as resolveExpose read them.
	exposed wire.Targets
}

const flowRunLong = `Run flows on a local Chromium, or with --link on a tool-server. The argument
is a flow name (<project>/.argent/flows/<name>.yaml), a .yaml file, or a
directory of flows (its subdirectories too with -r). A directory run skips
fragments, files that do not start with launch:; they run inside the flows
that run: them.

Progress prints one line per step on stdout; with -o json|yaml the report
goes to stdout in that format (one object, or a list for several flows) and
progress and warnings go to stderr as JSON lines.

--update-baselines adopts the current screens as baselines; its value
needs the =. all (a bare --update-baselines) adopts every snapshot without
comparing; =changed compares and adopts the snapshots that fail their
comparison or have no baseline, keeping the failure's images and reason;
=missing compares and adopts only those with no baseline. A capture with
the bytes of its baseline writes nothing ("baseline unchanged"). With
--dry-run it runs the flows the same way but writes no baseline: it lists
each baseline it would write or update with its size (and -o json|yaml adds
them to the report as wouldWriteBaselines). --junit and --artifacts are still
written in a dry run: they are outputs asked for, not changes to the
project.

--strict is Playwright's strict mode. A selector that matches several
elements as well (six "Add to basket" buttons) fails its step instead of
acting on the first with a warning, and equals: and contains: compare
case instead of ignoring it. Over --link the tool-server runs the flow
strictly (flow-execute's strict argument). Without it every flow means
what it means to Argent.

--report DIR (or $TOOLSERVER_REPORT) writes the run's HTML report when it
ends: DIR/index.html opens from file:// and shows each failed snapshot's
baseline, capture and diff (side by side, slider, onion skin, diff), with
report.json and images/ beside it. toolserver report serve DIR serves it
with approve buttons; toolserver approve --report DIR adopts its captures
as baselines.

--summary FILE writes the run in Markdown, for a CI step summary or a
pull request's comment: the counts, each failed or new snapshot with its
flow, step, element and mismatch, and where the report is. Without it a
run appends that summary to $GITHUB_STEP_SUMMARY when it is set (GitHub
Actions sets it for each step); --no-summary writes none.

--output DIR, the artifacts directory before --artifacts existed, still
works with a deprecation notice: a value of -o/--output that is exactly
json or yaml selects the format, any other value is the artifacts
directory.

A snapshot on a chromium-cdp-* device is strict by default: with no
maxMismatch or maxDiffPixels set anywhere, no pixel may differ (threshold
0.01, anti-aliased pixels counted), and its line says "0 px allowed (default
on chromium)". A limit set anywhere keeps Argent's meaning: maxMismatch
(percent of pixels, 0.5 when only maxDiffPixels is set), maxDiffPixels (a
count of pixels) and threshold (pixelmatch's colour threshold, 0.1). For
the snapshots that do not set one, --max-mismatch, --max-diff-pixels and
--threshold set it for the run, over the project's ` + flow.ConfigFile + `
(snapshot: { maxMismatch, maxDiffPixels, threshold, stopOnFailure };
toolserver flow schema --config prints its schema), over the built-in
default. With --link the client sends what it resolved with the call. A
passing snapshot costs one capture when its first matches the baseline; a
mismatch is compared once the page has settled, and a failure names the
element under each of the largest changed areas.

A failed snapshot comparison does not stop its flow on a chromium-cdp-*
device: later snapshots are compared too, and the flow fails (exit 1) at
its end with every changed snapshot in its report. Any other failed step
stops the flow. stopOnFailure: true on a snapshot, or in the project's
` + flow.ConfigFile + `, stops at the first failed snapshot, as Argent does.

Beyond Argent's directives and snapshot keys, a flow may use press: (a key
or a chord, press: Control+A) and the snapshot keys mask, maskColor, hide,
fullPage (baseline <name>__chromium-<W>x<H>-full.png), threshold,
maxDiffPixels, style, stylePath and stopOnFailure; toolserver flow schema
describes each.`

func newFlowRunCommand(s streams) *cobra.Command {
	opts := flowRunOptions{streams: s}
	cmd := &cobra.Command{
		Use:   "run <name|file.yaml|dir> [flags]",
		Short: "Run flows",
		Long:  flowRunLong,
		Example: `  toolserver flow run checkout
  toolserver flow run .argent/flows -r --artifacts flow-artifacts --junit junit.xml
  toolserver flow run checkout --update-baselines --dry-run
  toolserver flow run .argent/flows -r --update-baselines=changed
  toolserver flow run checkout --link http://host:3000 -o json`,
		Args:              exactArgs(1, "one flow name, .yaml file or directory"),
		ValidArgsFunction: completeFlowNames,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.workersSet = cmd.Flags().Changed("workers")
			opts.summarySet = cmd.Flags().Changed("summary")
			opts.exposeSet = cmd.Flags().Changed("expose") || cmd.Flags().Changed("expose-only")
			return runFlowRun(cmd.Context(), opts, args)
		},
	}
	setExitStatus(cmd, exitStatusFlowRun)
	f := cmd.Flags()
	f.StringVar(&opts.project, "project", ".", "the project `DIR` (names resolve in <project>/.argent/flows)")
	f.StringVar(&opts.device, "device", "chromium-cdp-1280x800", "the device `ID`: chromium-cdp-<W>x<H>")
	f.Var(updateFlag{&opts.update}, "update-baselines", "adopt the current screens as baselines: all (a bare flag), changed (the failed and missing ones) or missing")
	f.Lookup("update-baselines").NoOptDefVal = string(flowrun.UpdateAll)
	f.BoolVar(&opts.dryRun, "dry-run", false, "write no baseline; list the baselines the run would write or update (with --detach: start nothing; print the runs it would start)")
	f.StringVar(&opts.baseURL, "base-url", "", "resolve a launch: /path against `URL` (default $"+envBaseURL+", else baseURL: in "+flow.ConfigFile+"); over --link it is sent with the call")
	f.StringArrayVar(&opts.expose, "expose", nil, "with --link: the tool-server's browser reaches `TARGET` of this machine through a tunnel (localhost:5173, 127.0.0.1:8080, or localhost for every port; repeatable; default expose: in "+flow.ConfigFile+"), and a relative launch: path is served from this project")
	f.BoolVar(&opts.exposeOnly, "expose-only", false, "with --expose: the tool-server's browser reaches nothing but the exposed targets and this project's files")
	f.BoolVar(&opts.strict, "strict", false, "fail a step whose selector matches several elements, and compare case in equals:/contains:")
	f.StringVar(&opts.artifacts, "artifacts", "", "write baseline, current and diff PNGs of failed snapshots to `DIR`/<flow>/")
	f.VarP(flowOutputValue{&opts}, "output", "o", "print the report as json or yaml (any other value: the deprecated spelling of --artifacts DIR)")
	f.BoolVar(&opts.json, "json", false, "same as -o json")
	f.BoolVarP(&opts.recursive, "recursive", "r", false, "with a directory: also run the flows in its subdirectories")
	f.StringVar(&opts.junit, "junit", "", "also write a JUnit XML report to `FILE` (a failed snapshot's images as [[ATTACHMENT|path]])")
	f.StringVar(&opts.summary, "summary", "", "write a Markdown summary of the run to `FILE` (default: appended to $"+envStepSummary+" when it is set)")
	f.BoolVar(&opts.noSummary, "no-summary", false, "write no Markdown summary, not even to $"+envStepSummary)
	f.StringVar(&opts.reportDir, "report", "", "write the HTML report of the run to `DIR` (index.html, report.json, images/; default $"+envReport+")")
	opts.limits.register(f)
	f.IntVar(&opts.workers, "workers", 1, "run `N` flows at once, each on a device of its own (a page and browser contexts of its own)")
	f.Var(&opts.shard, "shard", "run shard `i/n` of the sorted flows (Playwright's split: CI jobs 1/n … n/n cover every flow once)")
	f.BoolVar(&opts.detach, "detach", false, "with --link: start each flow as a run of the tool-server and print its id, without waiting (toolserver runs events ID follows it)")
	f.StringArrayVar(&opts.labels, "label", nil, "with --detach: label the runs `KEY:VALUE` (repeatable)")
	f.StringVar(&opts.link, "link", "", "run on the tool-server at `URL` (several, comma-separated: flows spread over them), sending the flow's files with the call (default $"+envToolsURL+"; token from $"+envAuthToken+")")
	_ = cmd.MarkFlagDirname("project")
	_ = cmd.MarkFlagDirname("artifacts")
	_ = cmd.MarkFlagDirname("report")
	_ = cmd.MarkFlagFilename("junit", "xml")
	_ = cmd.MarkFlagFilename("summary", "md")
	_ = cmd.RegisterFlagCompletionFunc("device", completeDevices)
	completeFormats(cmd, "output")
	return cmd
}

// flowOutputValue is flow run's -o/--output: a format, or the artifacts
// directory that --output named before --artifacts took that role.
type flowOutputValue struct{ o *flowRunOptions }

func (v flowOutputValue) String() string {
	if v.o.outputDir != "" {
		return v.o.outputDir
	}
	return v.o.format
}

func (v flowOutputValue) Set(s string) error {
	switch s {
	case formatJSON, formatYAML:
		v.o.format, v.o.outputDir = s, ""
	case "":
		return errors.New("want json, yaml or (deprecated) a directory")
	default:
		v.o.format, v.o.outputDir = "", s
	}
	return nil
}

func (v flowOutputValue) Type() string { return "json|yaml" }

// runFlowRun runs the flows args[0] names and reports them.
func runFlowRun(ctx context.Context, opts flowRunOptions, args []string) error {
	format, err := opts.resolveFormat()
	if err != nil {
		return err
	}
	out := newRenderer(opts.stdout, opts.stderr, format != "")
	if opts.outputDir != "" {
		out.warn("--output DIR is deprecated; use --artifacts DIR")
		if opts.artifacts != "" && opts.artifacts != opts.outputDir {
			return usageError("flow run: --output %s and --artifacts %s name two artifacts directories; give --artifacts only", opts.outputDir, opts.artifacts)
		}
		opts.artifacts = opts.outputDir
	}
	out.dryRun = opts.dryRun
	targets, err := suite.Resolve(opts.project, args[0], opts.recursive, out.note)
	var te *suite.TargetError
	switch {
	case errors.As(err, &te):
		return usageError("flow run: %v", err)
	case err != nil:
		return fmt.Errorf("flow run: %w", err)
	}
	if opts.snapshot, err = opts.limits.snapshotDefaults(opts.project); err != nil {
		return err
	}
	if opts.baseURL, err = resolveBaseURL(opts.baseURL, opts.getenv, opts.project); err != nil {
		return err
	}
	if err := opts.resolveExpose(); err != nil {
		return err
	}
	if err := opts.checkSummary(); err != nil {
		return err
	}
	if opts.workers < 1 || opts.workers > suite.MaxWorkers {
		return usageError("flow run: --workers %d: want 1 to %d", opts.workers, suite.MaxWorkers)
	}
	if opts.shard.N > 0 {
		all := len(targets)
		if targets = opts.shard.Of(targets); len(targets) == 0 {
			out.note(fmt.Sprintf("shard %s has no flows (%d %s in all): nothing to run", opts.shard.String(), all, plural(all, "flow", "flows")))
			return nil
		}
	}
	if opts.detach || len(opts.labels) > 0 {
		return runDetached(ctx, opts, args[0], targets, format)
	}
	rb, err := opts.startReport(ctx, out)
	if err != nil {
		return err
	}
	runOne, done, err := opts.flowRunner(args[0], out)
	if err != nil {
		return err
	}
	defer done()
	return opts.runAll(ctx, args[0], targets, runOne, rb, out, format)
}

// flowTarget is one flow file a run names.
type flowTarget = suite.Target

// runAll runs the targets, workers at a time, with runOne (suite.Run),
// then prints and writes the run's outputs (the data of -o or the totals,
// the HTML report rb, JUnit) and returns what the run ends with: flow
// run's and toolserver storybook's one way of running and reporting
// flows. With one worker each flow's lines go to out as they happen; with
// several, each flow prints to a buffer of its own, which goes to out
// whole when the flow ends, so two flows' lines never interleave.
func (o *flowRunOptions) runAll(ctx context.Context, arg string, targets []flowTarget, runOne runFlow, rb *report.Builder, out *renderer, format string) error {
	var mu sync.Mutex // out, while a flow's block is printed
	results := suite.Run(ctx, targets, o.workers, func(ctx context.Context, t flowTarget, worker int) suite.Result {
		mine := out
		var stdout, stderr bytes.Buffer
		if o.workers > 1 {
			mine = newRenderer(&stdout, &stderr, out.asJSON)
			mine.dryRun = out.dryRun
		}
		rep, notWritten, planned, err := runOne(ctx, t, worker, mine)
		switch {
		case isUsage(err):
		case fault.IsInfrastructure(err):
			mine.broke(t.Name, err)
		case err != nil:
			mine.rejected(t.Name, err)
		default:
			mine.finished(rep)
		}
		if o.workers > 1 {
			mu.Lock()
			out.stdout.Write(stdout.Bytes())
			out.stderr.Write(stderr.Bytes())
			mu.Unlock()
		}
		return suite.Result{Report: rep, NotWritten: notWritten, Plans: planned, Err: err, Stop: isUsage(err)}
	})
	res, err := suite.Collect(targets, results, o.device, o.dryRun)
	if err != nil {
		return err
	}
	var unused []string
	if rb != nil {
		unused = suite.Unused(o.project, arg, o.recursive, o.shard.Shard)
	}
	if err := o.writeOutputs(format, out, rb, res.Reports, res.Plans, unused); err != nil {
		return err
	}
	if ctx.Err() != nil {
		return errors.New("interrupted")
	}
	return flowRunError(suite.Reports(res.Reports), cmp.Or(res.Broken, res.Failure))
}

// resolveFormat is the output format -o and --json ask for.
func (o *flowRunOptions) resolveFormat() (string, error) {
	format := o.format
	if o.json {
		if format == formatYAML {
			return "", usageError("--json and -o yaml ask for two formats; give one")
		}
		format = formatJSON
	}
	return format, nil
}

// runFlow runs one flow: in-process, or on a tool-server over a link.
// notWritten counts the baselines of the result the client refused;
// plans are the baselines a dry run would have written.
type runFlow func(ctx context.Context, t flowTarget, worker int, out *renderer) (rep *flow.Report, notWritten int, plans []flowrun.Plan, err error)

// flowRunner returns how this run runs each flow, and what to call when
// the run ends: over the --link URLs, or on an in-process device pool.
func (o *flowRunOptions) flowRunner(arg string, out *renderer) (runFlow, func(), error) {
	if u := o.linkURL(o.link); u != "" {
		urls := linked.URLs(u)
		if len(urls) > 1 && !o.workersSet {
			o.workers = len(urls)
		}
		return newSpread(urls, arg, *o, out)
	}
	a, err := newApp(appOptions{stderr: o.stderr, pool: o.pool, maxDevices: max(defaultMaxDevices, o.workers)})
	if err != nil {
		return nil, nil, err
	}
	opts := *o
	return func(ctx context.Context, t flowTarget, worker int, out *renderer) (*flow.Report, int, []flowrun.Plan, error) {
		rep, plans, err := a.runLocalFlow(ctx, t, worker, opts, out)
		return rep, 0, plans, err
	}, a.Close, nil
}

// writeOutputs prints the reports (as data with -o, else the totals and
// the dry run's plans) and writes the HTML report, ending with the unused
// baselines, the JUnit file and the Markdown summary.
func (o *flowRunOptions) writeOutputs(format string, out *renderer, rb *report.Builder, reports []suite.Report, plans []flowrun.Plan, unused []string) error {
	if format != "" {
		var v any = reports
		if len(reports) == 1 {
			v = reports[0]
		}
		if err := printData(o.stdout, format, v); err != nil {
			return err
		}
	} else {
		if len(reports) > 1 {
			out.total(reports)
		}
		if o.dryRun {
			out.plans(plans)
		}
	}
	if err := finishReport(rb, reports, unused, out); err != nil {
		return err
	}
	if o.junit != "" {
		if err := junit.Write(o.junit, suite.Reports(reports)); err != nil {
			return fmt.Errorf("--junit %s: %w", o.junit, err)
		}
	}
	return o.writeSummary(rb, suite.Reports(reports))
}

// runLocalFlow runs one flow in-process on the app's device pool
// (local.Flow). In a dry run it returns the baselines it would have
// written.
func (a *app) runLocalFlow(ctx context.Context, t flowTarget, worker int, o flowRunOptions, out *renderer) (*flow.Report, []flowrun.Plan, error) {
	rep, plans, err := local.Flow(ctx, a.pool, t, worker, local.Options{
		Device:    o.device,
		Update:    o.update,
		DryRun:    o.dryRun,
		Strict:    o.strict,
		Snapshot:  o.snapshot,
		BaseURL:   o.baseURL,
		Artifacts: o.artifacts,
		Tools:     a.flowTools.Caller(),
	}, runPrinter{out})
	var de *local.DeviceError
	if errors.As(err, &de) {
		return nil, nil, badInput(fmt.Errorf("--device: %w", de.Err))
	}
	return rep, plans, err
}

// defaultMaxDevices is the in-process pool's device cap of a flow run.
const defaultMaxDevices = 4

// shardFlag is --shard i/n.
type shardFlag struct{ suite.Shard }

func (s *shardFlag) Set(v string) (err error) {
	s.Shard, err = suite.ParseShard(v)
	return err
}

func (s *shardFlag) Type() string { return "i/n" }

// seconds renders a duration in milliseconds as 1.2s.
func seconds(ms float64) string {
	return fmt.Sprintf("%.1fs", time.Duration(ms*float64(time.Millisecond)).Seconds())
}

// name is the command as its messages name it.
func (o *flowRunOptions) name() string { return cmp.Or(o.command, "flow run") }

// resolveExpose checks --expose and --expose-only, else takes the config
// file's expose: and exposeOnly:. The flags need a link; the config's
// are for linked runs only, and a local run ignores them (its browser
// reaches this machine already).
func (o *flowRunOptions) resolveExpose() error {
	linked := o.linkURL(o.link) != ""
	switch {
	case o.exposeSet && !linked:
		return usageError("%s: --expose and --expose-only are for a run over a link (--link URL or $%s): a local run's browser reaches this machine's localhost itself", o.name(), envToolsURL)
	case o.exposeSet && o.detach:
		return usageError("%s: --expose does not go with --detach: a detached run outlives this command, and the tunnel ends with it", o.name())
	case o.exposeOnly && len(o.expose) == 0:
		return usageError("%s: --expose-only needs --expose TARGET", o.name())
	case !o.exposeSet && linked && !o.detach:
		c, err := flow.LoadProjectConfig(o.project)
		if err != nil {
			return badInput(err)
		}
		o.expose, o.exposeOnly = c.Expose, c.ExposeOnly && len(c.Expose) > 0
	}
	if len(o.expose) == 0 {
		return nil
	}
	ts, err := wire.ParseTargets(o.expose)
	if err != nil {
		return usageError("%s: --expose: %v", o.name(), err)
	}
	o.exposed = ts
	return nil
}

// envBaseURL names the base URL of launch: /path when --base-url does not.
const envBaseURL = "TOOLSERVER_BASE_URL"

// resolveBaseURL is the run's base URL: the flag, else the environment,
// else the project's config file; "" when none sets one. A bad one is a
// usage error naming where it came from.
func resolveBaseURL(flag string, getenv func(string) string, project string) (string, error) {
	from, u := "--base-url", flag
	if u == "" {
		from, u = "$"+envBaseURL, getenv(envBaseURL)
	}
	if u == "" {
		c, err := flow.LoadProjectConfig(project)
		if err != nil {
			return "", badInput(err)
		}
		return c.BaseURL, nil
	}
	if err := flow.CheckBaseURL(u); err != nil {
		return "", usageError("flow run: %s: %v", from, err)
	}
	return u, nil
}
