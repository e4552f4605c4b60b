package main

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/toolserver/toolserver/flow"
	flowrun "github.com/toolserver/toolserver/flow/run"
	"github.com/toolserver/toolserver/internal/printable"
	"github.com/toolserver/toolserver/suite"
)

// renderer prints a run's progress: one line per step for people, or
// JSON objects on stderr with -o json|yaml. What it prints comes from
// outside, from the page under test, the flow file or a linked
// tool-server: every such string is escaped before it reaches the
// terminal.
type renderer struct {
	stdout, stderr io.Writer
	asJSON         bool
	// dryRun marks the steps whose baseline a dry run did not write.
	dryRun bool
	n      int
	// headed is the flow whose header (start) is printed and whose end is
	// not yet: a flow rejected after it (a linked run the tool-server
	// refused) does not print the header again.
	headed string
	// units name what the run runs, one and several: flow and flows,
	// unless set.
	units [2]string
}

func newRenderer(stdout, stderr io.Writer, asJSON bool) *renderer {
	return &renderer{stdout: stdout, stderr: stderr, asJSON: asJSON}
}

func (r *renderer) json(v any) {
	b, _ := json.Marshal(v)
	fmt.Fprintf(r.stderr, "%s\n", escapeJSONControls(b))
}

func (r *renderer) note(msg string) {
	if r.asJSON {
		r.json(map[string]any{"event": "warning", "message": msg})
		return
	}
	fmt.Fprintln(r.stderr, "note: "+printableLines(msg))
}

// warn prints a warning on stderr, or a warning object with -o.
func (r *renderer) warn(msg string) {
	if r.asJSON {
		r.json(map[string]any{"event": "warning", "message": msg})
		return
	}
	fmt.Fprintln(r.stderr, "toolserver: warning: "+printableLines(msg))
}

// start prints a flow's header, once: a linked flow a tool-server did
// not run is sent to the next one under the same header.
func (r *renderer) start(name, device string) {
	if r.headed == name {
		return
	}
	r.n, r.headed = 0, name
	if r.asJSON {
		r.json(map[string]any{"event": "start", "flow": name, "device": device})
		return
	}
	fmt.Fprintf(r.stdout, "Flow %q on %s\n", name, printable.String(device))
}

var glyphs = map[string]string{flow.StatusPass: "✓", flow.StatusFail: "✗", flow.StatusError: "✗", flow.StatusSkip: "·"}

func (r *renderer) progress(s flow.StepReport) {
	if r.dryRun {
		flowrun.MarkDryRunStep(&s)
	}
	if r.asJSON {
		r.json(map[string]any{"event": "progress", "data": s})
		return
	}
	indent := strings.Repeat("  ", s.Depth)
	if s.Kind == string(flow.KindEcho) {
		line := fmt.Sprintf("  %s› %s", indent, printable.String(s.Message))
		if s.Status == flow.StatusSkip {
			line = fmt.Sprintf("  %s· › %s", indent, printable.String(s.Message))
		}
		fmt.Fprintln(r.stdout, line)
		return
	}
	r.n++
	g := glyphs[s.Status]
	if s.Status == flow.StatusPass && s.Warning != "" {
		g = "⚠"
	}
	line := fmt.Sprintf("  %s %2d %s%s", g, r.n, indent, printable.String(s.Kind))
	if s.Tool != "" {
		line += " " + printable.String(s.Tool)
	}
	if s.Target != "" {
		line += " " + printable.String(s.Target)
	}
	if s.Element != nil {
		// Which element it acted on, and where: "next" that followed the
		// screen to the wrong card shows here.
		line += " → " + printable.String(s.Element.String())
	}
	if s.Status != flow.StatusSkip {
		line += fmt.Sprintf(" (%s)", seconds(s.DurationMs))
	}
	if s.Reason != "" {
		line += " — " + printable.String(s.Reason)
	}
	fmt.Fprintln(r.stdout, line)
	if s.Warning != "" {
		fmt.Fprintf(r.stdout, "       ⚠ %s\n", printable.String(s.Warning))
	}
	for _, role := range []string{"baseline", "current", "diff"} {
		if p := s.Artifacts[role].Path; p != "" {
			fmt.Fprintf(r.stdout, "       %s: %s\n", role, printable.String(p))
		}
	}
}

func summary(rep *flow.Report) string {
	verdict := "PASS"
	if !rep.OK {
		verdict = "FAIL"
	}
	s := fmt.Sprintf("%s %s — %d passed, %d failed, %d errored, %d skipped", verdict, printable.String(rep.Flow), rep.Passed, rep.Failed, rep.Errored, rep.Skipped)
	if rep.OK && rep.Passed+rep.Failed+rep.Errored+rep.Skipped == 0 {
		s += " (no test steps)"
	}
	return s + fmt.Sprintf(" (%s)", seconds(rep.DurationMs))
}

func (r *renderer) finished(rep *flow.Report) {
	r.headed = ""
	if r.asJSON {
		return
	}
	fmt.Fprintln(r.stdout, summary(rep))
	fmt.Fprintln(r.stdout)
}

// rejected says a flow was not run: its file is invalid, here or for the
// tool-server. The header is printed unless the flow's start printed it.
func (r *renderer) rejected(name string, err error) {
	headed := r.headed == name
	r.headed = ""
	if r.asJSON {
		r.json(map[string]any{"event": "error", "flow": name, "error": err.Error()})
		return
	}
	if !headed {
		fmt.Fprintf(r.stdout, "Flow %q\n", name)
	}
	fmt.Fprintln(r.stdout, "  ✗ not run (invalid flow)")
	fmt.Fprintf(r.stderr, "%s\n\n", printableLines(err.Error()))
}

// broke says a flow's run broke under it: the machinery failed (the
// tool-server's connection closed, Chromium died before a step).
func (r *renderer) broke(name string, err error) {
	r.headed = ""
	if r.asJSON {
		r.json(map[string]any{"event": "error", "flow": name, "error": err.Error(), "infrastructure": true})
		return
	}
	fmt.Fprintf(r.stdout, "  ✗ not finished: the machinery under it failed\n")
	fmt.Fprintf(r.stderr, "toolserver: flow %s: %s\n\n", printable.String(name), printableLines(err.Error()))
}

func (r *renderer) total(reps []suite.Report) {
	passed := 0
	for _, rep := range reps {
		if rep.OK {
			passed++
		}
	}
	many := cmp.Or(r.units[1], "flows")
	fmt.Fprintf(r.stdout, "%d %s: %d passed, %d failed\n", len(reps), many, passed, len(reps)-passed)
}

// plans prints what a dry run would have written.
func (r *renderer) plans(plans []flowrun.Plan) {
	if len(plans) == 0 {
		fmt.Fprintln(r.stdout, "Dry run: no baseline would be written.")
		return
	}
	fmt.Fprintf(r.stdout, "Dry run: %d %s would be written; nothing was written:\n", len(plans), plural(len(plans), "baseline", "baselines"))
	for _, p := range plans {
		fmt.Fprintf(r.stdout, "  %-6s %9d bytes  %s\n", printable.String(p.Action), p.Bytes, printable.String(p.Path))
	}
}

// runPrinter shows a flow run as it goes on a renderer, lines or objects
// with -o json|yaml: the Printer of a local run (local.Printer) and of
// one over a link (linked.Printer).
type runPrinter struct{ out *renderer }

func (p runPrinter) Start(name, device string)  { p.out.start(name, device) }
func (p runPrinter) Progress(s flow.StepReport) { p.out.progress(s) }

// Waiting says the run waits for its device on the tool-server: a line on
// stderr, or a waiting object with -o json|yaml.
func (p runPrinter) Waiting(message string) {
	if p.out.asJSON {
		p.out.json(map[string]any{"event": "waiting", "message": message})
		return
	}
	fmt.Fprintln(p.out.stderr, "toolserver: "+printableLines(message))
}

// Warn prints a line on stderr, or a warning object with -o json|yaml.
// The line may hold the tool-server's words: it is escaped.
func (p runPrinter) Warn(line string) {
	if p.out.asJSON {
		p.out.json(map[string]any{"event": "warning", "message": line})
		return
	}
	fmt.Fprintln(p.out.stderr, printableLines(line))
}

// Kept prints where an image of a failed snapshot was downloaded to
// (--artifacts); with -o json|yaml the report carries the path.
func (p runPrinter) Kept(step int, role, path string) {
	if !p.out.asJSON {
		fmt.Fprintf(p.out.stdout, "       step %d %s: %s\n", step, role, path)
	}
}

func (p runPrinter) Resent(name, from, to string, err error) {
	p.out.warn(fmt.Sprintf("%s: %s did not run it (%v); sending it to %s", name, from, err, to))
}
