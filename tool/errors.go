package tool

import (
	"errors"
	"fmt"
	"net/http"
	"time"
)

// Kind classifies a tool error; each kind has one HTTP status, so the
// error_kind and the status of an answer never contradict each other.
type Kind string

// The kinds of error a tool or the server returns. The wire names match
// error_kind of the Argent protocol where it has one ("validation").
const (
	KindValidation       Kind = "validation"         // bad arguments or a rejected flow
	KindUnauthorized     Kind = "unauthorized"       // no or a wrong bearer token
	KindForbidden        Kind = "forbidden"          // a Host the DNS-rebinding guard refuses, a request a web page sent
	KindNotFound         Kind = "not_found"          // no such tool, route, artifact or upload
	KindMethodNotAllowed Kind = "method_not_allowed" // a route asked with the wrong method
	KindConflict         Kind = "conflict"           // e.g. too many devices
	KindTooLarge         Kind = "too_large"          // a body or an upload over its cap
	KindTimeout          Kind = "timeout"            // a request whose body did not arrive in time
	// KindUnsupportedMedia is a tool call whose body is not declared
	// application/json (a web page's form or text/plain post).
	KindUnsupportedMedia Kind = "unsupported_media_type"
	// KindUnprocessed is a file input or a member whose bytes fail a
	// check, or whose upload the server does not have: the seed fixes 422
	// for it ("What the tool-server does with the members").
	KindUnprocessed Kind = "unprocessable"
	// KindWriteFailed is Argent's FLOW_FILE_WRITE_FAILED: the server could
	// not write a file of the project. Its message (path, errno and a
	// hint) is written for the user, unlike an internal fault's.
	KindWriteFailed         Kind = "write_failed"
	KindInternal            Kind = "internal"             // a fault of ours: logged, never sent verbatim
	KindUnavailable         Kind = "unavailable"          // Chromium missing or crashed
	KindInsufficientStorage Kind = "insufficient_storage" // the uploads' pending total is spent
)

// kindInfo is one row of the error table.
type kindInfo struct {
	kind   Kind
	status int
	// infra tells a failure of the machinery under a call (the link, the
	// server, Chromium) from a failure of the call itself; a client exits
	// 2 for the former (PRODUCT.md).
	infra bool
}

// table is the one table from kind to HTTP status, read both ways: the
// first row of a status is the kind an answer without error_kind (a
// proxy's page) stands for.
var table = []kindInfo{
	{KindValidation, http.StatusBadRequest, false},
	{KindUnauthorized, http.StatusUnauthorized, true},
	{KindForbidden, http.StatusForbidden, true},
	{KindNotFound, http.StatusNotFound, false},
	{KindMethodNotAllowed, http.StatusMethodNotAllowed, false},
	{KindTimeout, http.StatusRequestTimeout, true},
	{KindConflict, http.StatusConflict, false},
	{KindTooLarge, http.StatusRequestEntityTooLarge, true},
	{KindUnsupportedMedia, http.StatusUnsupportedMediaType, false},
	{KindUnprocessed, http.StatusUnprocessableEntity, false},
	{KindInternal, http.StatusInternalServerError, true},
	{KindWriteFailed, http.StatusInternalServerError, false},
	{KindUnavailable, http.StatusServiceUnavailable, true},
	{KindInsufficientStorage, http.StatusInsufficientStorage, true},
}

// gatewayKinds are statuses a proxy answers that no tool-server kind has.
var gatewayKinds = map[int]Kind{
	http.StatusProxyAuthRequired: KindUnauthorized,
	http.StatusBadGateway:        KindUnavailable,
	http.StatusGatewayTimeout:    KindUnavailable,
}

func (k Kind) info() (kindInfo, bool) {
	for _, row := range table {
		if row.kind == k {
			return row, true
		}
	}
	return kindInfo{}, false
}

// Known reports whether kind is in the table: a client falls back on the
// status of an answer whose error_kind is another server's.
func (k Kind) Known() bool {
	_, ok := k.info()
	return ok
}

// Status returns the HTTP status of kind; an unknown kind is a 500.
func (k Kind) Status() int {
	if row, ok := k.info(); ok {
		return row.status
	}
	return http.StatusInternalServerError
}

// Infrastructure reports whether an error of kind says the machinery under
// a call failed (the token, the Host guard, a proxy's cap, Chromium, the
// server itself) rather than the call: a client exits 2 for it, not 1.
// An unknown kind is not.
func (k Kind) Infrastructure() bool {
	row, ok := k.info()
	return ok && row.infra
}

// KindOf returns the kind an answer with status stands for when it names
// none (a proxy's error page, another server): the table read backwards,
// then the gateway statuses; any other 4xx is a validation error, any
// other 5xx an internal one, and a 2xx or 3xx no kind at all.
func KindOf(status int) Kind {
	for _, row := range table {
		if row.status == status {
			return row.kind
		}
	}
	if k, ok := gatewayKinds[status]; ok {
		return k
	}
	switch status / 100 {
	case 4:
		return KindValidation
	case 5:
		return KindInternal
	}
	return ""
}

// Error is a tool error with its kind, an optional code (such as
// FLOW_FILE_INVALID) and the argument it is about.
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

// HTTPStatus returns the status the error is answered with: its kind's.
func (e *Error) HTTPStatus() int { return e.Kind.Status() }

// Internal reports whether e is a fault of ours whose text is for the
// server's log, not for the client: kind internal, or a kind the table
// does not know.
func (e *Error) Internal() bool {
	return e.Kind == KindInternal || !e.Kind.Known()
}

// FieldError returns a validation error about one argument.
func FieldError(field, format string, a ...any) *Error {
	return &Error{Kind: KindValidation, Field: field, Message: fmt.Sprintf(format, a...)}
}

// AsError returns err as an *Error; an error of another type becomes
// KindInternal with its message kept (the server replaces the message of
// every internal error before it answers).
func AsError(err error) *Error {
	var te *Error
	if errors.As(err, &te) {
		return te
	}
	return &Error{Kind: KindInternal, Message: err.Error(), Err: err}
}
