package server

import (
	"encoding/json"
	"net/http"

	"github.com/toolserver/toolserver/tool"
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

func envelope(e *tool.Error) errorBody {
	return errorBody{Error: e.Error(), ErrorCode: e.Code, ErrorKind: string(e.Kind), Field: e.Field}
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
}

func writeError(w http.ResponseWriter, e *tool.Error) {
	writeJSON(w, e.HTTPStatus(), envelope(e))
}
