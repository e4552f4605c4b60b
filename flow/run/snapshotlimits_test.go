package run_test

import (
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/toolserver/toolserver/flow"
	"github.com/toolserver/toolserver/flow/run"
	"github.com/toolserver/toolserver/snapshot"
)

func ptr[T any](v T) *T { return &v }

// clickedAfterBaseline adopts app.html as flow base's baseline "home",
// then makes the flow tap Go now before its snapshot, so the next run
// compares "clicked 1" with "not clicked".
func (p *project) clickedAfterBaseline(t *testing.T, dev run.Device) {
	t.Helper()
	p.write(".argent/flows/base.yaml", "steps:\n  - launch: \"{{URL}}/app.html\"\n  - snapshot: home\n")
	if rep := p.run(t, dev, "base", true); !rep.OK {
		t.Fatalf("update: %s", dump(rep))
	}
	p.write(".argent/flows/base.yaml", "steps:\n  - launch: \"{{URL}}/app.html\"\n  - tap: Go now\n  - snapshot: home\n")
}

// The project's defaults apply to a snapshot that sets no limit of its
// own, and the report says which limit decided and where it came from.
// The change is "not clicked" becoming "clicked 1": a few hundred pixels,
// 0.1 % of the screen, which the strict default fails and Argent's 0.5 %
// tolerates once a count is set somewhere.
func TestSnapshotLimitsFromDefaults(t *testing.T) {
	t.Parallel()
	p := newProject(t)
	dev := device(t, "chromium-cdp-640x401")
	p.clickedAfterBaseline(t, dev)

	rep := p.runOpts(t, dev, "base", run.Options{})
	s := rep.Steps[2]
	if s.Status != flow.StatusFail || s.Mismatch == nil || s.Mismatch.Limits == nil || !s.Mismatch.Limits.Strict ||
		!strings.Contains(s.Reason, "pixels differ, 0 px allowed (default on chromium) (home__chromium-640x401.png)") {
		t.Fatalf("the strict default: %s %q %+v", s.Status, s.Reason, s.Mismatch)
	}
	changed := s.Mismatch.Pixels

	// A count set in the config gives maxMismatch Argent's default back.
	rep = p.runOpts(t, dev, "base", run.Options{Snapshot: flow.SnapshotDefaults{
		MaxDiffPixels: ptr(changed), Sources: map[string]string{"maxDiffPixels": ".argent/toolserver.yaml"},
	}})
	s = rep.Steps[2]
	if s.Status != flow.StatusPass || s.Mismatch == nil || s.Mismatch.Limits == nil || s.Mismatch.Limits.MaxMismatchFrom != "Argent's default" {
		t.Fatalf("Argent's default: %s %q %+v", s.Status, s.Reason, s.Mismatch)
	}
	if !strings.Contains(s.Reason, "limits: maxMismatch 0.5% (Argent's default)") {
		t.Fatalf("the pass does not say what differs and by which limit: %q", s.Reason)
	}
	// The count at threshold 0.1, anti-aliasing excluded.
	changed = s.Mismatch.Pixels

	// maxDiffPixels from a flag: the absolute count fails the change.
	rep = p.runOpts(t, dev, "base", run.Options{Snapshot: flow.SnapshotDefaults{
		MaxMismatch: ptr(0.5), MaxDiffPixels: ptr(changed - 1),
		Sources: map[string]string{"maxMismatch": ".argent/toolserver.yaml", "maxDiffPixels": "flag --max-diff-pixels"},
	}})
	s = rep.Steps[2]
	if s.Status != flow.StatusFail || s.Mismatch.Exceeded != "maxDiffPixels" || !strings.Contains(s.Reason, "pixels differ > maxDiffPixels") ||
		!strings.Contains(s.Reason, "maxDiffPixels "+strconv.Itoa(changed-1)+" (flag --max-diff-pixels)") || !strings.Contains(s.Reason, "maxMismatch 0.5% (.argent/toolserver.yaml)") {
		t.Fatalf("maxDiffPixels from a flag: %s %q", s.Status, s.Reason)
	}
	if len(s.Artifacts) != 0 {
		t.Fatalf("artifacts without a sink: %v", s.Artifacts)
	}

	// A tighter maxMismatch from the config file fails it too.
	rep = p.runOpts(t, dev, "base", run.Options{Snapshot: flow.SnapshotDefaults{
		MaxMismatch: ptr(0.01), Sources: map[string]string{"maxMismatch": ".argent/toolserver.yaml"},
	}})
	if s = rep.Steps[2]; s.Status != flow.StatusFail || s.Mismatch.Exceeded != "maxMismatch" || !strings.Contains(s.Reason, "> 0.01% (home__chromium-640x401.png)") {
		t.Fatalf("maxMismatch from the config: %s %q", s.Status, s.Reason)
	}

	// A threshold of 1 tolerates every colour difference: nothing differs.
	rep = p.runOpts(t, dev, "base", run.Options{Snapshot: flow.SnapshotDefaults{
		MaxDiffPixels: ptr(0), Threshold: ptr(1.0), Sources: map[string]string{"threshold": "flag --threshold"},
	}})
	if s = rep.Steps[2]; s.Status != flow.StatusPass || s.Mismatch != nil || !strings.Contains(s.Reason, "0 ≤ maxDiffPixels 0") {
		t.Fatalf("threshold 1: %s %q %+v", s.Status, s.Reason, s.Mismatch)
	}
	// A threshold alone keeps the strict default's count and says so.
	rep = p.runOpts(t, dev, "base", run.Options{Snapshot: flow.SnapshotDefaults{
		Threshold: ptr(1.0), Sources: map[string]string{"threshold": "flag --threshold"},
	}})
	if s = rep.Steps[2]; s.Status != flow.StatusPass || s.Reason != "0 pixels differ, 0 px allowed (default on chromium), threshold 1 (flag --threshold) (home__chromium-640x401.png)" {
		t.Fatalf("threshold 1 alone: %s %q", s.Status, s.Reason)
	}
}

// A failed snapshot names the element under its largest changed region,
// in the reason and in the report's regions.
func TestSnapshotNamesChangedElement(t *testing.T) {
	t.Parallel()
	p := newProject(t)
	dev := device(t, "chromium-cdp-640x402")
	p.clickedAfterBaseline(t, dev)
	rep := p.runOpts(t, dev, "base", run.Options{Snapshot: flow.SnapshotDefaults{MaxDiffPixels: ptr(0)}})
	s := rep.Steps[2]
	want := `on id="out" text="clicked 1"`
	if s.Status != flow.StatusFail || !strings.Contains(s.Reason, "the largest changed area is ") || !strings.Contains(s.Reason, want) {
		t.Fatalf("reason does not name the element: %s %q", s.Status, s.Reason)
	}
	if g := s.Mismatch.Regions; len(g) == 0 || g[0].Element != `id="out" text="clicked 1"` {
		t.Fatalf("regions: %+v", g)
	}
}

// Playwright's fast path: a first capture that matches its baseline is
// the only capture; a mismatch settles (two agreeing captures after the
// refused one); an update takes two.
func TestSnapshotFastPath(t *testing.T) {
	t.Parallel()
	p := newProject(t)
	dev := device(t, "chromium-cdp-640x403")
	p.write(".argent/flows/base.yaml", "steps:\n  - launch: \"{{URL}}/app.html\"\n  - snapshot: home\n  - snapshot: { name: top, cropOn: { id: top } }\n")
	rep := p.run(t, dev, "base", true)
	if !rep.OK || rep.Steps[1].Captures != 2 || rep.Steps[2].Captures != 2 {
		t.Fatalf("an update takes two captures: %s", dump(rep))
	}
	rep = p.run(t, dev, "base", false)
	if !rep.OK || rep.Steps[1].Captures != 1 || rep.Steps[2].Captures != 1 {
		t.Fatalf("a matching first capture is the only one: %s", dump(rep))
	}
	p.write(".argent/flows/base.yaml", "steps:\n  - launch: \"{{URL}}/app.html\"\n  - tap: Go now\n  - snapshot: home\n")
	rep = p.runOpts(t, dev, "base", run.Options{Snapshot: flow.SnapshotDefaults{MaxDiffPixels: ptr(0)}})
	if s := rep.Steps[2]; s.Status != flow.StatusFail || s.Captures != 3 {
		t.Fatalf("a mismatch settles before it is compared: %s %q captures %d", s.Status, s.Reason, s.Captures)
	}
}

// A snapshot leaves the page as it found it: a finite fade-in started
// after it still ends visible (the settle style used to stay in the page
// and pause every later animation).
func TestSnapshotLeavesLaterAnimationsRunning(t *testing.T) {
	t.Parallel()
	p := newProject(t)
	dev := device(t, "chromium-cdp-640x404")
	p.write(".argent/flows/fade.yaml", `steps:
  - launch: "{{URL}}/fade.html"
  - snapshot: { name: before, cropOn: { id: reveal } }
  - tap: Reveal
  - await: { visible: { text: Faded in }, timeout: 3000 }
  - snapshot: { name: after, cropOn: { id: late } }
`)
	for _, update := range []bool{true, false} {
		if rep := p.run(t, dev, "fade", update); !rep.OK {
			t.Fatalf("update=%v: %s", update, dump(rep))
		}
	}
}

// TestDefaultThresholdIsTheComparisons holds the threshold the flow
// language quotes equal to the one the comparison applies.
func TestDefaultThresholdIsTheComparisons(t *testing.T) {
	if got, want := flow.DefaultThreshold, snapshot.DefaultOptions().Threshold; got != want {
		t.Fatalf("flow.DefaultThreshold = %g, snapshot's default threshold = %g; want them equal", got, want)
	}
}

// The metric and the window reach the comparison from the step or the
// project's defaults, and the report names them with where they came
// from: pixelmatch 8's windowed count lets a limit of one 8×8 square of
// pixels pass a change that covers more than one.
func TestSnapshotMetricAndWindow(t *testing.T) {
	t.Parallel()
	p := newProject(t)
	dev := device(t, "chromium-cdp-640x412")
	p.clickedAfterBaseline(t, dev)

	rep := p.runOpts(t, dev, "base", run.Options{Snapshot: flow.SnapshotDefaults{
		Metric: ptr("oklab"), MaxDiffPixels: ptr(64), Sources: map[string]string{"metric": ".argent/toolserver.yaml", "maxDiffPixels": "flag --max-diff-pixels"},
	}})
	s := rep.Steps[2]
	if s.Status != flow.StatusFail || s.Mismatch == nil || s.Mismatch.Limits.Metric != "oklab" || !strings.Contains(s.Reason, "metric oklab (.argent/toolserver.yaml)") {
		t.Fatalf("oklab from the config: %s %q %+v", s.Status, s.Reason, s.Mismatch)
	}
	if s.Mismatch.Pixels <= 64 {
		t.Fatalf("the change counts %d pixels in all: too few for the window to matter", s.Mismatch.Pixels)
	}

	p.write(".argent/flows/base.yaml", "steps:\n  - launch: \"{{URL}}/app.html\"\n  - tap: Go now\n  - snapshot: { name: home, metric: oklab, windowSize: 8, maxDiffPixels: 40, maxMismatch: 100 }\n")
	rep = p.runOpts(t, dev, "base", run.Options{})
	s = rep.Steps[2]
	if s.Status != flow.StatusFail || s.Mismatch == nil || s.Mismatch.Pixels > 64 || s.Mismatch.Limits.WindowSize != 8 ||
		!strings.Contains(s.Reason, "of the 64 pixels of the worst 8×8 square") || !strings.Contains(s.Reason, "windowSize 8 (the step)") {
		t.Fatalf("a window of 8 on the step, over 40 pixels: %s %q %+v", s.Status, s.Reason, s.Mismatch)
	}
	p.write(".argent/flows/base.yaml", "steps:\n  - launch: \"{{URL}}/app.html\"\n  - tap: Go now\n  - snapshot: { name: home, metric: oklab, windowSize: 8, maxDiffPixels: 64, maxMismatch: 100 }\n")
	rep = p.runOpts(t, dev, "base", run.Options{})
	if s = rep.Steps[2]; s.Status != flow.StatusPass {
		t.Fatalf("a window of 8 on the step, 64 pixels allowed: %s %q", s.Status, s.Reason)
	}
}

// TestSnapshotMetricsAreTheComparisons holds the metrics the flow
// language takes equal to the comparison's.
func TestSnapshotMetricsAreTheComparisons(t *testing.T) {
	var want []string
	for _, m := range snapshot.Metrics {
		want = append(want, string(m))
	}
	if !slices.Equal(flow.SnapshotMetrics, want) {
		t.Fatalf("flow.SnapshotMetrics = %v, snapshot.Metrics = %v; want them equal", flow.SnapshotMetrics, want)
	}
}
