package summary

import (
	"strings"
	"testing"

	"github.com/toolserver/toolserver/flow"
)

// run is the reports of a run with a flow that passed, one with a failed
// cropOn snapshot and a new baseline, one whose step errored, one that
// did not run and one whose names are hostile.
func run() []*flow.Report {
	zero := 0
	strict := &flow.Limits{Strict: true, MaxMismatchFrom: "default on chromium", MaxDiffPixels: &zero, MaxDiffPixelsFrom: "default on chromium", Threshold: 0.01, ThresholdFrom: "default on chromium"}
	return []*flow.Report{
		{Flow: "home", OK: true, Passed: 2, Steps: []flow.StepReport{
			{Index: 0, Kind: "launch", Flow: "home", Status: flow.StatusPass, Line: 2},
			{Index: 1, Kind: "snapshot", Flow: "home", Status: flow.StatusPass, Target: `"home"`, Line: 3, SnapshotKey: "home__chromium-1280x800.png",
				Baseline: &flow.SnapshotBaseline{Path: "/proj/.argent/flows/__baselines__/home/home__chromium-1280x800.png", State: flow.BaselineCompared}},
		}},
		{Flow: "checkout", Passed: 3, Failed: 1, Steps: []flow.StepReport{
			{Index: 0, Kind: "launch", Flow: "checkout", Status: flow.StatusPass, Line: 2},
			{Index: 1, Kind: "echo", Flow: "checkout", Status: flow.StatusPass, Message: "hi"},
			{Index: 2, Kind: "snapshot", Flow: "checkout", Status: flow.StatusFail, Target: `"basket" cropOn id="basket"`, Line: 4,
				SnapshotKey: "basket__chromium-1280x800-crop-e2f1a554.png",
				Mismatch: &flow.Mismatch{Pixels: 606, Percent: 0.0591796875, Limits: strict, Exceeded: "maxDiffPixels",
					Regions: []flow.ChangedRegion{{Region: flow.Region{X: 100, Y: 122, Width: 75, Height: 12, Pixels: 606}, Element: `id="total" text="€12"`}}},
				Baseline:  &flow.SnapshotBaseline{Path: "/proj/.argent/flows/__baselines__/checkout/basket__chromium-1280x800-crop-e2f1a554.png", State: flow.BaselineCompared},
				Artifacts: map[string]flow.Artifact{"current": {Path: "/proj/art/checkout/basket-current.png"}, "diff": {Path: "/proj/art/checkout/basket-diff.png"}}},
			{Index: 3, Kind: "snapshot", Flow: "login", Depth: 1, Status: flow.StatusPass, Target: `"fresh"`, Line: 7, SnapshotKey: "fresh__chromium-1280x800.png",
				Baseline: &flow.SnapshotBaseline{Path: "/proj/.argent/flows/__baselines__/login/fresh__chromium-1280x800.png", State: flow.BaselineWritten}},
			{Index: 4, Kind: "snapshot", Flow: "checkout", Status: flow.StatusFail, Target: `"paid"`, Line: 9, SnapshotKey: "paid__chromium-1280x800.png",
				Reason:    "no baseline for \"paid\" on this device class",
				Baseline:  &flow.SnapshotBaseline{Path: "/elsewhere/paid__chromium-1280x800.png", State: flow.BaselineMissing},
				Artifacts: map[string]flow.Artifact{"current": {Path: "art/checkout/paid-current.png"}}},
		}},
		{Flow: "broken", Errored: 1, Steps: []flow.StepReport{
			{Index: 0, Kind: "tap", Flow: "broken", Status: flow.StatusError, Target: `"Pay"`, Line: 3, Reason: "no element matched\n# injected heading"},
		}},
		{Flow: "invalid", Errored: 1, Steps: []flow.StepReport{}, Warnings: []string{"not run: line 2: unknown directive \"click\""}},
		{Flow: "evil | <script>alert(1)</script>\n# title `x` @team", Failed: 1, Steps: []flow.StepReport{
			{Index: 0, Kind: "snapshot", Flow: "evil | <script>alert(1)</script>\n# title `x` @team", Status: flow.StatusFail,
				Target: `"` + strings.Repeat("long", 60) + `" cropOn text="a|b` + "`c`" + `"`, Line: 1, SnapshotKey: "x__chromium-1280x800.png",
				Mismatch: &flow.Mismatch{Pixels: 3, Percent: 0.0003, Limits: &flow.Limits{MaxMismatch: 0.0001, MaxMismatchFrom: "<b>bold</b>"}, Exceeded: "maxMismatch"}},
		}},
	}
}

// TestMarkdown: the summary of a run, line by line.
func TestMarkdown(t *testing.T) {
	got := string(Markdown(run(), Options{Command: "toolserver flow run", Unit: Flows, ReportDir: "/proj/report", WorkDir: "/proj"}))
	long := strings.Repeat("long", 60)[:199] + "…"
	want := "### ❌ toolserver flow run: 4 of 5 flows failed\n" +
		"\n" +
		"- Flows: 5 — 1 passed, 2 failed, 2 errored\n" +
		"- Snapshots: 2 compared — 3 failed, 1 new, 0 updated\n" +
		"\n" +
		"#### To review (6)\n" +
		"\n" +
		"- ❌ **Failed:** snapshot `basket` — flow `checkout`, step 2 (line 4)\n" +
		"  - element: `cropOn id=\"basket\"`\n" +
		"  - 606 px differ (0.06 %), 0 px allowed (default on chromium); the largest change is 75×12 at (100, 122) on `id=\"total\" text=\"€12\"`\n" +
		"  - diff: `art/checkout/basket-diff.png`\n" +
		"- 🆕 **New baseline:** snapshot `fresh` — flow `checkout` (in `login`), step 3 (line 7)\n" +
		"  - baseline written: `.argent/flows/__baselines__/login/fresh__chromium-1280x800.png`\n" +
		"- ❌ **No baseline:** snapshot `paid` — flow `checkout`, step 4 (line 9)\n" +
		"  - `no baseline for \"paid\" on this device class`\n" +
		"  - current: `art/checkout/paid-current.png`\n" +
		"- ⚠️ **Error:** `tap` `\"Pay\"` — flow `broken`, step 1 (line 3)\n" +
		"  - `no element matched\\u000a# injected heading`\n" +
		"- ⚠️ **Not run:** flow `invalid`\n" +
		"  - `not run: line 2: unknown directive \"click\"`\n" +
		"- ❌ **Failed:** snapshot `" + long + "` — flow ``evil | <script>alert(1)</script>\\u000a# title `x` @team``, step 1 (line 1)\n" +
		"  - element: ``cropOn text=\"a|b`c`\"``\n" +
		"  - 3 px differ (0.0003 %), maxMismatch 0.0001 % (`<b>bold</b>`)\n" +
		"\n" +
		"Report: `report/index.html` (`toolserver report serve report` to review and approve).\n"
	gotLines, wantLines := strings.Split(got, "\n"), strings.Split(want, "\n")
	for i := range max(len(gotLines), len(wantLines)) {
		g, w := line(gotLines, i), line(wantLines, i)
		if g != w {
			t.Errorf("line %d:\n got %q\nwant %q", i+1, g, w)
		}
	}
}

func line(lines []string, i int) string {
	if i < len(lines) {
		return lines[i]
	}
	return "(no line)"
}

// TestMarkdownShort: a run that passed says so in two lines of counts;
// a dry run says it wrote nothing; a long list stops at MaxItems and
// counts the rest; the unit is the caller's.
func TestMarkdownShort(t *testing.T) {
	reps := run()
	got := string(Markdown(reps[:1], Options{Command: "toolserver storybook", Unit: Stories}))
	want := "### ✅ toolserver storybook: 1 story passed\n\n- Stories: 1 — 1 passed, 0 failed, 0 errored\n- Snapshots: 1 compared — 0 failed, 0 new, 0 updated\n\n"
	if got != want {
		t.Errorf("a run that passed:\n got %q\nwant %q", got, want)
	}
	got = string(Markdown(reps[1:2], Options{Command: "toolserver flow run", DryRun: true, MaxItems: 2}))
	for _, want := range []string{
		"- Dry run: no baseline written.\n",
		"  - baseline not written (dry run): `/proj/.argent/flows/__baselines__/login/fresh__chromium-1280x800.png`\n",
		"#### To review (3)\n",
		"- … and 1 more (see the run's output)\n\nNo HTML report: run with `--report DIR` for one with every image.\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("a dry run capped at 2: want %q in\n%s", want, got)
		}
	}
	if strings.Contains(got, "`paid`") {
		t.Errorf("a dry run capped at 2: the third item listed:\n%s", got)
	}
	if got := string(Markdown(nil, Options{})); !strings.HasPrefix(got, "### ➖ toolserver: no flows ran\n") {
		t.Errorf("no reports: got %q", got)
	}
}

// TestCode: a string from outside is one code span on one line, however
// it is made.
func TestCode(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"home", "`home`"},
		{"a`b", "``a`b``"},
		{"`x`", "`` `x` ``"},
		{"a ``` b", "````a ``` b````"},
		{"  ", "`  `"},
		{" a ", "`  a  `"},
		{"", "(empty)"},
		{"<script>|*_[x](y)", "`<script>|*_[x](y)`"},
		{"line\nnext\r\x1b[2J", "`line\\u000anext\\u000d\\u001b[2J`"},
		{"rtl\u202eevil\u200b", "`rtl\\u{202e}evil\\u{200b}`"},
		{strings.Repeat("é", 300), "`" + strings.Repeat("é", 199) + "…`"},
	} {
		if got := Code(c.in); got != c.want {
			t.Errorf("Code(%q) = %q, want %q", c.in, got, c.want)
		}
	}
	for _, c := range []struct{ in, want string }{
		{"default on chromium", "default on chromium"},
		{".argent/toolserver.yaml", ".argent/toolserver.yaml"},
		{"--max-mismatch", "--max-mismatch"},
		{"@team", "`@team`"},
		{"see https://x.test", "`see https://x.test`"},
		{"a_b", "`a_b`"},
	} {
		if got := Text(c.in); got != c.want {
			t.Errorf("Text(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}
