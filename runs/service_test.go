package runs_test

import (
	"errors"
	"testing"

	"github.com/toolserver/toolserver/runs"
)

// TestWouldResume holds the rule of a resume over a run as read, in its
// order: terminal, then driven, then a /tools run, then a re-drive.
func TestWouldResume(t *testing.T) {
	for _, tc := range []struct {
		name string
		run  runs.Run
		want runs.Resumption
	}{
		{"finished", runs.Run{Status: runs.Status{State: runs.Completed}}, runs.Resumption{Verdict: runs.WouldLeave}},
		{"abandoned", runs.Run{Status: runs.Status{State: runs.Abandoned}, Resumable: true}, runs.Resumption{Verdict: runs.WouldLeave}},
		{"driven", runs.Run{Status: runs.Status{State: runs.Running}, Driver: runs.DriverAttached}, runs.Resumption{Verdict: runs.WouldKeep}},
		{"a /tools run", runs.Run{Status: runs.Status{State: runs.Running}, Driver: runs.DriverNone}, runs.Resumption{Verdict: runs.WouldRefuse}},
		{"first attempt", runs.Run{Status: runs.Status{State: runs.Running}, Driver: runs.DriverNone, Resumable: true}, runs.Resumption{Verdict: runs.WouldRedrive, Attempt: 2}},
		{"third attempt", runs.Run{Status: runs.Status{State: runs.Running}, Driver: runs.DriverNone, Resumable: true, Attempt: 2}, runs.Resumption{Verdict: runs.WouldRedrive, Attempt: 3}},
	} {
		if got := runs.WouldResume(tc.run); got != tc.want {
			t.Errorf("%s: got %+v, want %+v", tc.name, got, tc.want)
		}
	}
}

// TestWouldAbandon: a running run is abandoned, a terminal one is left
// alone (ErrWrongState).
func TestWouldAbandon(t *testing.T) {
	if err := runs.WouldAbandon(runs.Run{Status: runs.Status{State: runs.Running}}); err != nil {
		t.Errorf("a running run: %v", err)
	}
	for _, st := range []string{runs.Completed, runs.Failed, runs.Abandoned} {
		err := runs.WouldAbandon(runs.Run{ID: "r", Status: runs.Status{State: st}})
		if !errors.Is(err, runs.ErrWrongState) || err.Error() != "wrong state: run r is "+st+"; there is nothing left to abandon" {
			t.Errorf("a %s run: %v", st, err)
		}
	}
}
