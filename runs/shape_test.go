package runs_test

import (
	"database/sql"
	"encoding/json"
	"path/filepath"
	"reflect"
	"slices"
	"testing"

	"github.com/toolserver/toolserver/flow"
	"github.com/toolserver/toolserver/runs"
)

// TestRunShape: a run as a list and a get show it (a reader beside the
// holder as well) is the shape docs/control-plane.md gives ("The run"):
// the status object, the counts and times, the driver only while it
// runs, and nothing that is unknown (no labels, device or outcome of
// none, never null); an event is the pinned envelope.
func TestRunShape(t *testing.T) {
	forEachView(t, 0, func(t *testing.T, st, rd *runs.Store) {
		rec, err := st.Start(t.Context(), runs.Begin{Flow: "home", Source: "v1", Labels: map[string]string{}})
		if err != nil {
			t.Fatal(err)
		}
		running := fields(t, rd, rec.ID())
		if want := []string{"event_count", "first_recorded_at", "flow", "last_recorded_at", "linked", "run", "source", "status", "step_count", "driver"}; !sameKeys(running, want) {
			t.Errorf("a running run's fields: %v, want %v", keys(running), want)
		}
		if string(running["status"]) != `{"state":"running"}` || string(running["driver"]) != `"attached"` {
			t.Errorf("status %s, driver %s", running["status"], running["driver"])
		}
		snap := flow.StepReport{Index: 1, Kind: "snapshot", Flow: "home", Status: flow.StatusFail, SnapshotKey: "home__chromium-cdp-10x10.png"}
		rec.Step(flow.StepReport{Index: 0, Kind: "tap", Status: flow.StatusPass})
		rec.Step(snap)
		rec.End(&flow.Report{Passed: 1, Failed: 1, Steps: []flow.StepReport{{Kind: "tap"}, snap}}, nil, nil)
		done := fields(t, rd, rec.ID())
		if _, ok := done["driver"]; ok {
			t.Error("a terminal run has a driver")
		}
		want := `{"state":"completed","output":{"ok":false,"passed":1,"failed":1,"errored":0,"skipped":0,"durationMs":0,"snapshots":[{"step":1,"flow":"home","key":"home__chromium-cdp-10x10.png","status":"fail","outcome":"failed"}]}}`
		if string(done["status"]) != want || string(done["outcome"]) != `"failed"` || string(done["step_count"]) != "2" || string(done["event_count"]) != "5" {
			t.Errorf("the completed run: status %s outcome %s steps %s events %s", done["status"], done["outcome"], done["step_count"], done["event_count"])
		}
		evs, _ := rd.Events(t.Context(), rec.ID(), 0)
		b, _ := json.Marshal(evs[0])
		var env map[string]json.RawMessage
		json.Unmarshal(b, &env)
		if !sameKeys(env, []string{"run_id", "seq", "schema_version", "recorded_at", "event"}) || string(env["schema_version"]) != "1" {
			t.Errorf("the envelope: %s", b)
		}
		if string(evs[0].Event.Payload) != `{"flow":"home","linked":false,"source":"v1"}` {
			t.Errorf("RunStarted: %s (no empty labels, no device before it has one)", evs[0].Event.Payload)
		}
		rp, err := rd.Replay(t.Context(), rec.ID())
		if err != nil || rp.FirstRecordedAt != evs[0].RecordedAt || !rp.FirstRecordedAt.Equal(mustRun(t, rd, rec.ID()).FirstRecordedAt) || rp.NextSeq != 5 || rp.StepCount != 2 || rp.Attempt != 1 || rp.Outcome != runs.FailedChecks || !reflect.DeepEqual(rp.Status, mustRun(t, rd, rec.ID()).Status) {
			t.Errorf("replay: %+v %v", rp, err)
		}
	})
}

func mustRun(t *testing.T, st *runs.Store, id string) runs.Run {
	t.Helper()
	r, err := st.Run(t.Context(), id)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// fields is run id's list entry as JSON, by field.
func fields(t *testing.T, st *runs.Store, id string) map[string]json.RawMessage {
	t.Helper()
	page, err := st.ListPage(t.Context(), runs.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range page.Runs {
		if r.ID == id {
			b, _ := json.Marshal(r)
			var m map[string]json.RawMessage
			json.Unmarshal(b, &m)
			for k, v := range m {
				if string(v) == "null" || string(v) == "{}" || string(v) == `""` {
					t.Errorf("field %s is %s: absent fields are omitted", k, v)
				}
			}
			return m
		}
	}
	t.Fatalf("run %s not listed", id)
	return nil
}

func keys(m map[string]json.RawMessage) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

func sameKeys(m map[string]json.RawMessage, want []string) bool {
	want = slices.Clone(want)
	slices.Sort(want)
	return slices.Equal(keys(m), want)
}

// TestFoldResumedRun: the fold of a log with a resume counts the steps
// of its last attempt and ends with the terminal event's status.
func TestFoldResumedRun(t *testing.T) {
	ev := func(seq int64, kind, payload string) runs.Event {
		return runs.Event{Seq: seq, Event: runs.Body{Kind: kind, Payload: json.RawMessage(payload)}}
	}
	rp := runs.Fold([]runs.Event{
		ev(0, runs.KindRunStarted, `{}`), ev(1, runs.KindStepCompleted, `{}`), ev(2, runs.KindStepCompleted, `{}`),
		ev(3, runs.KindRunInterrupted, `{}`), ev(4, runs.KindRunResumed, `{"attempt":2}`), ev(5, runs.KindStepCompleted, `{}`),
		ev(6, runs.KindRunAbandoned, `{"state":"abandoned","reason":"enough"}`),
	})
	if rp.NextSeq != 7 || rp.StepCount != 1 || rp.Attempt != 2 || rp.Status != (runs.Status{State: runs.Abandoned, Reason: "enough"}) || rp.Outcome != "" {
		t.Errorf("fold: %+v", rp)
	}
	if rp := runs.Fold(nil); rp.Status.State != runs.Running || rp.NextSeq != 0 {
		t.Errorf("fold of nothing: %+v", rp)
	}
}

// TestOpenUpgradesAVersion0Store: a store an older release wrote (bare
// status strings, snake_case kinds, a summary) reads in the new shape
// after the next Open: passed and failed runs completed with their
// outcome, errored and interrupted ones failed with their reason,
// cancelled ones abandoned, and their events renamed.
func TestOpenUpgradesAVersion0Store(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db, err := sql.Open("sqlite", "file:"+filepath.Join(dir, "runs.db"))
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		`CREATE TABLE runs (n INTEGER PRIMARY KEY AUTOINCREMENT, id TEXT NOT NULL UNIQUE, flow TEXT NOT NULL, device TEXT NOT NULL DEFAULT '', linked INTEGER NOT NULL DEFAULT 0, source TEXT NOT NULL, status TEXT NOT NULL, labels TEXT, started_at INTEGER NOT NULL, ended_at INTEGER, summary TEXT, event_count INTEGER NOT NULL DEFAULT 0)`,
		`CREATE TABLE events (run_id TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE, seq INTEGER NOT NULL, recorded_at INTEGER NOT NULL, kind TEXT NOT NULL, payload TEXT NOT NULL, PRIMARY KEY (run_id, seq))`,
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	old := []struct{ id, status, summary string }{
		{"a1111111-2222-4333-8444-555555555555", "passed", `{"passed":2,"failed":0,"skipped":0,"errored":0,"durationMs":12}`},
		{"b1111111-2222-4333-8444-555555555555", "failed", `{"passed":1,"failed":1,"skipped":0,"errored":0,"durationMs":12}`},
		{"c1111111-2222-4333-8444-555555555555", "errored", `{"passed":0,"failed":0,"skipped":0,"errored":0,"durationMs":0,"reason":"chromium died"}`},
		{"d1111111-2222-4333-8444-555555555555", "cancelled", `{"passed":0,"failed":0,"skipped":0,"errored":0,"durationMs":0,"reason":"cancelled"}`},
		{"e1111111-2222-4333-8444-555555555555", "interrupted", `{"passed":0,"failed":0,"skipped":0,"errored":0,"durationMs":0,"reason":"killed"}`},
	}
	for i, r := range old {
		if _, err := db.Exec(`INSERT INTO runs (id, flow, source, status, started_at, ended_at, summary, event_count) VALUES (?, 'home', 'tools', ?, ?, ?, ?, 3)`, r.id, r.status, 1000+i, 2000+i, r.summary); err != nil {
			t.Fatal(err)
		}
		for seq, kind := range []string{"run_started", "step", "run_ended"} {
			if _, err := db.Exec(`INSERT INTO events VALUES (?, ?, ?, ?, '{}')`, r.id, seq, 1000+i+seq, kind); err != nil {
				t.Fatal(err)
			}
		}
	}
	db.Close()
	st := open(t, dir, 0)
	want := []struct {
		status  runs.Status
		outcome string
		kind    string
	}{
		{runs.Status{State: runs.Completed, Output: &runs.Output{OK: true, Passed: 2, DurationMs: 12}}, runs.Passed, runs.KindRunCompleted},
		{runs.Status{State: runs.Completed, Output: &runs.Output{Passed: 1, Failed: 1, DurationMs: 12}}, runs.FailedChecks, runs.KindRunCompleted},
		{runs.Status{State: runs.Failed, Error: "chromium died"}, "", runs.KindRunFailed},
		{runs.Status{State: runs.Abandoned, Reason: "cancelled"}, "", runs.KindRunAbandoned},
		{runs.Status{State: runs.Failed, Error: "killed"}, "", runs.KindRunFailed},
	}
	for i, r := range old {
		got, err := st.Get(t.Context(), r.id)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got.Status, want[i].status) || got.Outcome != want[i].outcome || got.StepCount != 1 || len(got.Steps) != 1 || got.LastRecordedAt.UnixMilli() != int64(1002+i) {
			t.Errorf("%s run: %+v, want %+v and outcome %q", r.status, got.Run, want[i].status, want[i].outcome)
		}
		evs, _ := st.Events(t.Context(), r.id, 0)
		var kinds []string
		for _, e := range evs {
			kinds = append(kinds, e.Event.Kind)
		}
		if !slices.Equal(kinds, []string{runs.KindRunStarted, runs.KindStepCompleted, want[i].kind}) {
			t.Errorf("%s run's kinds: %v", r.status, kinds)
		}
		if rp := runs.Fold(evs); !reflect.DeepEqual(rp.Status, want[i].status) {
			t.Errorf("%s run's fold: %+v", r.status, rp.Status)
		}
	}
	if page, _ := st.ListPage(t.Context(), runs.Filter{Outcome: runs.Passed}); len(page.Runs) != 1 || page.Runs[0].ID != old[0].id {
		t.Errorf("outcome filter after the upgrade: %+v", page.Runs)
	}
}
