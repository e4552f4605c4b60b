package runs

import "encoding/json"

// The wire of the /v1 control plane that both its server (package
// server) and its client (Client) speak: the error envelope and its
// codes, the start request and answer. One owner, so the two ends cannot
// disagree.

// The codes of the /v1 error envelope.
const (
	CodeBadRequest      = "bad_request"
	CodeUnauthorized    = "unauthorized"
	CodeUnknownRun      = "unknown_run"
	CodeRunExists       = "run_exists"
	CodeWrongState      = "wrong_state"
	CodePayloadTooLarge = "payload_too_large"
	CodeInternal        = "internal"
	// CodeNotFound is a route or a feature the server does not have.
	CodeNotFound = "not_found"
	// CodeForbidden is a request the Host guard or the origin rule
	// refuses, whatever its token.
	CodeForbidden = "forbidden"
	// CodeMethodNotAllowed is a route asked with a method it does not
	// take; the answer's Allow header lists the ones it does.
	CodeMethodNotAllowed = "method_not_allowed"
	// CodeUnavailable is a server that is stopping (draining), whose
	// requests another replica takes, or one with all its event streams
	// open, which a Retry-After tells when to ask again.
	CodeUnavailable = "unavailable"
)

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

// AbandonRequest is POST /v1/runs/{id}/abandon's optional body.
type AbandonRequest struct {
	Reason string `json:"reason,omitempty"`
}

// EndFrame is the data of an event stream's end frame: the run's status,
// and detached when no driver runs it (it ended nothing; a resume
// continues it).
type EndFrame struct {
	Status   Status `json:"status"`
	Detached bool   `json:"detached,omitempty"`
}
