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
	"github.com/toolserver/toolserver/internal/pgtest"
	"github.com/toolserver/toolserver/runs"
	"github.com/toolserver/toolserver/store"
	"github.com/toolserver/toolserver/tool"
)

// BenchmarkFlowExecutePostgres is flow-execute on the mini flow of
// docs/performance.md ("The mini flow and the anchors") on a warm device,
// every call recorded in a run store: the SQLite store of one process
// (runs.Open, WAL on disk) and a fleet's PostgreSQL (runs.OpenPostgres on
// a database of the test binary's real cluster, over its unix socket).
// Each iteration runs both, in turns, so the machine's drift hits both
// alike; it reports each one's mean and the time PostgreSQL adds, in
// percent (docs/performance.md, "The fleet's store"; the target: at most
// 10%).
func BenchmarkFlowExecutePostgres(b *testing.B) {
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
	lite, err := runs.Open(filepath.Join(root, "state"), 0)
	if err != nil {
		b.Fatal(err)
	}
	defer lite.Close()
	pg, err := runs.OpenPostgres(context.Background(), pgtest.DSN(b), runs.PostgresOptions{})
	if err != nil {
		b.Fatal(err)
	}
	defer pg.Close()
	registry := func(rs *runs.Store) *tool.Registry {
		r := tool.NewRegistry()
		(&Tools{Pool: cdptest.Pool(b), Artifacts: arts, Runs: rs}).Register(r)
		return r
	}
	onLite, onPG := registry(lite), registry(pg)
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
	call(onLite, true) // the baseline
	// One run on each before the clock: the PostgreSQL pool's first
	// connections, SQLite's first pages.
	call(onLite, false)
	call(onPG, false)
	var sq, pq time.Duration
	n := 0
	for b.Loop() {
		// Alternate which goes first: the second of a pair finds the
		// device warmer.
		if n%2 == 0 {
			sq += call(onLite, false)
			pq += call(onPG, false)
		} else {
			pq += call(onPG, false)
			sq += call(onLite, false)
		}
		n++
	}
	// Every run was recorded, its snapshot's outcome with it, in both (the
	// SQLite store has the baseline's run too). A snapshot that matches
	// its baseline keeps no images.
	for _, c := range []struct {
		name string
		st   *runs.Store
		want int
	}{{"SQLite", lite, n + 2}, {"PostgreSQL", pg, n + 1}} {
		list, err := c.st.List(context.Background(), runs.Filter{Limit: 500})
		if err != nil {
			b.Fatal(err)
		}
		if len(list) != c.want {
			b.Fatalf("%s: %d runs recorded, want %d", c.name, len(list), c.want)
		}
		d, err := c.st.Get(context.Background(), list[0].ID)
		if err != nil || len(d.Steps) != 5 || len(d.Snapshots) != 1 || d.Snapshots[0].Status != flow.StatusPass {
			b.Fatalf("the last run's snapshot: %v %+v", err, d)
		}
	}
	b.ReportMetric(float64(sq.Microseconds())/1000/float64(n), "sqlite-ms/run")
	b.ReportMetric(float64(pq.Microseconds())/1000/float64(n), "postgres-ms/run")
	b.ReportMetric(100*(float64(pq)-float64(sq))/float64(sq), "added-%")
}
