package tool

import (
	"errors"
	"fmt"
	"net/http"
)

// Kind classifies a tool error; each kind has one HTTP status.
type Kind string

// The kinds of error a tool returns. The wire names match error_kind of the
// Argent protocol where it has one ("validation").
const (
	KindValidation  Kind = "validation"    // bad arguments or a rejected flow
	KindNotFound    Kind = "not_found"     // no such tool, artifact or upload
	KindUnprocessed Kind = "unprocessable" // a file input or member failed a check
	KindConflict    Kind = "conflict"      // e.g. too many devices
	KindUnavailable Kind = "unavailable"   // Chromium missing or crashed
	KindInternal    Kind = "internal"
)

// statusOf is the one table from kind to HTTP status.
var statusOf = map[Kind]int{
	KindValidation:  http.StatusBadRequest,
	KindNotFound:    http.StatusNotFound,
	KindUnprocessed: http.StatusUnprocessableEntity,
	KindConflict:    http.StatusConflict,
	KindUnavailable: http.StatusServiceUnavailable,
	KindInternal:    http.StatusInternalServerError,
}

// Error is a tool error with its kind, an optional code (such as
// FLOW_FILE_INVALID) and the argument it is about.
type Error struct {
	Kind    Kind
	Code    string
	Field   string
	Message string
	// Status overrides the kind's status when non-zero (the seed fixes 422
	// for some validation errors).
	Status int
	Err    error
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

// HTTPStatus returns the status the error is answered with.
func (e *Error) HTTPStatus() int {
	if e.Status != 0 {
		return e.Status
	}
	if s, ok := statusOf[e.Kind]; ok {
		return s
	}
	return http.StatusInternalServerError
}

// Errorf returns an *Error of kind with a formatted message.
func Errorf(kind Kind, format string, a ...any) *Error {
	err := fmt.Errorf(format, a...)
	return &Error{Kind: kind, Message: err.Error(), Err: errors.Unwrap(err)}
}

// FieldError returns a validation error about one argument.
func FieldError(field, format string, a ...any) *Error {
	return &Error{Kind: KindValidation, Field: field, Message: fmt.Sprintf(format, a...)}
}

// AsError returns err as an *Error; an error of another type becomes
// KindInternal with its message kept.
func AsError(err error) *Error {
	var te *Error
	if errors.As(err, &te) {
		return te
	}
	return &Error{Kind: KindInternal, Message: err.Error(), Err: err}
}
