package runs

import (
	"errors"
	"fmt"
	"strings"

	"github.com/toolserver/toolserver/fault"
)

// The codes of the /v1 error envelope (docs/control-plane.md).
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

// The errors of the runs, for the table below. Each is a coded error
// (errors.Is matches by its code, fault.Error.Is): a refusal made with
// Refuse matches its sentinel whatever its message, and so does the
// error a /v1 client rebuilds from an envelope (Rebuild).
var (
	ErrUnknownRun = &fault.Error{Kind: fault.NotFound, Code: CodeUnknownRun, Message: "unknown run"}
	ErrRunExists  = &fault.Error{Kind: fault.Conflict, Code: CodeRunExists, Message: "run exists"}
	ErrWrongState = &fault.Error{Kind: fault.Conflict, Code: CodeWrongState, Message: "wrong state"}
	// ErrBadCursor is a before cursor that is not a UUID or names no
	// run: a request to fix, not a run that is missing.
	ErrBadCursor = &fault.Error{Kind: fault.Validation, Code: "bad_cursor", Message: "bad cursor"}
	// ErrBadRequest is a request refused as it stands (a reason over
	// its bound, tool_args that are not an object).
	ErrBadRequest = &fault.Error{Kind: fault.Validation, Code: CodeBadRequest, Message: "bad request"}
	// ErrAttached is a resume of a run a driver runs already.
	ErrAttached = &fault.Error{Kind: fault.Conflict, Code: "attached", Message: "the run is being driven"}
	// ErrUnavailable is a start or a resume asked of a process that is
	// stopping: another replica takes it.
	ErrUnavailable = &fault.Error{Kind: fault.Unavailable, Code: CodeUnavailable, Message: "unavailable"}
)

// The causes of a run's context and the errors of opening a store: not
// answers of a verb, so not in the table.
var (
	// ErrAbandoned is the cause of a run's context when it was
	// abandoned while it ran.
	ErrAbandoned = errors.New("the run was abandoned")
	// ErrStopping is the cause when the server stopped under the run.
	ErrStopping = errors.New("the tool-server stopped")
	// ErrHeld is an Open of a store another process holds.
	ErrHeld = errors.New("held by another process")
)

// ErrorRow is one row of the run errors' table: the sentinel (its fault
// kind, which gives its HTTP status, server/status.go; and its code), the
// code of the /v1 envelope it travels as, and whether it is a result
// rather than a mistake: the run is not in the state the verb needs (the
// runs commands exit 1 for it, 2 for the others).
type ErrorRow struct {
	Err    *fault.Error
	Wire   string
	Result bool
}

// Errors is the one table of the run errors, read both ways: the /v1
// surface and MCP's run tools answer an error with its row's code (and
// the status of its kind), the /v1 client rebuilds the row's sentinel
// from the code (Rebuild), and the runs commands exit by its Result.
// Where rows share a /v1 code, the first is the code's own and a later
// one is told by its message, which starts with the sentinel's.
var Errors = []ErrorRow{
	{Err: ErrBadRequest, Wire: CodeBadRequest},
	{Err: ErrBadCursor, Wire: CodeBadRequest},
	{Err: ErrUnknownRun, Wire: CodeUnknownRun},
	{Err: ErrRunExists, Wire: CodeRunExists},
	{Err: ErrWrongState, Wire: CodeWrongState, Result: true},
	{Err: ErrAttached, Wire: CodeWrongState, Result: true},
	{Err: ErrUnavailable, Wire: CodeUnavailable},
}

// ErrorOf is the row of err, when err is one of the table's.
func ErrorOf(err error) (ErrorRow, bool) {
	for _, row := range Errors {
		if errors.Is(err, row.Err) {
			return row, true
		}
	}
	return ErrorRow{}, false
}

// Rebuild is the error an answer of /v1 with code and message stands
// for: the coded error of its row, with the message; nil for a code the
// table does not have.
func Rebuild(code, message string) *fault.Error {
	var pick *fault.Error
	for _, row := range Errors {
		if row.Wire != code {
			continue
		}
		if pick == nil || strings.HasPrefix(message, row.Err.Message+":") {
			pick = row.Err
		}
	}
	if pick == nil {
		return nil
	}
	return &fault.Error{Kind: pick.Kind, Code: pick.Code, Message: message}
}

// Refuse is an error of sentinel's row with its own message.
func Refuse(sentinel *fault.Error, format string, args ...any) error {
	return &fault.Error{Kind: sentinel.Kind, Code: sentinel.Code, Message: fmt.Sprintf(format, args...)}
}
