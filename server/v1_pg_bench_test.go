package server_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"testing"
	"time"

	"github.com/toolserver/toolserver/control"
	"github.com/toolserver/toolserver/flow"
	"github.com/toolserver/toolserver/internal/pgtest"
	"github.com/toolserver/toolserver/runs"
	"github.com/toolserver/toolserver/server"
	"github.com/toolserver/toolserver/store"
	"github.com/toolserver/toolserver/tool"
)

// benchListRuns is how many runs BenchmarkListRuns stores; one in
// benchListRare of them failed, and has the label suite:nightly.
const (
	benchListRuns = 10_000
	benchListRare = 100
)

// BenchmarkListRuns times GET /v1/runs (a page of 50, the default) over
// real HTTP on loopback, with 10,000 runs in the store: the SQLite store
// of one process and a fleet's PostgreSQL (a database of the test
// binary's real cluster), each asked for the newest page, a page deep in
// the list (before= the 5,000th run), the pages of the two filters that
// match one run in a hundred (outcome=failed, label=suite:nightly), and
// a label no run has, which reads all 10,000.
// The target is 50 ms a page (docs/performance.md, "The fleet's store").
//
// The runs are made fast: two real runs through the store (Start, Step,
// End: one passed, one failed with the rare label), then the rest copied
// from them row by row with their events, with ids of their own, through
// database/sql beside the store.
func BenchmarkListRuns(b *testing.B) {
	for _, kind := range []string{"sqlite", "postgres"} {
		b.Run(kind, func(b *testing.B) {
			st, db, dollar := openListStore(b, kind)
			ids := fillRuns(b, st, db, dollar)
			hs := httptest.NewServer(server.New(server.Config{Addr: "127.0.0.1:0", Tools: tool.NewRegistry(), Artifacts: listArtifacts(b), TempDir: b.TempDir(), Runs: st, Plane: control.New(control.Config{Runs: st})}).Handler())
			defer hs.Close()
			client := &http.Client{}
			defer client.CloseIdleConnections()
			for _, q := range []struct{ name, query string }{
				{"newest", ""},
				{"deep", "before=" + ids[benchListRuns/2]},
				{"outcome", "outcome=failed"},
				{"label", "label=" + url.QueryEscape("suite:nightly")},
				{"label-none", "label=" + url.QueryEscape("suite:weekly")},
			} {
				b.Run(q.name, func(b *testing.B) {
					get := func() runs.Page {
						resp, err := client.Get(hs.URL + "/v1/runs?" + q.query)
						if err != nil {
							b.Fatal(err)
						}
						body, err := io.ReadAll(resp.Body)
						resp.Body.Close()
						if err != nil || resp.StatusCode != http.StatusOK {
							b.Fatalf("GET /v1/runs?%s: %s %v\n%s", q.query, resp.Status, err, body)
						}
						var p runs.Page
						if err := json.Unmarshal(body, &p); err != nil {
							b.Fatal(err)
						}
						return p
					}
					// A full page, a cursor to the next one, and for the
					// filters only the runs that match; none for a label no
					// run has, the filter that reads every run.
					p := get()
					if q.name == "label-none" {
						if len(p.Runs) != 0 || p.NextBefore != "" {
							b.Fatalf("%d runs, next_before %q: want none", len(p.Runs), p.NextBefore)
						}
					} else if len(p.Runs) != 50 || p.NextBefore == "" {
						b.Fatalf("%d runs, next_before %q: want a full page of 50 with more after it", len(p.Runs), p.NextBefore)
					}
					for _, r := range p.Runs {
						if q.name == "outcome" && r.Outcome != "failed" || q.name == "label" && r.Labels["suite"] != "nightly" {
							b.Fatalf("run %s (outcome %q, labels %v) does not match %s", r.ID, r.Outcome, r.Labels, q.query)
						}
					}
					var total time.Duration
					for b.Loop() {
						start := time.Now()
						get()
						total += time.Since(start)
					}
					b.ReportMetric(float64(total.Microseconds())/1000/float64(b.N), "ms/page")
				})
			}
		})
	}
}

// openListStore opens a store of kind, keeping every run of the
// benchmark, and a second handle on its database for the set-up's
// inserts; dollar says the database's placeholders are $1, $2, ….
func openListStore(b *testing.B, kind string) (*runs.Store, *sql.DB, bool) {
	b.Helper()
	if kind == "sqlite" {
		dir := b.TempDir()
		st, err := runs.Open(dir, 2*benchListRuns)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { st.Close() })
		db, err := sql.Open("sqlite", "file:"+filepath.Join(dir, "runs.db")+"?_pragma=busy_timeout(10000)&_pragma=foreign_keys(ON)")
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { db.Close() })
		return st, db, false
	}
	dsn := pgtest.DSN(b)
	st, err := runs.OpenPostgres(context.Background(), dsn, runs.PostgresOptions{Keep: 2 * benchListRuns})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { st.Close() })
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	return st, db, true
}

// fillRuns stores benchListRuns finished runs and returns their ids,
// oldest first: two recorded by the store, the rest copies of them.
func fillRuns(b *testing.B, st *runs.Store, db *sql.DB, dollar bool) []string {
	b.Helper()
	ctx := context.Background()
	record := func(ok bool, labels map[string]string) string {
		rec, err := st.Start(ctx, runs.Begin{Flow: "checkout", Device: "chromium-cdp-1280x800", Source: "v1", Labels: labels, Args: json.RawMessage(`{"name":"checkout"}`)})
		if err != nil {
			b.Fatal(err)
		}
		status := flow.StatusPass
		if !ok {
			status = flow.StatusFail
		}
		for i := range 5 {
			rec.Step(flow.StepReport{Index: i, Kind: "tap", Flow: "checkout", Status: status, DurationMs: 12})
		}
		rep := &flow.Report{OK: ok, Passed: 5}
		if !ok {
			rep.Passed, rep.Failed = 4, 1
		}
		if err := rec.End(rep, nil, nil); err != nil {
			b.Fatal(err)
		}
		return rec.ID()
	}
	common := record(true, map[string]string{"suite": "pr", "branch": "main"})
	rare := record(false, map[string]string{"suite": "nightly", "branch": "main"})
	p := func(q string) string {
		if !dollar {
			return q
		}
		n := 0
		out := []byte{}
		for i := 0; i < len(q); i++ {
			if q[i] == '?' {
				n++
				out = fmt.Appendf(out, "$%d", n)
				continue
			}
			out = append(out, q[i])
		}
		return string(out)
	}
	copyRun := p(`INSERT INTO runs (id, flow, device, linked, source, status, labels, started_at, ended_at, summary, event_count, outcome, last_at, step_count, attempt, args, owner, lease_until)
		SELECT ?, flow, device, linked, source, status, labels, started_at, ended_at, summary, event_count, outcome, last_at, step_count, attempt, args, owner, lease_until FROM runs WHERE id = ?`)
	copyEvents := p(`INSERT INTO events (run_id, seq, recorded_at, kind, payload) SELECT ?, seq, recorded_at, kind, payload FROM events WHERE run_id = ?`)
	start := time.Now()
	tx, err := db.Begin()
	if err != nil {
		b.Fatal(err)
	}
	defer tx.Rollback()
	ids := []string{common, rare}
	for i := 2; i < benchListRuns; i++ {
		from := common
		if i%benchListRare == 0 {
			from = rare
		}
		id := newRunID(i)
		if _, err := tx.Exec(copyRun, id, from); err != nil {
			b.Fatal(err)
		}
		if _, err := tx.Exec(copyEvents, id, from); err != nil {
			b.Fatal(err)
		}
		ids = append(ids, id)
	}
	if err := tx.Commit(); err != nil {
		b.Fatal(err)
	}
	if dollar {
		// What autovacuum would do soon after: the planner's statistics.
		if _, err := db.Exec(`ANALYZE`); err != nil {
			b.Fatal(err)
		}
	}
	b.Logf("%d runs stored in %v", len(ids), time.Since(start).Round(time.Millisecond))
	n, err := st.List(ctx, runs.Filter{Limit: 500})
	if err != nil || len(n) != 500 {
		b.Fatalf("the store lists %d runs: %v", len(n), err)
	}
	return ids
}

// newRunID is a version-4 UUID of its own for the i-th copied run.
func newRunID(i int) string {
	return fmt.Sprintf("%08x-0000-4000-8000-%012x", time.Now().UnixNano()&0xffffffff, i)
}

func listArtifacts(b *testing.B) *store.Artifacts {
	b.Helper()
	arts, err := store.NewArtifacts(b.TempDir(), 100, 1<<30)
	if err != nil {
		b.Fatal(err)
	}
	return arts
}
