package server

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/toolserver/toolserver/fault"
)

// errorBody is the error envelope: error is what every client shows;
// error_code and error_kind let clients branch (argent flow run reads
// them); field names the offending argument.
type errorBody struct {
	Error     string `json:"error"`
	ErrorCode string `json:"error_code,omitempty"`
	ErrorKind string `json:"error_kind,omitempty"`
	Field     string `json:"field,omitempty"`
}

func envelope(e *fault.Error) errorBody {
	return errorBody{Error: fault.Clip(e.Error(), fault.MaxMessageBytes), ErrorCode: e.Code, ErrorKind: string(e.Kind), Field: e.Field}
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
}

// writeError answers e with the status of its kind, the one table, and
// its Retry-After in whole seconds, rounded up (RFC 9110 section 10.2.3).
func writeError(w http.ResponseWriter, e *fault.Error) {
	if e.RetryAfter > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(int((e.RetryAfter+time.Second-1)/time.Second)))
	}
	writeJSON(w, Status(e.Kind), envelope(e))
}

// internalError logs an internal fault with the request's id and returns
// what the client gets in its place: a stable message that names the id,
// so a raw CDP error, a store failure or a panic never reaches the wire
// and the operator still finds it. A code the fault carries is kept.
func (s *Server) internalError(r *http.Request, what string, err error) *fault.Error {
	id := requestID(r.Context())
	s.cfg.Log.Error("internal error", "request_id", id, "method", r.Method, "path", r.URL.Path, "in", what, "err", err)
	return &fault.Error{Kind: fault.Internal, Code: fault.AsError(err).Code,
		Message: fmt.Sprintf("internal error (request %s); see the tool-server's log", id)}
}
