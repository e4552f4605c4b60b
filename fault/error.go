package fault

import (
	"errors"
	"fmt"
	"time"
)

// Error is the coded error of a tool call, of the link's server end and
// of the server: its kind, an optional code (such as FLOW_FILE_INVALID)
// and the argument it is about. The server answers it with the status of
// its kind (server/status.go).
type Error struct {
	Kind    Kind
	Code    string
	Field   string
	Message string
	Err     error
	// RetryAfter, when set, is when the call may succeed if sent again
	// (every device busy and the queue full): the server answers it in a
	// Retry-After header.
	RetryAfter time.Duration
}

func (e *Error) Error() string {
	if e.Message != "" {
		return e.Message
	}
	if e.Err != nil {
		return e.Err.Error()
	}
	return string(e.Kind)
}

func (e *Error) Unwrap() error { return e.Err }

// Is matches a coded error by its code: errors.Is(err, sentinel) holds for
// every error with the sentinel's code, whatever its message (the run
// errors' table, runs/errors.go).
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Code != "" && t.Code == e.Code
}

// Internal reports whether e is a fault of ours whose text is for the
// server's log, not for the client: kind internal, or a kind the table
// does not know.
func (e *Error) Internal() bool {
	return e.Kind == Internal || !e.Kind.Known()
}

// FieldError returns a validation error about one argument.
func FieldError(field, format string, a ...any) *Error {
	return &Error{Kind: Validation, Field: field, Message: fmt.Sprintf(format, a...)}
}

// AsError returns err as an *Error; an error of another type becomes
// kind internal with its message kept (the server replaces the message of
// every internal error before it answers).
func AsError(err error) *Error {
	var te *Error
	if errors.As(err, &te) {
		return te
	}
	return &Error{Kind: Internal, Message: err.Error(), Err: err}
}
