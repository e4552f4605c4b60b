package flowtool

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	controlplane "github.com/toolserver/toolserver/control"
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
	m := newMiniBench(b)
	st, err := runs.Open(filepath.Join(m.root, "state"), 0)
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	plain, stored := m.registry(nil), m.registry(st)
	m.call(plain, true) // the baseline
	mem, disk, n := m.pairs(plain, stored)
	b.ReportMetric(float64(mem.Milliseconds())/float64(n), "memory-ms/run")
	b.ReportMetric(float64(disk.Milliseconds())/float64(n), "store-ms/run")
	b.ReportMetric(100*(float64(disk)-float64(mem))/float64(mem), "added-%")
}

// miniBench runs the mini flow through flow-execute on a warm device,
// with registries over the run stores a benchmark compares.
type miniBench struct {
	b    *testing.B
	root string
	arts *store.Artifacts
}

func newMiniBench(b *testing.B) *miniBench {
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
	cdptest.Device(b, "chromium-cdp-1280x800")
	return &miniBench{b: b, root: root, arts: arts}
}

// registry is the flow tools recording into rs (nil: no store).
func (m *miniBench) registry(rs *runs.Store) *tool.Registry {
	r := tool.NewRegistry()
	(&Tools{Pool: cdptest.Pool(m.b), Artifacts: m.arts}).Register(r)
	if rs != nil {
		controlplane.New(controlplane.Config{Runs: rs, Tools: r}) // records every flow-execute call
	}
	return r
}

// call runs the mini flow once through r and times it.
func (m *miniBench) call(r *tool.Registry, update bool) time.Duration {
	args := fmt.Sprintf(`{"name":"mini","project_root":%q,"device":"chromium-cdp-1280x800","updateBaselines":%t}`, m.root, update)
	start := time.Now()
	res, err := r.Invoke(context.Background(), "flow-execute", []byte(args), tool.Options{})
	d := time.Since(start)
	if rep, ok := res.(*flow.Report); err != nil || !ok || !rep.OK {
		m.b.Fatalf("the mini flow: %v %+v", err, res)
	}
	return d
}

// pairs runs the flow through x and y once each per iteration, taking
// turns at going first (the second of a pair finds the device warmer),
// and returns their totals and the iterations.
func (m *miniBench) pairs(x, y *tool.Registry) (tx, ty time.Duration, n int) {
	for m.b.Loop() {
		if n%2 == 0 {
			tx += m.call(x, false)
			ty += m.call(y, false)
		} else {
			ty += m.call(y, false)
			tx += m.call(x, false)
		}
		n++
	}
	return tx, ty, n
}
