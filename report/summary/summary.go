// Package summary writes a run's reports as Markdown, for a CI step
// summary (GitHub's $GITHUB_STEP_SUMMARY) or a bot's comment on a pull
// request: the verdict, the counts, each failed or new snapshot with its
// flow (or story) and step, the element it named and its mismatch, and
// where the report and the images are.
//
// Every string that comes from outside (a flow's or a story's name, a
// selector, a reason a page or a linked tool-server produced, a path) is
// capped and written as a code span with its control characters escaped
// (Code), so that it cannot open a heading, a list, a link, an HTML tag
// or a mention in the comment, nor end the line it is on.
package summary

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/toolserver/toolserver/fault"
	"github.com/toolserver/toolserver/flow"
	"github.com/toolserver/toolserver/report"
)

// Unit names what a run runs, in the summary's sentences: a flow of flow
// run, a story of toolserver storybook.
type Unit struct {
	One, Many string
}

// The units of the commands that write a summary.
var (
	Flows   = Unit{One: "flow", Many: "flows"}
	Stories = Unit{One: "story", Many: "stories"}
)

// of is n with the unit's word for it: "1 flow", "3 flows".
func (u Unit) of(n int) string {
	if n == 1 {
		return "1 " + u.One
	}
	return fmt.Sprintf("%d %s", n, u.Many)
}

// DefaultMaxItems is how many snapshots and failed steps a summary lists
// when Options.MaxItems is 0; the rest are counted in one line.
const DefaultMaxItems = 50

// MaxBytes caps the list of a summary: GitHub takes a comment of up to
// 64 KiB (a step summary of up to 1 MiB), and a summary fits the smaller
// with room for its head and its last lines.
const MaxBytes = 48 << 10

// Options are what a summary says beyond the reports.
type Options struct {
	// Command is what ran, in the headline: "toolserver flow run".
	Command string
	// Unit names what the reports are reports of: Flows or Stories.
	Unit Unit
	// ReportDir is the directory of the HTML report the run wrote
	// (--report), or "" when it wrote none.
	ReportDir string
	// DryRun tells that the run wrote no baseline.
	DryRun bool
	// WorkDir is the directory the paths are shown relative to, when
	// they lie inside it; "" shows them as the reports have them.
	WorkDir string
	// MaxItems caps the listed snapshots and steps (DefaultMaxItems
	// when 0).
	MaxItems int
}

// Markdown is the summary of a run's reports, one per flow (or story) in
// the order they ran.
func Markdown(reps []*flow.Report, o Options) []byte {
	if o.Unit == (Unit{}) {
		o.Unit = Flows
	}
	if o.MaxItems <= 0 {
		o.MaxItems = DefaultMaxItems
	}
	c, items := gather(reps)
	var b strings.Builder
	headline(&b, c, o)
	fmt.Fprintf(&b, "- %s: %d — %d passed, %d failed, %d errored\n", capital(o.Unit.Many), c.units, c.passed, c.failed, c.errored)
	fmt.Fprintf(&b, "- Snapshots: %d compared — %d failed, %d new, %d updated\n", c.compared, c.snapFailed, c.snapNew, c.snapUpdated)
	if o.DryRun {
		b.WriteString("- Dry run: no baseline written.\n")
	}
	if len(items) > 0 {
		// A heading of its own: after the counts' list and a blank line,
		// another list of "- " items would continue that one.
		fmt.Fprintf(&b, "\n#### To review (%d)\n\n", len(items))
		list(&b, items, o)
	}
	b.WriteString("\n")
	switch {
	case o.ReportDir != "":
		dir := o.path(o.ReportDir)
		fmt.Fprintf(&b, "Report: %s (%s to review and approve).\n", Code(o.path(filepath.Join(o.ReportDir, report.PageFile))), Code("toolserver report serve "+dir))
	case len(items) > 0:
		b.WriteString("No HTML report: run with `--report DIR` for one with every image.\n")
	}
	return []byte(b.String())
}

// counts are a run's totals: units (flows or stories) by status, and
// snapshots by what became of them.
type counts struct {
	units, passed, failed, errored             int
	compared, snapFailed, snapNew, snapUpdated int
}

// The kinds of a listed item: a snapshot's are its outcomes
// (flow.SnapshotOutcome); itemFailed is any step's that failed.
const (
	itemFailed  = flow.SnapshotFailed
	itemMissing = flow.SnapshotMissing
	itemNew     = flow.SnapshotNew
	itemUpdated = flow.SnapshotUpdated
	itemError   = "error"
	itemNotRun  = "notRun"
)

// item is a line of the list: a snapshot to review, or a step that
// failed otherwise.
type item struct {
	kind string
	rep  *flow.Report
	// n is the step's number as flow run prints it (echo lines aside);
	// st is nil for a flow that did not run.
	n  int
	st *flow.StepReport
}

// gather counts the reports and picks the items to list, in run order.
func gather(reps []*flow.Report) (counts, []item) {
	var c counts
	var items []item
	for _, rep := range reps {
		c.units++
		switch report.FlowStatus(rep) {
		case report.FlowPassed:
			c.passed++
		case report.FlowFailed:
			c.failed++
		default:
			c.errored++
		}
		if len(rep.Steps) == 0 && !rep.OK {
			items = append(items, item{kind: itemNotRun, rep: rep})
			continue
		}
		n := 0
		for i := range rep.Steps {
			st := &rep.Steps[i]
			if st.Kind == string(flow.KindEcho) {
				continue
			}
			n++
			kind := ""
			snap := st.Kind == string(flow.KindSnapshot)
			state := ""
			if st.Baseline != nil {
				state = st.Baseline.State
			}
			if snap && state == flow.BaselineCompared {
				c.compared++
			}
			// The outcome is flow.SnapshotOutcome's; the summary lists a
			// snapshot whose step failed or errored (failed or missing) and
			// a baseline the run adopted (new, updated: only a passed step
			// has them), not a skipped one nor one that adopted nothing.
			outcome := ""
			if snap {
				outcome = flow.SnapshotOutcome(*st)
			}
			switch {
			case snap && (st.Status == flow.StatusFail || st.Status == flow.StatusError):
				c.snapFailed++
				kind = outcome // failed or missing
			case outcome == flow.SnapshotNew:
				c.snapNew++
				kind = itemNew
			case outcome == flow.SnapshotUpdated:
				c.snapUpdated++
				kind = itemUpdated
			case st.Status == flow.StatusFail:
				kind = itemFailed
			case st.Status == flow.StatusError:
				kind = itemError
			}
			if kind != "" {
				items = append(items, item{kind: kind, rep: rep, n: n, st: st})
			}
		}
	}
	return c, items
}

// headline writes the summary's heading: the verdict and what it covers.
func headline(b *strings.Builder, c counts, o Options) {
	cmd := o.Command
	if cmd == "" {
		cmd = "toolserver"
	}
	bad := c.failed + c.errored
	switch {
	case c.units == 0:
		fmt.Fprintf(b, "### ➖ %s: no %s ran\n\n", cmd, o.Unit.Many)
	case bad == 0:
		fmt.Fprintf(b, "### ✅ %s: %s passed\n\n", cmd, o.Unit.of(c.units))
	default:
		fmt.Fprintf(b, "### ❌ %s: %d of %s failed\n\n", cmd, bad, o.Unit.of(c.units))
	}
}

// list writes the items, up to the caps, and counts the rest.
func list(b *strings.Builder, items []item, o Options) {
	start := b.Len()
	for i, it := range items {
		if i == o.MaxItems || b.Len()-start > MaxBytes {
			more := len(items) - i
			fmt.Fprintf(b, "- … and %d more (%s)\n", more, moreWhere(o))
			return
		}
		writeItem(b, it, o)
	}
}

// moreWhere says where the items a summary leaves out are.
func moreWhere(o Options) string {
	if o.ReportDir != "" {
		return "see the report"
	}
	return "see the run's output"
}

// writeItem writes one item: a line saying what and where, and the lines
// under it that say why and where its images are.
func writeItem(b *strings.Builder, it item, o Options) {
	u := o.Unit.One
	if it.st == nil {
		fmt.Fprintf(b, "- ⚠️ **Not run:** %s %s\n", u, Code(it.rep.Flow))
		for _, w := range it.rep.Warnings {
			fmt.Fprintf(b, "  - %s\n", Code(fault.Clip(w, maxReason, fault.Runes)))
		}
		return
	}
	st := it.st
	where := fmt.Sprintf("%s %s", u, Code(it.rep.Flow))
	if st.Flow != "" && st.Flow != it.rep.Flow {
		where += " (in " + Code(st.Flow) + ")"
	}
	where += fmt.Sprintf(", step %d", it.n)
	if st.Line > 0 {
		where += fmt.Sprintf(" (line %d)", st.Line)
	}
	name, element := snapshotTarget(st)
	switch it.kind {
	case itemFailed, itemMissing:
		if st.Kind == string(flow.KindSnapshot) {
			what := "Failed"
			if it.kind == itemMissing {
				what = "No baseline"
			}
			fmt.Fprintf(b, "- ❌ **%s:** snapshot %s — %s\n", what, Code(name), where)
		} else {
			fmt.Fprintf(b, "- ❌ **Failed:** %s — %s\n", stepWhat(st), where)
		}
	case itemError:
		fmt.Fprintf(b, "- ⚠️ **Error:** %s — %s\n", stepWhat(st), where)
	case itemNew:
		fmt.Fprintf(b, "- 🆕 **New baseline:** snapshot %s — %s\n", Code(name), where)
	case itemUpdated:
		fmt.Fprintf(b, "- 🔄 **Updated baseline:** snapshot %s — %s\n", Code(name), where)
	}
	if element != "" {
		fmt.Fprintf(b, "  - element: %s\n", Code(element))
	}
	switch it.kind {
	case itemNew, itemUpdated:
		if st.Baseline != nil {
			verb := "written"
			if o.DryRun {
				verb = "not written (dry run)"
			}
			fmt.Fprintf(b, "  - baseline %s: %s\n", verb, Code(o.path(st.Baseline.Path)))
		}
		return
	}
	if m := st.Mismatch; m != nil {
		fmt.Fprintf(b, "  - %s\n", mismatchLine(m))
	} else if st.Reason != "" {
		fmt.Fprintf(b, "  - %s\n", Code(fault.Clip(st.Reason, maxReason, fault.Runes)))
	}
	for _, role := range []string{"diff", "current"} {
		if p := st.Artifacts[role].Path; p != "" {
			fmt.Fprintf(b, "  - %s: %s\n", role, Code(o.path(p)))
			break
		}
	}
}

// stepWhat names a step that is not a snapshot: its kind, and its target
// when it has one.
func stepWhat(st *flow.StepReport) string {
	s := Code(st.Kind)
	if st.Target != "" {
		s += " " + Code(st.Target)
	}
	return s
}

// snapshotTarget splits a snapshot step's target, as the runner names it
// ("name" or "name" cropOn <selector>), into the snapshot's name and the
// element it crops to. A target of another shape is the name, and a step
// with none is named by its baseline's key.
func snapshotTarget(st *flow.StepReport) (name, element string) {
	if st.Kind != string(flow.KindSnapshot) {
		return "", ""
	}
	if q, err := strconv.QuotedPrefix(st.Target); err == nil {
		name, _ = strconv.Unquote(q)
		rest := strings.TrimPrefix(st.Target[len(q):], " ")
		if sel, ok := strings.CutPrefix(rest, "cropOn "); ok {
			element = "cropOn " + sel
		}
		return name, element
	}
	if st.Target != "" {
		return st.Target, ""
	}
	if k, _, ok := strings.Cut(st.SnapshotKey, "__"); ok {
		return k, ""
	}
	return st.SnapshotKey, ""
}

// mismatchLine says how far a comparison was off and what it allowed,
// and where the largest change is.
func mismatchLine(m *flow.Mismatch) string {
	s := fmt.Sprintf("%d px differ (%s %%)", m.Pixels, percent(m.Percent))
	if l := m.Limits; l != nil {
		switch {
		case l.Strict:
			s += ", 0 px allowed (" + Text(l.MaxDiffPixelsFrom) + ")"
		case m.Exceeded == "maxDiffPixels" && l.MaxDiffPixels != nil:
			s += fmt.Sprintf(", maxDiffPixels %d (%s)", *l.MaxDiffPixels, Text(l.MaxDiffPixelsFrom))
		default:
			s += fmt.Sprintf(", maxMismatch %s %% (%s)", percent(l.MaxMismatch), Text(l.MaxMismatchFrom))
		}
	} else {
		s += fmt.Sprintf(", maxMismatch %s %%", percent(m.MaxMismatch))
	}
	if len(m.Regions) > 0 {
		g := m.Regions[0]
		s += fmt.Sprintf("; the largest change is %d×%d at (%d, %d)", g.Width, g.Height, g.X, g.Y)
		if g.Element != "" {
			s += " on " + Code(fault.Clip(g.Element, maxString, fault.Runes))
		}
	}
	return s
}

// percent writes a percentage with two decimals, or more when two would
// round a difference to 0.
func percent(p float64) string {
	s := strconv.FormatFloat(p, 'f', 2, 64)
	if p > 0 && s == "0.00" {
		return strconv.FormatFloat(p, 'g', 2, 64)
	}
	return s
}

// path is p as the summary shows it: relative to WorkDir when inside
// it, with forward slashes.
func (o Options) path(p string) string {
	if o.WorkDir != "" && filepath.IsAbs(p) {
		if rel, err := filepath.Rel(o.WorkDir, p); err == nil && filepath.IsLocal(rel) {
			p = rel
		}
	}
	return filepath.ToSlash(p)
}

// capital is s with its first letter in upper case (s is ours: ASCII).
func capital(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
