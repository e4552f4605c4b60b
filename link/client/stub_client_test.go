package client_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"image"
	"image/png"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolserver/toolserver/link/client"
	"github.com/toolserver/toolserver/wire"
)

// The test rig of the client half: a real HTTP server that records every
// request and answers as a tool-server would, and a project on disk with
// fixed modification times so the JSON the client sends is exact.

// fixedMtime is the modification time of every file a test writes.
var fixedMtime = time.UnixMilli(1791300000000)

const fixedMtimeMs = 1791300000000.0

// request is one request the stub received.
type request struct {
	Method, Path string
	Header       http.Header
	Body         []byte
}

// stub is a recording tool-server.
type stub struct {
	t     testing.TB
	srv   *httptest.Server
	tools []client.ToolEntry

	mu   sync.Mutex
	reqs []request
	// uploadStatus, when set, answers POST /upload with it.
	uploadStatus int
	// forget keeps no request (a benchmark makes many).
	forget bool
	// answer answers POST /tools/<name>; the default streams one progress
	// line and the result {"ok":true}.
	answer func(w http.ResponseWriter, r *http.Request, body []byte)
}

func flowFileInputs() []wire.FileInput {
	return []wire.FileInput{
		{Target: "flow_path", Path: "${flow_path}", Kind: "file", Optional: true, UnwrapWhenSet: "name", Collect: "flow"},
		{Target: "flow_file", Path: "${project_root}/.argent/flows/${name}.yaml", Kind: "file", SkipWhenSet: "flow_path", Collect: "flow"},
	}
}

// stubTools is the listing of the stub: the flow tools as docs/link-protocol.md
// shows them, and tools with each kind of file input.
func stubTools() []client.ToolEntry {
	return []client.ToolEntry{
		{Name: "flow-execute", Description: "Run a flow.", FileInputs: flowFileInputs(), LongRunning: true},
		{Name: "flow-add-step", Description: "Record a step.", FileInputs: []wire.FileInput{{Target: "project_root", Path: "${project_root}", Kind: "probe", Collect: "step"}}},
		{Name: "flow-add-echo", Description: "Record an echo."},
		{Name: "img-compare", Description: "Compare two images.", FileInputs: []wire.FileInput{
			{Target: "baselinePath", Path: "${baselinePath}", Kind: "file", Optional: true},
			{Target: "currentPath", Path: "${currentPath}", Kind: "file", Optional: true, UnwrapWhenSet: "inline"},
			{Target: "outputDir", Path: "${outputDir}", Kind: "probe", Optional: true},
			{Target: "composite", Path: "${dir}/${file}", Kind: "file", Optional: true},
		}},
		{Name: "keyboard", Description: "Type."},
		{Name: "reinstall-app", Description: "Install an app.", FileInputs: []wire.FileInput{{Target: "appPath", Path: "${appPath}", Kind: "tar-upload"}}},
	}
}

func newStub(t testing.TB) *stub {
	t.Helper()
	s := &stub{t: t, tools: stubTools()}
	s.answer = func(w http.ResponseWriter, r *http.Request, body []byte) {
		streamLines(w, `{"event":"progress","data":{"index":0}}`, `{"event":"result","data":{"ok":true}}`)
	}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.srv.Close)
	return s
}

func (s *stub) serve(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		s.t.Errorf("stub: read body: %v", err)
	}
	s.mu.Lock()
	s.reqs = append(s.reqs, request{r.Method, r.URL.Path, r.Header.Clone(), body})
	n := len(s.reqs)
	if s.forget {
		s.reqs = s.reqs[:0]
	}
	status := s.uploadStatus
	answer := s.answer
	s.mu.Unlock()
	switch {
	case r.Method == http.MethodGet && r.URL.Path == "/tools":
		writeJSONAnswer(w, 200, map[string]any{"tools": s.tools})
	case r.Method == http.MethodPost && r.URL.Path == "/upload":
		if status != 0 {
			w.WriteHeader(status)
			fmt.Fprint(w, "<html><body>413 Request Entity Too Large</body></html>")
			return
		}
		sum := sha256.Sum256(body)
		writeJSONAnswer(w, 200, map[string]any{"uploadId": fmt.Sprintf("up-%d", n), "contentHash": hex.EncodeToString(sum[:]), "size": len(body)})
	case r.Method == http.MethodPost && strings.HasPrefix(r.URL.Path, "/tools/"):
		answer(w, r, body)
	default:
		w.WriteHeader(404)
	}
}

func writeJSONAnswer(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

// streamLines answers with an NDJSON stream of lines, each flushed.
func streamLines(w http.ResponseWriter, lines ...string) {
	w.Header().Set("Content-Type", "application/x-ndjson")
	w.WriteHeader(200)
	for _, l := range lines {
		fmt.Fprintln(w, l)
		w.(http.Flusher).Flush()
	}
}

func (s *stub) client(token string) *client.Client {
	return client.NewClient(s.srv.URL+"/", token, nil)
}

// requests returns the recorded requests to path ("" for all); a path
// ending in "/" matches a prefix.
func (s *stub) requests(path string) []request {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []request
	for _, r := range s.reqs {
		if path == "" || r.Path == path || strings.HasSuffix(path, "/") && strings.HasPrefix(r.Path, path) {
			out = append(out, r)
		}
	}
	return out
}

// lastCall returns the body of the one POST /tools/<name>, decoded by key.
func (s *stub) lastCall(t testing.TB) map[string]json.RawMessage {
	t.Helper()
	calls := s.requests("/tools/")
	if len(calls) != 1 {
		t.Fatalf("POST /tools/<name> requests: got %d, want 1", len(calls))
	}
	var body map[string]json.RawMessage
	if err := json.Unmarshal(calls[0].Body, &body); err != nil {
		t.Fatalf("call body %q: %v", calls[0].Body, err)
	}
	return body
}

// input returns the file-input object sent as target, decoded by key.
func (s *stub) input(t testing.TB, target string) map[string]json.RawMessage {
	t.Helper()
	raw, ok := s.lastCall(t)[target]
	if !ok {
		t.Fatalf("the call has no %s", target)
	}
	var in map[string]json.RawMessage
	if err := json.Unmarshal(raw, &in); err != nil {
		t.Fatalf("%s = %s: %v", target, raw, err)
	}
	return in
}

// fixture is a project on disk: root is a real temp directory, proj the
// project under it, flows its .argent/flows.
type fixture struct {
	t                 testing.TB
	root, proj, flows string
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{t: t, root: root, proj: filepath.Join(root, "proj")}
	f.flows = filepath.Join(f.proj, ".argent", "flows")
	if err := os.MkdirAll(f.flows, 0o755); err != nil {
		t.Fatal(err)
	}
	return f
}

// put writes data at p (absolute, or relative to the flows directory) with
// the fixed mtime and returns its absolute path.
func (f *fixture) put(p string, data string) string {
	f.t.Helper()
	return f.putBytes(p, []byte(data))
}

func (f *fixture) abs(p string) string {
	if filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(f.flows, p)
}

func (f *fixture) putBytes(p string, data []byte) string {
	f.t.Helper()
	p = f.abs(p)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		f.t.Fatal(err)
	}
	if err := os.WriteFile(p, data, 0o644); err != nil {
		f.t.Fatal(err)
	}
	if err := os.Chtimes(p, fixedMtime, fixedMtime); err != nil {
		f.t.Fatal(err)
	}
	return p
}

// link makes a symbolic link at p pointing to target (as written).
func (f *fixture) link(p, target string) string {
	f.t.Helper()
	p = f.abs(p)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		f.t.Fatal(err)
	}
	if err := os.Symlink(target, p); err != nil {
		f.t.Fatal(err)
	}
	return p
}

func (f *fixture) mkdir(p string) string {
	f.t.Helper()
	p = f.abs(p)
	if err := os.MkdirAll(p, 0o755); err != nil {
		f.t.Fatal(err)
	}
	return p
}

func (f *fixture) read(p string) string {
	f.t.Helper()
	b, err := os.ReadFile(f.abs(p))
	if err != nil {
		f.t.Fatal(err)
	}
	return string(b)
}

// run calls flow-execute on the stub for the flow at p (flow_path) with
// extra arguments, and returns the flow input the client sent.
func (f *fixture) run(s *stub, p string, extra map[string]any, opts client.CallOptions) map[string]json.RawMessage {
	f.t.Helper()
	args := map[string]any{"flow_path": f.abs(p), "project_root": f.proj}
	for k, v := range extra {
		args[k] = v
	}
	if _, err := s.client("").Call(f.t.Context(), "flow-execute", args, opts); err != nil {
		f.t.Fatalf("Call: %v", err)
	}
	return s.input(f.t, "flow_path")
}

// Expected values.

// wantInput is a file-input object in the field order of docs/link-protocol.md
// ("The flow file input").
type wantInput struct {
	Marker    bool           `json:"__argentFileInput"`
	Path      string         `json:"path"`
	Size      *int64         `json:"size,omitempty"`
	MtimeMs   *float64       `json:"mtimeMs,omitempty"`
	Content   *string        `json:"content,omitempty"`
	Omitted   string         `json:"contentOmitted,omitempty"`
	Canonical string         `json:"canonical,omitempty"`
	Spelling  *wire.Spelling `json:"spelling,omitempty"`
	Members   *[]wire.Member `json:"members,omitempty"`
}

// fileWant is the object of a file sent with its bytes.
func fileWant(p, data string) wantInput {
	return wantInput{Marker: true, Path: p, Size: ptr(int64(len(data))), MtimeMs: ptr(fixedMtimeMs),
		Content: ptr(base64.StdEncoding.EncodeToString([]byte(data)))}
}

var listed = &wire.Spelling{State: wire.SpellListed}

func ptr[T any](v T) *T { return &v }

// withBytes is m sent inline with data.
func withBytes(m wire.Member, data string) wire.Member {
	m.Content = ptr(base64.StdEncoding.EncodeToString([]byte(data)))
	m.Size = ptr(int64(len(data)))
	m.MtimeMs = ptr(fixedMtimeMs)
	return m
}

// flowMember is the flow member of target named in dir, for a file at
// canonical with data ("" data and a state for one without bytes).
func flowMember(dir, target, canonical string, sp *wire.Spelling) wire.Member {
	return wire.Member{Role: wire.RoleFlow, Key: wire.Key(dir, target), Path: dir + "/" + target, Canonical: canonical, Spelling: sp}
}

func stateOf(m wire.Member, state, why string) wire.Member {
	m.State, m.Error = state, why
	return m
}

// assertJSON compares JSON as sent with the encoding of want, byte for
// byte (the client does not escape HTML, nor does this).
func assertJSON(t *testing.T, what string, got json.RawMessage, want any) {
	t.Helper()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(want); err != nil {
		t.Fatal(err)
	}
	w := strings.TrimSuffix(buf.String(), "\n")
	if string(got) != w {
		t.Errorf("%s:\ngot  %s\nwant %s", what, pretty(got), pretty([]byte(w)))
	}
}

func pretty(b []byte) string {
	var out bytes.Buffer
	if json.Indent(&out, b, "", "  ") != nil {
		return string(b)
	}
	return out.String()
}

func b64(b []byte) string { return base64.StdEncoding.EncodeToString(b) }

// pngBytes is a valid w×h PNG.
func pngBytes(t *testing.T, w, h int) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := png.Encode(&buf, image.NewRGBA(image.Rect(0, 0, w, h))); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}
