package client

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"

	"github.com/toolserver/toolserver/fault"
	"github.com/toolserver/toolserver/wire"
)

// The errors of a call that the tool-server answered with an error, whose
// connection closed before its result, or whose upload a proxy refused.

// CallError is a call the tool-server answered with an error: a non-2xx
// answer, or an error line of the stream (Status 200 then).
type CallError struct {
	Tool    string
	Status  int
	Message string
	Code    string // error_code
	Kind    string // error_kind
}

func (e *CallError) Error() string { return e.Message }

// classified returns e marked as fault.Infrastructure when the answer is
// about the machinery under the call rather than the call: the token, the
// Host guard, a cap, Chromium, an internal fault of the server. An answer
// whose error_kind is not one of ours, such as a proxy's page, stands for
// the kind of its status.
func (e *CallError) classified() error {
	k := fault.Kind(e.Kind)
	if !k.Known() {
		k = KindOfStatus(e.Status)
	}
	return fault.Classify(k, e)
}

// KindOfStatus is the kind a client reads into an answer that names none
// it knows (a proxy's error page, another server): the kind the tool-server
// answers with that status (the first when two share it; server/status.go
// holds the server's table, and a server test holds the two equal), then
// the statuses only a proxy answers; any other 4xx is a validation error,
// any other 5xx an internal one, and a 2xx or 3xx no kind at all.
func KindOfStatus(status int) fault.Kind {
	if k, ok := statusKinds[status]; ok {
		return k
	}
	switch status / 100 {
	case 4:
		return fault.Validation
	case 5:
		return fault.Internal
	}
	return ""
}

// statusKinds are the statuses KindOfStatus reads a kind into.
var statusKinds = map[int]fault.Kind{
	http.StatusBadRequest: fault.Validation, http.StatusUnauthorized: fault.Unauthorized,
	http.StatusProxyAuthRequired: fault.Unauthorized, http.StatusForbidden: fault.Forbidden,
	http.StatusNotFound: fault.NotFound, http.StatusMethodNotAllowed: fault.MethodNotAllowed,
	http.StatusRequestTimeout: fault.Timeout, http.StatusConflict: fault.Conflict,
	http.StatusRequestEntityTooLarge: fault.TooLarge, http.StatusUnsupportedMediaType: fault.UnsupportedMedia,
	http.StatusUnprocessableEntity: fault.Unprocessed, http.StatusInternalServerError: fault.Internal,
	http.StatusServiceUnavailable: fault.Unavailable, http.StatusBadGateway: fault.Unavailable,
	http.StatusGatewayTimeout: fault.Unavailable, http.StatusInsufficientStorage: fault.InsufficientStorage,
}

// ClosedError is a call whose connection closed before its result arrived
// (docs/link-protocol.md, "The call"). The call is never sent again: the tool
// may have run.
type ClosedError struct {
	Tool  string
	Cause error
}

func (e *ClosedError) Error() string {
	return fmt.Sprintf(wire.ClosedBeforeResult, e.Tool, e.Cause)
}

func (e *ClosedError) Unwrap() error { return e.Cause }

// closed is the error of a call whose connection closed before its
// result: the link broke, so it is marked as the machinery's failure.
func closed(name string, err error) error {
	return fault.Infrastructure(&ClosedError{Tool: name, Cause: closeCause(err)})
}

// UploadTooLargeError is a POST /upload that a proxy (or the tool-server)
// refused with 413. The call was not sent.
type UploadTooLargeError struct {
	// File is the file whose archive was refused.
	File string
	// Size is the archive's size in bytes; -1 when it was streamed.
	Size int64
}

// proxyBodyHint is what a proxy must accept for the largest member: a
// 32 MiB file in its gzipped tar (stored deflate blocks and tar framing
// add a few KiB).
const proxyBodyHint = "33m"

func (e *UploadTooLargeError) Error() string {
	size := "its archive"
	if e.Size >= 0 {
		size = fmt.Sprintf("a body of %d bytes", e.Size)
	}
	return fmt.Sprintf("POST /upload of %s was refused with 413 Request Entity Too Large: the proxy in front of the tool-server must accept %s on POST /upload, and up to %s for the largest file a link sends (32 MiB in its gzipped tar), for example client_max_body_size %s; in nginx. The call was not sent.", e.File, size, proxyBodyHint, proxyBodyHint)
}

// closeCause names why a connection ended: a close from the other side
// reads as such rather than as a bare EOF.
func closeCause(err error) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return fmt.Errorf("other side closed: %w", err)
	}
	return err
}

// answerError turns a non-2xx answer into a CallError, choosing the
// message as Argent's clients do: message when the body has issues, else
// error, else message, else the status. found tells a message of the body
// from the status text.
func answerError(name string, resp *http.Response, body []byte) (ce *CallError, found bool) {
	e := &CallError{Tool: name, Status: resp.StatusCode}
	var b struct {
		Error     *string         `json:"error"`
		Message   *string         `json:"message"`
		Issues    json.RawMessage `json:"issues"`
		ErrorCode string          `json:"error_code"`
		ErrorKind string          `json:"error_kind"`
	}
	if json.Unmarshal(body, &b) == nil {
		e.Code, e.Kind = b.ErrorCode, b.ErrorKind
		switch {
		case len(b.Issues) > 0 && b.Issues[0] == '[' && b.Message != nil:
			e.Message = *b.Message
		case b.Error != nil:
			e.Message = *b.Error
		case b.Message != nil:
			e.Message = *b.Message
		}
	}
	if e.Message != "" {
		return e, true
	}
	e.Message = fmt.Sprintf("%d %s", resp.StatusCode, http.StatusText(resp.StatusCode))
	return e, false
}
