package report

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"sync"
)

// TokenHeader carries the token of a served report on approve requests.
const TokenHeader = "X-Report-Token"

// maxApproveBody caps the body of an approve request.
const maxApproveBody = 1 << 20

// Server serves a report directory with its approve buttons turned on:
// the page and its images to anyone who can reach it (it binds to
// loopback), and POST /approve to requests that carry its token, which
// call Approve as toolserver approve does.
type Server struct {
	dir, project string
	// Token is the random token the page's URL carries.
	Token string
	rep   *Report
	root  *os.Root
	// mu runs one approval at a time.
	mu sync.Mutex
}

// NewServer reads the report in dir for serving; approvals write into
// project.
func NewServer(dir, project string) (*Server, error) {
	rep, err := Read(dir)
	if err != nil {
		return nil, err
	}
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		return nil, err
	}
	return &Server{dir: dir, project: project, Token: hex.EncodeToString(b), rep: rep}, nil
}

// Handler serves the report and its approvals.
func (s *Server) Handler() (http.Handler, error) {
	root, err := os.OpenRoot(s.dir)
	if err != nil {
		return nil, err
	}
	s.root = root
	files := http.FileServerFS(root.FS())
	mux := http.NewServeMux()
	mux.Handle("GET /", files)
	mux.HandleFunc("POST /approve", s.approve)
	return mux, nil
}

// Close releases the report's directory.
func (s *Server) Close() error {
	if s.root == nil {
		return nil
	}
	return s.root.Close()
}

// approveRequest is the page's request: what to approve.
type approveRequest struct {
	All   bool   `json:"all"`
	Flows []int  `json:"flows"`
	Items []Item `json:"items"`
}

func (s *Server) approve(w http.ResponseWriter, r *http.Request) {
	if subtle.ConstantTimeCompare([]byte(r.Header.Get(TokenHeader)), []byte(s.Token)) != 1 {
		writeJSON(w, http.StatusForbidden, map[string]string{"error": "this request does not carry the token of the URL report serve printed"})
		return
	}
	var req approveRequest
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxApproveBody))
	if err == nil {
		err = json.Unmarshal(body, &req)
	}
	var tooLarge *http.MaxBytesError
	switch {
	case errors.As(err, &tooLarge):
		writeJSON(w, http.StatusRequestEntityTooLarge, map[string]string{"error": "the request is larger than 1 MiB"})
		return
	case err != nil:
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "the request is not an approve request: " + err.Error()})
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	res, err := Approve(s.dir, s.project, s.rep, Selection{All: req.All, FlowIndexes: req.Flows, Items: req.Items}, false)
	if err != nil {
		writeJSON(w, http.StatusUnprocessableEntity, map[string]string{"error": err.Error()})
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"results": res})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}
