package flow

import "testing"

// TestSnapshotOutcome walks the rule over every status and baseline
// state a snapshot step can end with.
func TestSnapshotOutcome(t *testing.T) {
	for _, tc := range []struct {
		status, state string // state "": no baseline named
		want          string
	}{
		{StatusPass, BaselineCompared, SnapshotPassed},
		{StatusPass, "", SnapshotPassed},
		{StatusPass, BaselineWritten, SnapshotNew},
		{StatusPass, BaselineUpdated, SnapshotUpdated},
		{StatusPass, BaselineMissing, SnapshotMissing},
		{StatusFail, BaselineCompared, SnapshotFailed},
		{StatusFail, "", SnapshotFailed},
		{StatusFail, BaselineMissing, SnapshotMissing},
		{StatusFail, BaselineWritten, SnapshotFailed},
		{StatusFail, BaselineUpdated, SnapshotFailed},
		{StatusError, BaselineMissing, SnapshotMissing},
		{StatusError, "", SnapshotFailed},
		{StatusSkip, "", SnapshotFailed},
	} {
		s := StepReport{Kind: string(KindSnapshot), Status: tc.status}
		if tc.state != "" {
			s.Baseline = &SnapshotBaseline{Path: "b.png", State: tc.state}
		}
		if got := SnapshotOutcome(s); got != tc.want {
			t.Errorf("%s with baseline %q: got %s, want %s", tc.status, tc.state, got, tc.want)
		}
	}
}
