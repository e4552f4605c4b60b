package flowtool

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/toolserver/toolserver/flow"
	"github.com/toolserver/toolserver/internal/pgtest"
	"github.com/toolserver/toolserver/runs"
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
	m := newMiniBench(b)
	lite, err := runs.Open(filepath.Join(m.root, "state"), 0)
	if err != nil {
		b.Fatal(err)
	}
	defer lite.Close()
	pg, err := runs.OpenPostgres(context.Background(), pgtest.DSN(b), runs.PostgresOptions{})
	if err != nil {
		b.Fatal(err)
	}
	defer pg.Close()
	onLite, onPG := m.registry(lite), m.registry(pg)
	m.call(onLite, true) // the baseline
	// One run on each before the clock: the PostgreSQL pool's first
	// connections, SQLite's first pages.
	m.call(onLite, false)
	m.call(onPG, false)
	sq, pq, n := m.pairs(onLite, onPG)
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
