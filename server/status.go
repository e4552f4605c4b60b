package server

import (
	"net/http"

	"github.com/toolserver/toolserver/fault"
	"github.com/toolserver/toolserver/runs"
)

// answer is one row of the table below: a kind of error, the HTTP status
// both envelopes answer it with, and the code the /v1 envelope gives it.
// The run errors (runs.Errors) have codes of their own, and the status of
// their kind.
type answer struct {
	kind   fault.Kind
	status int
	v1     string
}

// answers is the one table from an error to its HTTP answer, for Argent's
// envelope on /tools ({"error", "error_code", "error_kind", "field"}) and
// for the /v1 envelope ({"error": {"code", "message"}}) alike, so a kind's
// status never depends on the surface that answers it. A /v1 code answers
// the status of its first row.
var answers = []answer{
	{fault.Validation, http.StatusBadRequest, runs.CodeBadRequest},
	{fault.Unauthorized, http.StatusUnauthorized, runs.CodeUnauthorized},
	{fault.Forbidden, http.StatusForbidden, runs.CodeForbidden},
	{fault.NotFound, http.StatusNotFound, runs.CodeNotFound},
	{fault.MethodNotAllowed, http.StatusMethodNotAllowed, runs.CodeMethodNotAllowed},
	{fault.Timeout, http.StatusRequestTimeout, runs.CodeBadRequest},
	{fault.Conflict, http.StatusConflict, runs.CodeBadRequest},
	{fault.TooLarge, http.StatusRequestEntityTooLarge, runs.CodePayloadTooLarge},
	{fault.UnsupportedMedia, http.StatusUnsupportedMediaType, runs.CodeBadRequest},
	{fault.Unprocessed, http.StatusUnprocessableEntity, runs.CodeBadRequest},
	{fault.Internal, http.StatusInternalServerError, runs.CodeInternal},
	{fault.WriteFailed, http.StatusInternalServerError, runs.CodeBadRequest},
	{fault.Unavailable, http.StatusServiceUnavailable, runs.CodeUnavailable},
	{fault.InsufficientStorage, http.StatusInsufficientStorage, runs.CodeBadRequest},
}

// Status returns the HTTP status an error of kind k is answered with; an
// unknown kind is a 500.
func Status(k fault.Kind) int {
	if row, ok := answerOf(k); ok {
		return row.status
	}
	return http.StatusInternalServerError
}

func answerOf(k fault.Kind) (answer, bool) {
	for _, row := range answers {
		if row.kind == k && k != "" {
			return row, true
		}
	}
	return answer{}, false
}

// v1Code returns the /v1 code of kind k: bad_request for a kind the table
// does not give one.
func v1Code(k fault.Kind) string {
	if row, ok := answerOf(k); ok {
		return row.v1
	}
	return runs.CodeBadRequest
}

// v1Status returns the status of a /v1 code: the status of its first row.
func v1Status(code string) int {
	for _, row := range answers {
		if row.v1 == code {
			return row.status
		}
	}
	return http.StatusInternalServerError
}
