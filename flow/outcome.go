package flow

// The outcomes of a snapshot step (SnapshotOutcome): what the report,
// the Markdown summary and the dashboard call it.
const (
	SnapshotPassed  = "passed"
	SnapshotFailed  = "failed"
	SnapshotMissing = "missing"
	SnapshotNew     = "new"
	SnapshotUpdated = "updated"
)

// SnapshotOutcome is the outcome of snapshot step s, from its status and
// its baseline's state after it: the one rule every front end reads (the
// report, the summary, and the run store, which records it for the
// dashboard). The rule:
//
//   - missing: there was no baseline to compare with, whatever the
//     step's status;
//   - failed: otherwise, the step did not pass (a capture the run would
//     have adopted as the baseline, but the step failed, is failed too);
//   - new, updated: the step passed and the run adopted its capture as
//     the baseline, a new file or over an existing one;
//   - passed: the step passed against its baseline (or named none).
//
// What a front end shows of each outcome (which it lists, with which
// images) is its own.
func SnapshotOutcome(s StepReport) string {
	state := ""
	if s.Baseline != nil {
		state = s.Baseline.State
	}
	switch {
	case state == BaselineMissing:
		return SnapshotMissing
	case s.Status != StatusPass:
		return SnapshotFailed
	case state == BaselineWritten:
		return SnapshotNew
	case state == BaselineUpdated:
		return SnapshotUpdated
	}
	return SnapshotPassed
}
