package flow

import "errors"

// The statuses of a step.
const (
	StatusPass  = "pass"
	StatusFail  = "fail"
	StatusSkip  = "skip"
	StatusError = "error"
)

// Report is the result of a run, in the shape PRODUCT.md and the Argent
// clients render.
type Report struct {
	Flow                  string       `json:"flow"`
	Device                string       `json:"device"`
	ExecutionPrerequisite string       `json:"executionPrerequisite"`
	OK                    bool         `json:"ok"`
	Aborted               bool         `json:"aborted,omitempty"`
	Passed                int          `json:"passed"`
	Failed                int          `json:"failed"`
	Skipped               int          `json:"skipped"`
	Errored               int          `json:"errored"`
	StartedAt             int64        `json:"startedAt"`
	DurationMs            float64      `json:"durationMs"`
	Steps                 []StepReport `json:"steps"`
	// BaselineWrites are the client-file directives of the baselines a
	// linked run wrote (link seed, "Baselines in the result").
	BaselineWrites []any `json:"baselineWrites,omitempty"`
	// Warnings are run-level notices (e.g. a secret in an echo).
	Warnings []string `json:"warnings,omitempty"`
}

// StepReport is one line of a report. Index is the 0-based position in
// Steps; Depth is omitted at level 0.
type StepReport struct {
	Index       int            `json:"index"`
	Kind        string         `json:"kind"`
	Flow        string         `json:"flow"`
	Depth       int            `json:"depth,omitempty"`
	Status      string         `json:"status"`
	Reason      string         `json:"reason,omitempty"`
	Warning     string         `json:"warning,omitempty"`
	Message     string         `json:"message,omitempty"`
	Target      string         `json:"target,omitempty"`
	Tool        string         `json:"tool,omitempty"`
	Result      any            `json:"result,omitempty"`
	Line        int            `json:"line,omitempty"`
	SnapshotKey string         `json:"snapshotKey,omitempty"`
	Mismatch    *Mismatch      `json:"mismatch,omitempty"`
	ScriptLog   string         `json:"scriptLog,omitempty"`
	DurationMs  float64        `json:"durationMs"`
	Artifacts   map[string]any `json:"artifacts,omitempty"`
	// Err is the typed error behind an error status, kept for callers
	// that branch on it (errors.Is(Err, ErrInfrastructure)); it never
	// reaches the wire.
	Err error `json:"-"`
}

// InfrastructureError returns the error of the first step that failed
// because the machinery under the flow failed (it matches
// ErrInfrastructure), or nil when every failure was the flow's own.
func (r *Report) InfrastructureError() error {
	for _, s := range r.Steps {
		if s.Err != nil && errors.Is(s.Err, ErrInfrastructure) {
			return s.Err
		}
	}
	return nil
}

// Mismatch explains a snapshot comparison: how many pixels differ and
// where.
type Mismatch struct {
	Pixels      int     `json:"pixels"`
	Percent     float64 `json:"percent"`
	MaxMismatch float64 `json:"maxMismatch"`
	Regions     any     `json:"regions,omitempty"`
}

// count adds a finished step to the totals; echo lines never count.
func (r *Report) count(s StepReport) {
	if s.Kind == string(KindEcho) {
		return
	}
	switch s.Status {
	case StatusPass:
		r.Passed++
	case StatusFail:
		r.Failed++
	case StatusSkip:
		r.Skipped++
	default:
		r.Errored++
	}
}
