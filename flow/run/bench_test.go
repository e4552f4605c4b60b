package run_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/toolserver/toolserver/device/cdp/cdptest"
	"github.com/toolserver/toolserver/flow"
	"github.com/toolserver/toolserver/flow/run"
)

// benchProject writes the mini flow of docs/performance.md ("The mini flow and
// the anchors"): a fresh
// context and page, a click, a fill, an assertion and a screenshot.
func benchProject(b *testing.B) (string, *flow.File) {
	b.Helper()
	root := b.TempDir()
	dir := filepath.Join(root, ".argent", "flows")
	os.MkdirAll(dir, 0o755)
	body := strings.ReplaceAll(`steps:
  - launch: "{{URL}}/app.html"
  - tap: Go now
  - type: { into: { id: username }, text: Ada, submit: false }
  - assert: { text: { in: { id: echo }, equals: hello Ada } }
  - snapshot: mini
`, "{{URL}}", cdptest.Pages(b))
	os.WriteFile(filepath.Join(dir, "mini.yaml"), []byte(body), 0o644)
	f, err := run.Disk{}.Open(dir, "mini.yaml")
	if err != nil {
		b.Fatal(err)
	}
	return root, f
}

// BenchmarkMiniFlow runs the mini flow on a warm device: launch (a fresh
// browser context and page), tap, type, assert, and a settled snapshot
// compared with its baseline.
func BenchmarkMiniFlow(b *testing.B) {
	_, f := benchProject(b)
	dev := devAdapter(cdptest.Device(b, "chromium-cdp-1280x800"))
	entry := run.Entry{File: f, Name: "mini", StemFallback: "mini"}
	run := func(update bool) *flow.Report {
		rep, err := run.Execute(context.Background(), run.Options{Device: dev, Source: run.Disk{}, UpdateBaselines: update}, entry)
		if err != nil || !rep.OK {
			b.Fatalf("run: %v %+v", err, rep)
		}
		return rep
	}
	run(true) // baseline
	b.ResetTimer()
	var launch, overhead time.Duration
	for b.Loop() {
		start := time.Now()
		rep := run(false)
		wall := time.Since(start)
		steps := 0.0
		for _, s := range rep.Steps {
			steps += s.DurationMs
		}
		launch += time.Duration(rep.Steps[0].DurationMs * float64(time.Millisecond))
		// What the call spends outside its steps: parsing, resolving,
		// reporting; the first step starts after at most this.
		overhead += wall - time.Duration(steps*float64(time.Millisecond))
	}
	b.ReportMetric(float64(launch.Microseconds())/1000/float64(b.N), "launch-ms/op")
	b.ReportMetric(float64(overhead.Microseconds())/1000/float64(b.N), "outside-steps-ms/op")
}

// BenchmarkStepOverhead runs taps, typing and assertions on a page that is
// already open: the cost of the runner and the device per step.
func BenchmarkStepOverhead(b *testing.B) {
	root := b.TempDir()
	dir := filepath.Join(root, ".argent", "flows")
	os.MkdirAll(dir, 0o755)
	os.WriteFile(filepath.Join(dir, "steps.yaml"), []byte(`steps:
  - tap: Go now
  - type: { into: { id: username }, text: Ada, submit: false }
  - assert: { text: { in: { id: echo }, contains: hello Ada } }
  - tap: { on: { id: top } }
  - assert: { visible: { text: clicked } }
`), 0o644)
	d := cdptest.Device(b, "chromium-cdp-1280x801")
	if err := d.Launch(context.Background(), cdptest.Pages(b)+"/app.html"); err != nil {
		b.Fatal(err)
	}
	f, _ := run.Disk{}.Open(dir, "steps.yaml")
	entry := run.Entry{File: f, Name: "steps", StemFallback: "steps"}
	dev := devAdapter(d)
	for b.Loop() {
		rep, err := run.Execute(context.Background(), run.Options{Device: dev, Source: run.Disk{}}, entry)
		if err != nil || !rep.OK {
			b.Fatalf("run: %v %+v", err, rep)
		}
	}
	b.ReportMetric(5, "steps/op")
}
