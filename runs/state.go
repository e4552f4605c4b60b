package runs

import (
	"encoding/json"
	"time"
)

// A run's state and its log's kinds follow the control-plane conventions'
// vocabulary (docs/control-plane.md, "The run"): a run is running until
// one terminal event ends it, completed (the flow ran to its end, whether
// its checks passed or not: its outcome says which), failed (it could
// not run) or abandoned (retired by hand). The state is folded from the
// log; the store keeps a copy per run so that a list reads no log.

// The states of a run.
const (
	Running   = "running"
	Completed = "completed"
	Failed    = "failed"
	Abandoned = "abandoned"
)

// States are every state a run can have, for filters.
var States = []string{Running, Completed, Failed, Abandoned}

// Terminal reports whether state is a run's final state.
func Terminal(state string) bool { return state != Running }

// The outcomes of a completed run: its flow's checks all passed, or not.
const (
	Passed = "passed"
	// FailedChecks is the outcome of a completed run whose flow had a
	// failed or errored step: the flow ran to its end, its checks did
	// not all pass.
	FailedChecks = "failed"
)

// Outcomes are every outcome a run can have, for filters.
var Outcomes = []string{Passed, FailedChecks}

// The drivers of a run that is not terminal: this process (or the
// process holding the store, for a reader) drives it, or nothing does.
const (
	DriverAttached = "attached"
	DriverNone     = "none"
)

// SchemaVersion is the version of the event envelope's shape.
const SchemaVersion = 1

// The kinds of a run's events.
const (
	// KindRunStarted is the first event: what the run started with.
	KindRunStarted = "RunStarted"
	// KindStepCompleted is a finished step: its report.
	KindStepCompleted = "StepCompleted"
	// KindSnapshotCompared follows a snapshot step's StepCompleted: its
	// outcome and the images the run keeps.
	KindSnapshotCompared = "SnapshotCompared"
	// KindRunInterrupted says the run's driver stopped (the tool-server
	// stopped under it) and left it running, to be resumed. Not terminal.
	KindRunInterrupted = "RunInterrupted"
	// KindRunResumed starts a new attempt: the flow runs again from its
	// first step.
	KindRunResumed = "RunResumed"
	// The terminal kinds.
	KindRunCompleted = "RunCompleted"
	KindRunFailed    = "RunFailed"
	KindRunAbandoned = "RunAbandoned"
)

// Status is a run's status object: always a state, and what that state
// carries (docs/control-plane.md, "The status object").
type Status struct {
	State string `json:"state"`
	// Output is a completed run's report summary.
	Output *Output `json:"output,omitempty"`
	// Error says why a failed run could not run.
	Error string `json:"error,omitempty"`
	// Reason is why an abandoned run was, when it was given one.
	Reason string `json:"reason,omitempty"`
}

// Output is what a completed run's flow reported.
type Output struct {
	OK         bool    `json:"ok"`
	Passed     int     `json:"passed"`
	Failed     int     `json:"failed"`
	Errored    int     `json:"errored"`
	Skipped    int     `json:"skipped"`
	DurationMs float64 `json:"durationMs"`
	// Snapshots are the run's snapshot comparisons, the first
	// MaxOutputSnapshots of them; MoreSnapshots counts the rest.
	Snapshots     []SnapshotOutcome `json:"snapshots,omitempty"`
	MoreSnapshots int               `json:"more_snapshots,omitempty"`
}

// MaxOutputSnapshots bounds the snapshots an output lists: every list of
// runs carries each run's output.
const MaxOutputSnapshots = 100

// SnapshotOutcome is one snapshot comparison of a run's output.
type SnapshotOutcome struct {
	Step   int    `json:"step"`
	Flow   string `json:"flow,omitempty"`
	Key    string `json:"key"`
	Status string `json:"status"`
	// Outcome is the snapshot's outcome (flow.SnapshotOutcome); absent
	// in a run that ended before outputs recorded it.
	Outcome string `json:"outcome,omitempty"`
}

// Outcome is the outcome of a run in status: passed or failed for a
// completed run, else none.
func (s Status) Outcome() string {
	if s.State != Completed || s.Output == nil {
		return ""
	}
	if s.Output.OK {
		return Passed
	}
	return FailedChecks
}

// terminalKind is the kind of the event that ends a run in state.
func terminalKind(state string) string {
	switch state {
	case Completed:
		return KindRunCompleted
	case Abandoned:
		return KindRunAbandoned
	}
	return KindRunFailed
}

// Replay is the pure fold of a run's log (GET /v1/runs/{id}/replay):
// what it derives to, executing nothing.
type Replay struct {
	Status  Status `json:"status"`
	Outcome string `json:"outcome,omitempty"`
	// NextSeq is the sequence number the run's next event would have.
	NextSeq   int64 `json:"next_seq"`
	StepCount int64 `json:"step_count"`
	// Attempt counts the run's attempts: 1, and one more per resume.
	Attempt int `json:"attempt"`
	// FirstRecordedAt and LastRecordedAt are the log's first and newest
	// events' times.
	FirstRecordedAt time.Time `json:"first_recorded_at"`
	LastRecordedAt  time.Time `json:"last_recorded_at"`
}

// Fold folds a run's log, in order, to its replay. The steps and
// snapshots of a run resumed count from its last attempt, which ran the
// flow again from its first step.
func Fold(evs []Event) Replay {
	r := Replay{Status: Status{State: Running}, Attempt: 1}
	for i, e := range evs {
		if i == 0 {
			r.FirstRecordedAt = e.RecordedAt
		}
		r.LastRecordedAt = e.RecordedAt
		r.NextSeq = e.Seq + 1
		switch e.Event.Kind {
		case KindStepCompleted:
			r.StepCount++
		case KindRunResumed:
			r.StepCount = 0
			r.Attempt++
		case KindRunCompleted, KindRunFailed, KindRunAbandoned:
			var st Status
			if json.Unmarshal(e.Event.Payload, &st) == nil && st.State != "" {
				r.Status = st
			} else {
				r.Status = Status{State: Failed, Error: "the run's last event could not be read"}
			}
		}
	}
	r.Outcome = r.Status.Outcome()
	return r
}
