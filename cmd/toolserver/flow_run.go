package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/toolserver/toolserver/device/cdp"
	"github.com/toolserver/toolserver/flow"
	"github.com/toolserver/toolserver/internal/atomicfile"
	"github.com/toolserver/toolserver/tool"
	"github.com/toolserver/toolserver/tool/devicetool"
	"github.com/toolserver/toolserver/tool/flowtool"
)

// flowRunFlags are the flags of toolserver flow run.
type flowRunFlags struct {
	project, device, output, junit, link string
	update, asJSON, recursive            bool
}

func runFlowRun(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var f flowRunFlags
	fs := flag.NewFlagSet("flow run", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&f.project, "project", ".", "the project directory (names resolve in <project>/.argent/flows)")
	fs.StringVar(&f.device, "device", "chromium-cdp-1280x800", "the device: chromium-cdp-<W>x<H>")
	fs.BoolVar(&f.update, "update-baselines", false, "adopt the current screens as baselines instead of comparing")
	fs.StringVar(&f.output, "output", "", "write baseline, current and diff PNGs of failed snapshots to DIR/<flow>/")
	fs.BoolVar(&f.asJSON, "json", false, "print the raw report on stdout; progress and warnings go to stderr as JSON")
	fs.BoolVar(&f.recursive, "r", false, "with a directory: also run the flows in its subdirectories")
	fs.BoolVar(&f.recursive, "recursive", false, "same as -r")
	fs.StringVar(&f.junit, "junit", "", "also write a JUnit XML report to FILE")
	fs.StringVar(&f.link, "link", "", "run on the tool-server at URL, sending the flow's files with the call (default $"+envToolsURL+"; token from $"+envAuthToken+")")
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return withExit(exitUsage, err)
	}
	if len(pos) != 1 {
		return usageError("usage: toolserver flow run <name|file.yaml|dir> [--project DIR] [--device chromium-cdp-WxH] [--update-baselines] [--output DIR] [--json] [-r] [--junit FILE] [--link URL]")
	}
	out := newRenderer(stdout, stderr, f.asJSON)
	targets, err := resolveTargets(f.project, pos[0], f.recursive, out.note)
	if err != nil {
		return err
	}
	// runOne runs one flow: in-process, or on a tool-server over a link.
	// notWritten counts the baselines of the result the client refused.
	var runOne func(ctx context.Context, t flowTarget) (rep *flow.Report, notWritten int, err error)
	if u := linkURL(f.link); u != "" {
		lr, err := newLinkedRun(u, pos[0], f, out)
		if err != nil {
			return err
		}
		runOne = lr.run
	} else {
		a, err := newApp(appOptions{stderr: stderr})
		if err != nil {
			return err
		}
		defer a.Close()
		runOne = func(ctx context.Context, t flowTarget) (*flow.Report, int, error) {
			rep, err := a.runLocalFlow(ctx, t, f, out)
			return rep, 0, err
		}
	}

	var reports []*flow.Report
	failed := false
	for _, t := range targets {
		if ctx.Err() != nil {
			break
		}
		rep, notWritten, err := runOne(ctx, t)
		var infra *infraError
		switch {
		case errors.As(err, &infra):
			return withExit(exitInfra, infra.err)
		case err != nil:
			failed = true
			out.rejected(t.name, err)
			reports = append(reports, rejectedReport(t.name, f.device, err))
			continue
		}
		reports = append(reports, rep)
		out.finished(rep)
		// A baseline the client did not write fails the run (seed,
		// "Baselines in the result").
		if !rep.OK || notWritten > 0 {
			failed = true
		}
	}
	if f.asJSON {
		var v any = reports
		if len(reports) == 1 {
			v = reports[0]
		}
		if err := printJSON(stdout, v); err != nil {
			return err
		}
	} else if len(reports) > 1 {
		out.total(reports)
	}
	if f.junit != "" {
		if err := writeJUnit(f.junit, reports); err != nil {
			return withExit(exitInfra, fmt.Errorf("--junit %s: %w", f.junit, err))
		}
	}
	if ctx.Err() != nil {
		return withExit(exitInfra, errors.New("interrupted"))
	}
	if failed {
		return silentExit(exitFailed)
	}
	return nil
}

// infraError is a failure of the machinery, not of a flow: exit 2.
type infraError struct{ err error }

func (e *infraError) Error() string { return e.err.Error() }

// rejectedReport stands for a flow rejected before its first step in the
// JSON and JUnit outputs.
func rejectedReport(name, device string, err error) *flow.Report {
	return &flow.Report{Flow: name, Device: device, Errored: 1, Steps: []flow.StepReport{},
		Warnings: []string{"not run: " + err.Error()}}
}

// runLocalFlow runs one flow in-process on the app's device pool.
func (a *app) runLocalFlow(ctx context.Context, t flowTarget, f flowRunFlags, out *renderer) (*flow.Report, error) {
	file, err := flow.Disk{}.OpenFile(t.path)
	if err != nil {
		return nil, err
	}
	entry := flow.Entry{File: file, Name: t.name, StemFallback: filepath.Base(t.name)}
	if _, err := flow.Prepare(entry); err != nil {
		return nil, err
	}
	d, err := a.pool.Device(ctx, f.device)
	if err != nil {
		if errors.Is(err, cdp.ErrNoChromium) {
			return nil, &infraError{err}
		}
		if te := devicetool.DeviceError(err); tool.AsError(te).HTTPStatus() == 400 {
			return nil, &infraError{withExit(exitUsage, fmt.Errorf("--device: %w", err))}
		}
		return nil, &infraError{err}
	}
	opts := flow.Options{
		Device:          flowtool.Device{D: d},
		Source:          flow.Disk{},
		UpdateBaselines: f.update,
		Tools:           a.flowTools.Caller(),
		Progress:        out.progress,
	}
	if f.output != "" {
		opts.Artifacts = outputSink{dir: f.output}
	}
	out.start(t.name, d.ID())
	return flow.Execute(ctx, opts, entry)
}

// outputSink writes the images of failed snapshots to DIR/<flow>/.
type outputSink struct{ dir string }

func (s outputSink) Put(fl, name, mime string, data []byte) (any, error) {
	p := filepath.Join(s.dir, filepath.FromSlash(fl), name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return nil, err
	}
	if err := atomicfile.WriteFile(p, data); err != nil {
		return nil, err
	}
	return p, nil
}

// seconds renders a duration in milliseconds as 1.2s.
func seconds(ms float64) string {
	return fmt.Sprintf("%.1fs", time.Duration(ms*float64(time.Millisecond)).Seconds())
}
