package report

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync"

	"github.com/toolserver/toolserver/internal/hostguard"
)

// TokenHeader carries the token of a served report on approve requests.
const TokenHeader = "X-Report-Token"

// maxApproveBody caps the body of an approve request.
const maxApproveBody = 1 << 20

// Server serves a report with its approve buttons turned on: a page the
// binary makes from report.json, and the images report.json names, to
// any local client whose Host names loopback (it binds to loopback), and
// POST /approve to requests that carry its token, which call Approve as
// toolserver approve does. Nothing else of the directory is served: a
// report folder can come from an untrusted CI artifact, and an HTML or
// script file of its own would run in the origin that approves.
type Server struct {
	dir, project string
	// Token is the random token the page's URL carries.
	Token string
	rep   *Report
	// page and data are the page and report.json as served, made from
	// the report as read.
	page, data []byte
	// images are the report's paths of the images it names, the only
	// files of the directory served.
	images map[string]bool
	root   *os.Root
	// mu runs one approval at a time.
	mu sync.Mutex
}

// NewServer serves rep, the report Read read in dir; approvals write
// into project.
func NewServer(dir string, rep *Report, project string) (*Server, error) {
	data, err := json.Marshal(rep)
	if err != nil {
		return nil, err
	}
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		return nil, err
	}
	return &Server{dir: dir, project: project, Token: hex.EncodeToString(b), rep: rep,
		page: Page(data), data: data, images: rep.imagePaths()}, nil
}

// imagePaths are the paths of the images the report names (its
// snapshots' and its steps' artifacts) that lie in its images directory
// and are PNG files by name.
func (r *Report) imagePaths() map[string]bool {
	out := map[string]bool{}
	add := func(p string) {
		if strings.HasPrefix(p, ImagesDir+"/") && strings.HasSuffix(p, ".png") && filepath.IsLocal(filepath.FromSlash(p)) && path.Clean(p) == p {
			out[p] = true
		}
	}
	for _, fl := range r.Flows {
		for _, s := range fl.Snapshots {
			add(s.Images.Baseline)
			add(s.Images.Current)
			add(s.Images.Diff)
		}
		for _, st := range fl.Report.Steps {
			for _, a := range st.Artifacts {
				add(a.Path)
			}
		}
	}
	return out
}

// pageCSP is the served page's Content-Security-Policy: its own inline
// script by its hash (no other script runs, inline or not), its inline
// style, images and requests of its own origin only, and no framing.
// Hashed on first use, as page is made.
var pageCSP = sync.OnceValue(func() string {
	return "default-src 'none'; script-src '" + ScriptHash(page()) + "'; style-src 'unsafe-inline'; img-src 'self'; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
})

// dataCSP is the policy of every other answer: nothing in it runs, and a
// browser that opens one renders it in a sandbox.
const dataCSP = "default-src 'none'; frame-ancestors 'none'; sandbox"

// Handler serves the report and its approvals.
func (s *Server) Handler() (http.Handler, error) {
	root, err := os.OpenRoot(s.dir)
	if err != nil {
		return nil, err
	}
	s.root = root
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", s.servePage)
	mux.HandleFunc("GET /"+PageFile, s.servePage)
	mux.HandleFunc("GET /"+DataFile, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write(s.data)
	})
	mux.HandleFunc("GET /"+ImagesDir+"/", s.serveImage)
	mux.HandleFunc("POST /approve", s.approve)
	return guard(mux), nil
}

// guard refuses a request whose Host does not name loopback, the rule of
// serve's Host guard for a loopback bind (package hostguard): a page
// whose DNS name was rebound to 127.0.0.1 reads nothing. Every answer
// carries nosniff and a policy under which nothing runs; the page sets
// its own.
func guard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Content-Security-Policy", dataCSP)
		h.Set("Referrer-Policy", "no-referrer")
		if !hostguard.Loopback(r.Host) {
			writeJSON(w, http.StatusForbidden, map[string]string{"error": fmt.Sprintf("host %.100q is not allowed: report serve answers loopback names only", r.Host)})
			return
		}
		next.ServeHTTP(w, r)
	})
}

// servePage serves the page made from report.json, never the
// directory's index.html.
func (s *Server) servePage(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Content-Security-Policy", pageCSP())
	h.Set("Cache-Control", "no-store")
	w.Write(s.page)
}

// serveImage serves an image the report names, as a PNG, read through
// the directory's root (no symbolic link leads out of it).
func (s *Server) serveImage(w http.ResponseWriter, r *http.Request) {
	rel := strings.TrimPrefix(r.URL.Path, "/")
	if !s.images[rel] {
		http.NotFound(w, r)
		return
	}
	data, err := readImageFile(s.root, rel)
	if err != nil {
		http.Error(w, err.Error(), http.StatusNotFound)
		return
	}
	w.Header().Set("Content-Type", "image/png")
	w.Write(data)
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
