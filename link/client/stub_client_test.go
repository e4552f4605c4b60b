package client_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"image"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/toolserver/toolserver/link/client"
	"github.com/toolserver/toolserver/link/linktest"
	"github.com/toolserver/toolserver/wire"
)

// The test rig of the client half: a real HTTP server that records every
// request and answers as a tool-server would, and a project on disk with
// fixed modification times so the JSON the client sends is exact.

// fixedMtime is the modification time of every file a test writes.
var fixedMtime = time.UnixMilli(1791300000000)

const fixedMtimeMs = 1791300000000.0

// stubTools is the listing of the stub: the flow tools as docs/link-protocol.md
// shows them, and tools with each kind of file input.
func stubTools() []client.ToolEntry {
	return []client.ToolEntry{
		{Name: "flow-execute", Description: "Run a flow.", FileInputs: wire.ExecuteFileInputs(), LongRunning: true},
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

// newStub is a recording tool-server listing stubTools.
func newStub(t testing.TB) *linktest.Server {
	t.Helper()
	return linktest.NewServer(t, stubTools()...)
}

// lastCall returns the body of the one POST /tools/<name>, decoded by key.
func lastCall(t testing.TB, s *linktest.Server) map[string]json.RawMessage {
	t.Helper()
	if calls := s.Requests("/tools/"); len(calls) != 1 {
		t.Fatalf("POST /tools/<name> requests: got %d, want 1", len(calls))
	}
	return s.LastCall(t)
}

// input returns the file-input object sent as target, decoded by key.
func input(t testing.TB, s *linktest.Server, target string) map[string]json.RawMessage {
	t.Helper()
	raw, ok := lastCall(t, s)[target]
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
func (f *fixture) run(s *linktest.Server, p string, extra map[string]any, opts client.CallOptions) map[string]json.RawMessage {
	f.t.Helper()
	args := map[string]any{"flow_path": f.abs(p), "project_root": f.proj}
	for k, v := range extra {
		args[k] = v
	}
	if _, err := s.Client("").Call(f.t.Context(), "flow-execute", args, opts); err != nil {
		f.t.Fatalf("Call: %v", err)
	}
	return input(f.t, s, "flow_path")
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
