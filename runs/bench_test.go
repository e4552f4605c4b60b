package runs_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/toolserver/toolserver/flow"
	"github.com/toolserver/toolserver/internal/pgtest"
	"github.com/toolserver/toolserver/runs"
)

// BenchmarkRecordRun is the store's part of a run of the mini flow of
// docs/performance.md, without the browser: the writes flow-execute makes
// for it (Start with its arguments, the flow and the device, five steps
// of which the last a snapshot that matched its baseline, End), on the
// SQLite store of one process and on a fleet's PostgreSQL (a database of
// the test binary's real cluster, over its unix socket). It reports the
// time of a whole run (docs/performance.md, "The fleet's store").
func BenchmarkRecordRun(b *testing.B) {
	for _, kind := range []string{"sqlite", "postgres"} {
		b.Run(kind, func(b *testing.B) {
			var st *runs.Store
			var err error
			if kind == "sqlite" {
				st, err = runs.Open(b.TempDir(), 0)
			} else {
				st, err = runs.OpenPostgres(context.Background(), pgtest.DSN(b), runs.PostgresOptions{})
			}
			if err != nil {
				b.Fatal(err)
			}
			defer st.Close()
			ctx := context.Background()
			steps := []flow.StepReport{
				{Index: 0, Kind: "launch", Flow: "mini", Status: flow.StatusPass, Target: "http://127.0.0.1/app.html", DurationMs: 95},
				{Index: 1, Kind: "tap", Flow: "mini", Status: flow.StatusPass, Target: `"Go now"`, DurationMs: 9},
				{Index: 2, Kind: "type", Flow: "mini", Status: flow.StatusPass, Target: `into id="username"`, DurationMs: 5},
				{Index: 3, Kind: "assert", Flow: "mini", Status: flow.StatusPass, DurationMs: 1},
				{Index: 4, Kind: "snapshot", Flow: "mini", Status: flow.StatusPass, SnapshotKey: "mini__chromium-1280x800.png", DurationMs: 30},
			}
			var last string
			var total time.Duration
			for b.Loop() {
				start := time.Now()
				rec, err := st.Start(ctx, runs.Begin{Source: "v1", Args: json.RawMessage(`{"name":"mini","project_root":"/p"}`)})
				if err != nil {
					b.Fatal(err)
				}
				if err := rec.SetFlow("mini"); err != nil {
					b.Fatal(err)
				}
				if err := rec.SetDevice("chromium-cdp-1280x800"); err != nil {
					b.Fatal(err)
				}
				for _, s := range steps {
					if err := rec.Step(s); err != nil {
						b.Fatal(err)
					}
				}
				if err := rec.End(&flow.Report{OK: true, Passed: len(steps), Steps: steps}, nil, nil); err != nil {
					b.Fatal(err)
				}
				total += time.Since(start)
				last = rec.ID()
			}
			d, err := st.Get(ctx, last)
			if err != nil || d.Outcome != "passed" || len(d.Steps) != len(steps) || len(d.Snapshots) != 1 {
				b.Fatalf("the last run as recorded: %v %+v", err, d)
			}
			b.ReportMetric(float64(total.Microseconds())/1000/float64(b.N), "ms/run")
		})
	}
}
