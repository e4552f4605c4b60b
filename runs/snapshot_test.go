package runs_test

import (
	"bytes"
	"database/sql"
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/toolserver/toolserver/flow"
	"github.com/toolserver/toolserver/runs"
)

// snapshotSteps are a snapshot step of each outcome, with the outcome
// the store records for it.
var snapshotSteps = []struct {
	step flow.StepReport
	want string
}{
	{flow.StepReport{Status: flow.StatusPass, Baseline: &flow.SnapshotBaseline{Path: "a.png", State: flow.BaselineCompared}}, flow.SnapshotPassed},
	{flow.StepReport{Status: flow.StatusFail, Baseline: &flow.SnapshotBaseline{Path: "b.png", State: flow.BaselineCompared}}, flow.SnapshotFailed},
	{flow.StepReport{Status: flow.StatusFail, Baseline: &flow.SnapshotBaseline{Path: "c.png", State: flow.BaselineMissing}}, flow.SnapshotMissing},
	{flow.StepReport{Status: flow.StatusPass, Baseline: &flow.SnapshotBaseline{Path: "d.png", State: flow.BaselineWritten}}, flow.SnapshotNew},
	{flow.StepReport{Status: flow.StatusPass, Baseline: &flow.SnapshotBaseline{Path: "e.png", State: flow.BaselineUpdated}}, flow.SnapshotUpdated},
}

// recordSnapshots records a run of a snapshot step of each outcome.
func recordSnapshots(t *testing.T, st *runs.Store) string {
	t.Helper()
	rep := &flow.Report{Passed: 3, Failed: 2}
	for i, s := range snapshotSteps {
		s.step.Index, s.step.Kind, s.step.Flow, s.step.SnapshotKey = i, "snapshot", "home", "home-"+s.step.Baseline.Path
		rep.Steps = append(rep.Steps, s.step)
	}
	return finished(t, st, "home", nil, rep)
}

// TestSnapshotCarriesItsOutcome: a snapshot's outcome is recorded with
// it (flow.SnapshotOutcome), in its SnapshotCompared event, the run's
// detail and the run's output, so that no reader derives it again.
func TestSnapshotCarriesItsOutcome(t *testing.T) {
	forEachView(t, 0, func(t *testing.T, st, rd *runs.Store) {
		id := recordSnapshots(t, st)
		d, err := rd.Get(t.Context(), id)
		if err != nil || len(d.Snapshots) != len(snapshotSteps) || d.Status.Output == nil || len(d.Status.Output.Snapshots) != len(snapshotSteps) {
			t.Fatalf("the run: %+v, %v", d, err)
		}
		evs, _ := rd.Events(t.Context(), id, 0)
		var payloads []map[string]json.RawMessage
		for _, e := range evs {
			if e.Event.Kind == runs.KindSnapshotCompared {
				var m map[string]json.RawMessage
				json.Unmarshal(e.Event.Payload, &m)
				payloads = append(payloads, m)
			}
		}
		for i, s := range snapshotSteps {
			if got := d.Snapshots[i].Outcome; got != s.want {
				t.Errorf("snapshot %d (%s, baseline %s): got %s, want %s", i, s.step.Status, s.step.Baseline.State, got, s.want)
			}
			if got := d.Status.Output.Snapshots[i].Outcome; got != s.want {
				t.Errorf("the output's snapshot %d: got %s, want %s", i, got, s.want)
			}
			if got, want := string(payloads[i]["outcome"]), `"`+s.want+`"`; got != want {
				t.Errorf("SnapshotCompared %d: outcome %s, want %s", i, got, want)
			}
		}
	})
}

// TestOldSnapshotGetsItsOutcome: a snapshot a store recorded before
// snapshots carried their outcome reads with it, by the same rule, and
// with every other byte as the store recorded it.
func TestOldSnapshotGetsItsOutcome(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	st := open(t, dir, 0)
	id := recordSnapshots(t, st)
	recorded := map[int64][]byte{}
	evs, _ := st.Events(t.Context(), id, 0)
	for _, e := range evs {
		recorded[e.Seq] = e.Event.Payload
	}
	st.Close()

	// The store as an older release left it: no outcome in the payloads.
	db, err := sql.Open("sqlite", "file:"+filepath.Join(dir, "runs.db"))
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range snapshotSteps {
		if _, err := db.Exec(`UPDATE events SET payload = replace(payload, ?, '') WHERE kind = ?`, `"outcome":"`+s.want+`",`, runs.KindSnapshotCompared); err != nil {
			t.Fatal(err)
		}
	}
	var left int
	db.QueryRow(`SELECT count(*) FROM events WHERE payload LIKE '%"outcome"%' AND kind = ?`, runs.KindSnapshotCompared).Scan(&left)
	db.Close()
	if left != 0 {
		t.Fatalf("%d payloads kept their outcome", left)
	}

	st = open(t, dir, 0)
	evs, _ = st.Events(t.Context(), id, 0)
	n := 0
	for _, e := range evs {
		if !bytes.Equal(e.Event.Payload, recorded[e.Seq]) {
			t.Errorf("event %d (%s): %s, want %s", e.Seq, e.Event.Kind, e.Event.Payload, recorded[e.Seq])
		}
		if e.Event.Kind == runs.KindSnapshotCompared {
			n++
		}
	}
	if n != len(snapshotSteps) {
		t.Errorf("%d snapshots, want %d", n, len(snapshotSteps))
	}
	d, err := st.Get(t.Context(), id)
	if err != nil || len(d.Snapshots) != len(snapshotSteps) || d.Snapshots[3].Outcome != flow.SnapshotNew {
		t.Errorf("the old run's snapshots: %+v, %v", d.Snapshots, err)
	}
}
