package runs

import "encoding/json"

// The wire of the /v1 control plane that both its server (package
// server) and its client (runs/v1) speak: the error envelope (its codes
// are errors.go's), the requests and answers of Service. One owner, so
// the two ends cannot disagree.

// ErrorBody is the /v1 error envelope:
// {"error": {"code", "message", "details"?}}.
type ErrorBody struct {
	Error ErrorDetail `json:"error"`
}

// ErrorDetail is the envelope's error.
type ErrorDetail struct {
	Code    string         `json:"code"`
	Message string         `json:"message"`
	Details map[string]any `json:"details,omitempty"`
}

// AbandonRequest is POST /v1/runs/{id}/abandon's optional body.
type AbandonRequest struct {
	Reason string `json:"reason,omitempty"`
}

// StartRequest is POST /v1/runs's body, as the client sends it and the
// server reads it.
type StartRequest struct {
	// ToolArgs are flow-execute's arguments, members included: a JSON
	// object.
	ToolArgs json.RawMessage   `json:"tool_args"`
	Labels   map[string]string `json:"labels,omitempty"`
	RunID    string            `json:"run_id,omitempty"`
}

// Started is POST /v1/runs's answer: the run and its state, running (a
// bare string, as the conventions' start answer has it: docs/control-plane.md,
// "Starting a run: fire and return").
type Started struct {
	Run    string `json:"run"`
	Status string `json:"status"`
}

// Resumed is POST /v1/runs/{id}/resume's answer: 202 with outcome
// driving and status running for a run now driving, 200 with the
// terminal state as outcome and the status object for a finished one.
type Resumed struct {
	Run     string          `json:"run"`
	Outcome string          `json:"outcome"`
	Status  json.RawMessage `json:"status"`
}

// ResumeDriving is the outcome of a resume that drives the run.
const ResumeDriving = "driving"

// EndFrame is the data of an event stream's end frame: the run's status,
// and detached when no driver runs it (it ended nothing; a resume
// continues it).
type EndFrame struct {
	Status   Status `json:"status"`
	Detached bool   `json:"detached,omitempty"`
}
