package run

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/toolserver/toolserver/fault"
	"github.com/toolserver/toolserver/flow"
)

func (r *Runner) device() (Device, error) {
	if r.opts.Device == nil {
		return nil, errors.New("step needs a device but the run has none — pass a device such as chromium-cdp-1280x800")
	}
	return r.opts.Device, nil
}

// leaf runs a step that has no steps of its own.
func (r *Runner) leaf(ctx context.Context, fr *frame, s *flow.Step) outcome {
	if err := s.ChromiumUnsupported(); err != nil {
		return outcome{status: flow.StatusFail, reason: strings.TrimPrefix(err.Error(), flow.ErrUnsupported.Error()+": ")}
	}
	switch d := s.Directive.(type) {
	case *flow.Echo:
		return outcome{status: flow.StatusPass}
	case *flow.Wait:
		if !sleep(ctx, d.Duration) {
			return outcome{status: flow.StatusSkip, reason: "run aborted during wait"}
		}
		return outcome{status: flow.StatusPass}
	case *flow.Script:
		return r.script(ctx, fr, d)
	case *flow.Tool:
		return r.tool(ctx, d)
	}
	dev, err := r.device()
	if err != nil {
		return errored("%v", err)
	}
	switch d := s.Directive.(type) {
	case *flow.Launch:
		return r.launch(ctx, fr, dev, d)
	case *flow.Tap:
		return r.tap(ctx, dev, d.On, d.Point, d.X, d.Y, d.Times, 0)
	case *flow.LongPress:
		return r.tap(ctx, dev, d.On, d.Point, d.X, d.Y, 1, d.Duration)
	case *flow.Type:
		return r.typeText(ctx, dev, d)
	case *flow.ScrollTo:
		return r.scrollTo(ctx, dev, d)
	case *flow.Await:
		if d.Condition.Kind == flow.CondIdle {
			return r.idle(ctx, dev, d)
		}
		return r.check(ctx, dev, d.Condition, d.Timeout)
	case *flow.Assert:
		return r.check(ctx, dev, d.Condition, flow.AssertGrace)
	case *flow.Snapshot:
		return r.snapshot(ctx, fr, dev, d)
	case *flow.Press:
		if err := dev.Press(ctx, d.Key, d.Times); err != nil {
			return errored("press %s: %v", d.Key, err)
		}
		return outcome{status: flow.StatusPass}
	}
	return errored("unsupported step kind")
}

// launch opens a fresh browser context on a URL, or on a file beside the
// flow file (local runs only).
func (r *Runner) launch(ctx context.Context, fr *frame, dev Device, d *flow.Launch) outcome {
	t, ok := d.ChromiumTarget()
	if !ok {
		return errored("no app id declared for platform %q — add a launch entry for it", r.opts.Platform)
	}
	u := t
	if abs, ok := flow.ResolveLaunch(t, r.opts.BaseURL); ok {
		u = abs
	} else if !flow.IsLaunchURL(t) {
		if NeedsBaseURL(t, r.opts.Linked) {
			return errored("launch %q %s", t, BaseURLHelp)
		}
		p := t
		if !filepath.IsAbs(p) {
			p = filepath.Join(fr.file.Dir(), p)
		}
		switch {
		case r.opts.Linked && r.opts.ClientFileURL != nil:
			// The client serves it, beside the flow file on its machine.
			u = r.opts.ClientFileURL(p)
		case r.opts.Linked:
			return errored("launch %q: %s", t, RelativeLaunchHelp)
		default:
			if _, err := os.Stat(p); err != nil {
				return errored("launch %q: %v", t, err)
			}
			u = (&url.URL{Scheme: "file", Path: filepath.ToSlash(p)}).String()
		}
	}
	if err := dev.Launch(ctx, u); err != nil {
		return errored("launch %s: %v", u, err)
	}
	return outcome{status: flow.StatusPass}
}

// tap clicks an element's centre (auto-waiting for it) or a point. Its
// report names the element; when the selector matched several, it warns
// (Argent taps the best match) or, in strict mode, fails without tapping.
func (r *Runner) tap(ctx context.Context, dev Device, on *flow.Selector, point bool, x, y float64, times int, hold time.Duration) outcome {
	w, h := dev.Size()
	cx, cy := x*float64(w), y*float64(h)
	verb := "tapped"
	if hold > 0 {
		verb = "long-pressed"
	}
	var acted *flow.StepElement
	var covered *Element
	if !point {
		el, err := dev.Locate(ctx, on, flow.DefaultAwaitTimeout)
		if err != nil {
			return errored("%v", err)
		}
		if el == nil {
			return r.notFound(ctx, dev, on)
		}
		acted = actedOn(el, w, h)
		if acted.Matches > 1 && r.opts.Strict {
			return severalFailure(verb, on, acted)
		}
		covered = el.CoveredBy
		if covered != nil && r.opts.Strict {
			return fail("%s", coveredReason(verb, on, acted, actedOn(covered, w, h), true))
		}
		cx, cy = el.CenterX, el.CenterY
	}
	if err := dev.Tap(ctx, cx, cy, max(times, 1), hold); err != nil {
		return errored("%v", err)
	}
	out := outcome{status: flow.StatusPass, element: acted}
	var warnings []string
	if acted != nil && acted.Matches > 1 {
		warnings = append(warnings, severalWarning(verb, on, acted))
	}
	if covered != nil {
		// Argent taps the point whatever is on top; say when that is not
		// the element, or the report reads ✓ for a tap that missed.
		warnings = append(warnings, coveredReason(verb, on, acted, actedOn(covered, w, h), false))
	}
	out.warning = strings.Join(warnings, "; ")
	return out
}

var secretRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\{\{secret:([A-Za-z_][A-Za-z0-9_]*)\}\}`) })

func (r *Runner) secret(name string) (string, bool) {
	if r.opts.Secret != nil {
		return r.opts.Secret(name)
	}
	if v, ok := os.LookupEnv("ARGENT_SECRET_" + name); ok {
		return v, true
	}
	return os.LookupEnv(name)
}

// fill replaces each {{secret:NAME}} placeholder by its value.
func (r *Runner) fill(text string) (string, error) {
	var missing []string
	out := secretRE().ReplaceAllStringFunc(text, func(m string) string {
		name := secretRE().FindStringSubmatch(m)[1]
		v, ok := r.secret(name)
		if !ok {
			missing = append(missing, name)
			return m
		}
		return v
	})
	if len(missing) > 0 {
		return "", fmt.Errorf("unknown secret %q — the tool-server's environment defines neither ARGENT_SECRET_%s nor %s; set one of them where the tool-server runs (never in the flow file)", missing[0], missing[0], missing[0])
	}
	return out, nil
}

// redact puts the placeholders back wherever a secret's value would show.
func (r *Runner) redact(s string) string {
	if s == "" {
		return s
	}
	return r.redactIn(s)
}

func (r *Runner) redactIn(s string) string {
	for _, st := range r.secretsUsed {
		if st.value != "" {
			s = strings.ReplaceAll(s, st.value, "{{secret:"+st.name+"}}")
		}
	}
	return s
}

type usedSecret struct{ name, value string }

func (r *Runner) typeText(ctx context.Context, dev Device, d *flow.Type) outcome {
	for _, name := range d.Secrets {
		if v, ok := r.secret(name); ok {
			r.secretsUsed = append(r.secretsUsed, usedSecret{name, v})
		}
	}
	text, err := r.fill(d.Text)
	if err != nil {
		return errored("%v", err)
	}
	w, h := dev.Size()
	if r.opts.Strict {
		// Fill types as soon as it finds the field: strict mode looks
		// first, so several matches type nothing.
		el, err := dev.Locate(ctx, d.Into, flow.DefaultAwaitTimeout)
		if err != nil {
			return errored("%v", err)
		}
		if el == nil {
			return r.notFound(ctx, dev, d.Into)
		}
		if acted := actedOn(el, w, h); acted.Matches > 1 {
			return severalFailure("typed into", d.Into, acted)
		}
	}
	el, err := dev.Fill(ctx, d.Into, text, d.Submit, flow.DefaultAwaitTimeout)
	if err != nil {
		o := errored("%s", r.redactIn(err.Error()))
		o.err = err
		return o
	}
	if el == nil {
		return r.notFound(ctx, dev, d.Into)
	}
	out := outcome{status: flow.StatusPass, element: actedOn(el, w, h)}
	if out.element.Matches > 1 {
		out.warning = severalWarning("typed into", d.Into, out.element)
	}
	return out
}

// scrollTo wheel-scrolls the page (or a container) until the target is
// visible, at most scrollTries wheels or the await timeout.
func (r *Runner) scrollTo(ctx context.Context, dev Device, d *flow.ScrollTo) outcome {
	const scrollTries = 40
	w, h := dev.Size()
	px, py := 0.5, 0.5
	if d.Within != nil {
		el, err := dev.Locate(ctx, d.Within, flow.DefaultAwaitTimeout)
		if err != nil {
			return errored("%v", err)
		}
		if el == nil {
			return r.notFound(ctx, dev, d.Within)
		}
		px, py = el.CenterX/float64(w), el.CenterY/float64(h)
	}
	dx, dy := 0.0, 0.6*float64(h)
	switch d.Direction {
	case "up":
		dy = -dy
	case "left":
		dx, dy = -0.6*float64(w), 0
	case "right":
		dx, dy = 0.6*float64(w), 0
	}
	deadline := time.Now().Add(flow.DefaultAwaitTimeout)
	for i := 0; ; i++ {
		out, err := dev.Check(ctx, flow.Condition{Kind: flow.CondVisible, Selector: d.Target}, 0)
		if err != nil {
			return errored("%v", err)
		}
		if out.OK {
			return outcome{status: flow.StatusPass, element: actedOn(out.Element, w, h)}
		}
		if i >= scrollTries || time.Now().After(deadline) {
			return fail("no visible element matched selector %s after scrolling %s %d times", d.Target, or(d.Direction, "down"), i)
		}
		if err := dev.Scroll(ctx, px, py, dx, dy); err != nil {
			return errored("%v", err)
		}
	}
}

func or(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// condition is c as this run checks it: in strict mode, contains and
// equals compare case.
func (r *Runner) condition(c flow.Condition) flow.Condition {
	c.MatchCase = r.opts.Strict
	return c
}

// check evaluates an await or assert condition.
func (r *Runner) check(ctx context.Context, dev Device, c flow.Condition, timeout time.Duration) outcome {
	c = r.condition(c)
	out, err := dev.Check(ctx, c, timeout)
	if fault.IsInfrastructure(err) {
		// The browser is gone: the step could not run, it did not fail.
		return errored("could not read the page: %v", err)
	}
	if err != nil {
		return fail("could not read the page: %v", err)
	}
	if out.OK {
		return outcome{status: flow.StatusPass}
	}
	sel := c.Selector
	switch c.Kind {
	case flow.CondExists:
		return fail("no element matched selector %s", sel)
	case flow.CondVisible:
		if out.Element != nil {
			return fail("element(s) matched %s but none was visible", sel)
		}
		return fail("no element matched selector %s", sel)
	case flow.CondHidden:
		return fail("an element matching %s was still visible", sel)
	case flow.CondText:
		if out.Element == nil {
			return fail("no element matched selector %s", sel)
		}
		want := fmt.Sprintf("wanted to %s %q", map[flow.TextMatch]string{flow.MatchContains: "contain", flow.MatchEquals: "equal"}[c.Match], c.Expected)
		if c.Match == flow.MatchMatches {
			want = "wanted to match /" + c.Expected + "/"
		} else if c.MatchCase {
			want += ", matching case in strict mode"
		}
		return fail("element matched %s but its text was %q (%s)", sel, r.redactIn(out.Element.Text), want)
	}
	return fail("assertion failed for selector %s", sel)
}

// idle waits for the page to settle; it never fails a run.
func (r *Runner) idle(ctx context.Context, dev Device, d *flow.Await) outcome {
	ok, err := dev.Idle(ctx, d.Condition.StableFor, d.Timeout)
	if err != nil {
		if ctx.Err() != nil {
			return outcome{status: flow.StatusSkip, reason: "run aborted"}
		}
		if fault.IsInfrastructure(err) {
			// A dead browser is not a page that never settles.
			return errored("could not tell whether the page settled: %v", err)
		}
		return outcome{status: flow.StatusPass, warning: fmt.Sprintf("could not tell whether the page settled (%v); went ahead without waiting", err)}
	}
	if !ok {
		return outcome{status: flow.StatusPass, warning: fmt.Sprintf("the page never held still for %dms within %dms, so this step went ahead without waiting it out. Something on it never stops (a video, a looping animation, a carousel, live-updating text) or it never finished loading; gate the next action on a stable element rather than on stillness.", d.Condition.StableFor.Milliseconds(), d.Timeout.Milliseconds())}
	}
	return outcome{status: flow.StatusPass}
}

// tool calls a server tool for a tool: step.
func (r *Runner) tool(ctx context.Context, d *flow.Tool) outcome {
	if r.opts.Tools == nil {
		return errored("tool %s: this run has no tools", d.Name)
	}
	args := make(map[string]any, len(d.Args)+1)
	for k, v := range d.Args {
		args[k] = v
	}
	if r.opts.Device != nil {
		// The run's device, as Argent binds it: a step never picks its own.
		delete(args, "udid")
		args["device"] = r.opts.Device.ID()
	}
	res, err := r.opts.Tools(ctx, d.Name, args)
	if err != nil {
		o := errored("%s", r.redactIn(err.Error()))
		o.err = err
		return o
	}
	out := outcome{status: flow.StatusPass}
	if res != nil {
		// The report carries the result as JSON: a tool's result is the
		// tool's own shape, and the report crosses the wire.
		if out.result, err = flow.MarshalNoEscape(res); err != nil {
			return errored("tool %s: its result is not JSON: %v", d.Name, err)
		}
	}
	if m, ok := res.(map[string]any); ok && d.Name == "await-ui-element" && m["success"] == false {
		out.status = flow.StatusFail
		out.reason = "await-ui-element condition not met"
		if note, _ := m["note"].(string); note != "" {
			out.reason += ": " + note
		}
	}
	if d.Delay > 0 && !sleep(ctx, d.Delay) {
		return outcome{status: flow.StatusSkip, reason: "run aborted during delay"}
	}
	return out
}

// maxScriptLog caps the output a script: step keeps.
const maxScriptLog = 64 << 10

// script runs a local .mjs or .js file with node, beside the flow file.
func (r *Runner) script(ctx context.Context, fr *frame, d *flow.Script) outcome {
	if r.opts.Linked {
		return errored("script: steps run only in a local run, never over a link")
	}
	p := d.Path
	if !filepath.IsAbs(p) {
		p = filepath.Join(fr.file.Dir(), p)
	}
	timeout := d.Timeout
	if timeout <= 0 {
		timeout = 60 * time.Second
	}
	sctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(sctx, "node", p)
	cmd.Dir = filepath.Dir(p)
	var buf bytes.Buffer
	cmd.Stdout, cmd.Stderr = &limited{&buf, maxScriptLog}, &limited{&buf, maxScriptLog}
	err := cmd.Run()
	log := r.redactIn(buf.String())
	if err != nil {
		o := errored("script %s: %v", d.Path, err)
		if sctx.Err() == context.DeadlineExceeded {
			o = errored("script %s: timed out after %s", d.Path, timeout)
		}
		o.scriptLog = log
		return o
	}
	return outcome{status: flow.StatusPass, scriptLog: log}
}

// limited keeps at most n bytes and drops the rest.
type limited struct {
	b *bytes.Buffer
	n int
}

func (l *limited) Write(p []byte) (int, error) {
	if room := l.n - l.b.Len(); room > 0 {
		l.b.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}

// RelativeLaunchHelp is why a linked run without a tunnel refuses a
// launch: of a relative path.
const RelativeLaunchHelp = "a relative path resolves on the tool-server's machine, not the client's; over a link launch a URL, or run flow run with --expose so that the client serves its files"

// BaseURLHelp says how to give a launch: /path its base URL.
const BaseURLHelp = "resolves against a base URL, and none is set: give one with flow run --base-url URL, $TOOLSERVER_BASE_URL, or baseURL: in " + flow.ConfigFile

// NeedsBaseURL reports whether launch target t is a path from the root
// that needs a base URL: over a link always, locally unless a file is at
// that path (an absolute file path keeps its meaning).
func NeedsBaseURL(t string, linked bool) bool {
	if !strings.HasPrefix(t, "/") || strings.HasPrefix(t, "//") {
		return false
	}
	if linked {
		return true
	}
	_, err := os.Stat(t)
	return err != nil
}

// CheckBaseURL finds the first top-level launch of fl that needs a base
// URL when base is empty: the flow fails before its first step, naming
// the step.
func CheckBaseURL(fl *flow.Flow, name, base string, linked bool) error {
	if base != "" {
		return nil
	}
	for i, s := range fl.Steps {
		l, ok := s.Directive.(*flow.Launch)
		if !ok {
			continue
		}
		if t, ok := l.ChromiumTarget(); ok && NeedsBaseURL(t, linked) {
			return fmt.Errorf("flow %q, step %d: launch %q %s", name, i+1, t, BaseURLHelp)
		}
	}
	return nil
}
