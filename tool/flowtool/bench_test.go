package flowtool

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/toolserver/toolserver/device/cdp/cdptest"
	"github.com/toolserver/toolserver/flow"
	"github.com/toolserver/toolserver/runs"
	"github.com/toolserver/toolserver/store"
	"github.com/toolserver/toolserver/tool"
)

// BenchmarkFlowExecuteStore is flow-execute on the mini flow of
// docs/performance.md ("The mini flow and the
// anchors") (launch, tap, type, assert, a snapshot compared
// with its baseline) on a warm device, with every call recorded in a run
// store (SQLite in WAL mode on disk) and without one (the same build's
// in-memory path). Each iteration runs both, in turns, so the
// machine's drift hits both alike; it reports each one's mean and the
// time the store adds, in percent.
func BenchmarkFlowExecuteStore(b *testing.B) {
	root := b.TempDir()
	dir := filepath.Join(root, ".argent", "flows")
	os.MkdirAll(dir, 0o755)
	os.WriteFile(filepath.Join(dir, "mini.yaml"), []byte(strings.ReplaceAll(`steps:
  - launch: "{{URL}}/app.html"
  - tap: Go now
  - type: { into: { id: username }, text: Ada, submit: false }
  - assert: { text: { in: { id: echo }, equals: hello Ada } }
  - snapshot: mini
`, "{{URL}}", cdptest.Pages(b))), 0o644)
	arts, err := store.NewArtifacts(filepath.Join(root, "artifacts"), 1000, 1<<30)
	if err != nil {
		b.Fatal(err)
	}
	st, err := runs.Open(filepath.Join(root, "state"), 0)
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	registry := func(rs *runs.Store) *tool.Registry {
		r := tool.NewRegistry()
		(&Tools{Pool: cdptest.Pool(b), Artifacts: arts, Runs: rs}).Register(r)
		return r
	}
	plain, stored := registry(nil), registry(st)
	cdptest.Device(b, "chromium-cdp-1280x800")
	call := func(r *tool.Registry, update bool) time.Duration {
		args := fmt.Sprintf(`{"name":"mini","project_root":%q,"device":"chromium-cdp-1280x800","updateBaselines":%t}`, root, update)
		start := time.Now()
		res, err := r.Invoke(context.Background(), "flow-execute", []byte(args), tool.Options{})
		d := time.Since(start)
		if rep, ok := res.(*flow.Report); err != nil || !ok || !rep.OK {
			b.Fatalf("the mini flow: %v %+v", err, res)
		}
		return d
	}
	call(plain, true) // the baseline
	var mem, disk time.Duration
	n := 0
	for b.Loop() {
		// Alternate which goes first: the second of a pair finds the
		// device warmer.
		if n%2 == 0 {
			mem += call(plain, false)
			disk += call(stored, false)
		} else {
			disk += call(stored, false)
			mem += call(plain, false)
		}
		n++
	}
	b.ReportMetric(float64(mem.Milliseconds())/float64(n), "memory-ms/run")
	b.ReportMetric(float64(disk.Milliseconds())/float64(n), "store-ms/run")
	b.ReportMetric(100*(float64(disk)-float64(mem))/float64(mem), "added-%")
}
