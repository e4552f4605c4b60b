// Package linktest is a tool-server for tests of the link's client side,
// as net/http/httptest is an HTTP server for tests of a handler: it lists
// tools, takes uploads and answers calls as docs/link-protocol.md says a
// tool-server does, and records every request it receives so a test can
// read what the client sent.
//
// It is test support, not product code: only tests import it
// (internal/layout holds that rule).
package linktest

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	linkclient "github.com/toolserver/toolserver/link/client"
)

// Request is one request the server received.
type Request struct {
	Method, Path string
	Header       http.Header
	Body         []byte
}

// Server is a recording tool-server. Set its fields before the client
// calls it.
type Server struct {
	// URL is the server's base URL, of the form http://127.0.0.1:port.
	URL string
	// Tools is the listing of GET /tools.
	Tools []linkclient.ToolEntry
	// Answer answers POST /tools/<name> with the call's body; the default
	// streams one progress line and the result {"ok":true}.
	Answer func(w http.ResponseWriter, body []byte)
	// UploadStatus, when set, answers POST /upload with it (and the HTML
	// page of a proxy); otherwise an upload is taken and its id is
	// up-<n>, n the count of requests so far.
	UploadStatus int
	// Artifacts are served on GET /artifacts/<id>.
	Artifacts map[string][]byte
	// Forget keeps no request (a benchmark makes many).
	Forget bool

	t   testing.TB
	srv *httptest.Server

	// mu guards reqs, and the fields above while a request reads them.
	mu   sync.Mutex
	reqs []Request
}

// NewServer starts a Server listing tools; the test's cleanup closes it.
func NewServer(t testing.TB, tools ...linkclient.ToolEntry) *Server {
	t.Helper()
	s := &Server{t: t, Tools: tools}
	s.Answer = func(w http.ResponseWriter, body []byte) {
		Stream(w, `{"event":"progress","data":{"index":0}}`, `{"event":"result","data":{"ok":true}}`)
	}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	s.URL = s.srv.URL
	t.Cleanup(s.srv.Close)
	return s
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		s.t.Errorf("linktest: read body: %v", err)
	}
	s.mu.Lock()
	s.reqs = append(s.reqs, Request{r.Method, r.URL.Path, r.Header.Clone(), body})
	n := len(s.reqs)
	if s.Forget {
		s.reqs = s.reqs[:0]
	}
	tools, status, answer := s.Tools, s.UploadStatus, s.Answer
	artifact, isArtifact := s.Artifacts[strings.TrimPrefix(r.URL.Path, "/artifacts/")]
	s.mu.Unlock()
	switch {
	case r.Method == http.MethodGet && r.URL.Path == "/tools":
		WriteJSON(w, 200, map[string]any{"tools": tools})
	case r.Method == http.MethodPost && r.URL.Path == "/upload":
		if status != 0 {
			w.WriteHeader(status)
			fmt.Fprint(w, "<html><body>413 Request Entity Too Large</body></html>")
			return
		}
		sum := sha256.Sum256(body)
		WriteJSON(w, 200, map[string]any{"uploadId": fmt.Sprintf("up-%d", n), "contentHash": hex.EncodeToString(sum[:]), "size": len(body)})
	case r.Method == http.MethodPost && strings.HasPrefix(r.URL.Path, "/tools/"):
		answer(w, body)
	case r.Method == http.MethodGet && strings.HasPrefix(r.URL.Path, "/artifacts/") && isArtifact:
		w.Write(artifact)
	default:
		w.WriteHeader(404)
	}
}

// Client is a link client of s, with token as its bearer token ("" for
// none).
func (s *Server) Client(token string) *linkclient.Client {
	return linkclient.NewClient(s.URL+"/", token, nil)
}

// Requests returns the recorded requests to path ("" for all); a path
// ending in "/" matches a prefix.
func (s *Server) Requests(path string) []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Request
	for _, r := range s.reqs {
		if path == "" || r.Path == path || strings.HasSuffix(path, "/") && strings.HasPrefix(r.Path, path) {
			out = append(out, r)
		}
	}
	return out
}

// LastCall returns the body of the latest POST /tools/<name>, decoded by
// key; it fails the test when no call came.
func (s *Server) LastCall(t testing.TB) map[string]json.RawMessage {
	t.Helper()
	calls := s.Requests("/tools/")
	if len(calls) == 0 {
		t.Fatal("no call reached the stub")
	}
	last := calls[len(calls)-1]
	var body map[string]json.RawMessage
	if err := json.Unmarshal(last.Body, &body); err != nil {
		t.Fatalf("call body %q: %v", last.Body, err)
	}
	return body
}

// WriteJSON answers with status and v as JSON.
func WriteJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

// Stream answers with an NDJSON stream of lines, each flushed as it is
// written.
func Stream(w http.ResponseWriter, lines ...string) {
	w.Header().Set("Content-Type", "application/x-ndjson")
	w.WriteHeader(200)
	for _, l := range lines {
		fmt.Fprintln(w, l)
		w.(http.Flusher).Flush()
	}
}
