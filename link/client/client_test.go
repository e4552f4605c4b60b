package client_test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolserver/toolserver/link/client"
	"github.com/toolserver/toolserver/link/linktest"
	"github.com/toolserver/toolserver/wire"
)

// TestFileInputWrapping follows docs/argent-client.md, §4.1: skipWhenSet
// (a null argument counts as absent, as on the tool-server), a non-string
// target, a template with a missing or empty argument, a
// target already set to another string, each kind, and a collect value
// the client does not know.
func TestFileInputWrapping(t *testing.T) {
	f := newFixture(t)
	s := newStub(t)
	s.Tools = append(s.Tools, client.ToolEntry{Name: "inputs", FileInputs: []wire.FileInput{
		{Target: "a", Path: "${a}", Kind: "file"},
		{Target: "b", Path: "${b}", Kind: "file"},
		{Target: "c", Path: "${dir}/c.txt", Kind: "file"},
		{Target: "d", Path: "${dir}/c.txt", Kind: "file", SkipWhenSet: "x"},
		{Target: "e", Path: "${nothing}/e.txt", Kind: "file"},
		{Target: "f", Path: "${f}", Kind: "file"},
		{Target: "g", Path: "${empty}/g", Kind: "directory"},
		{Target: "h", Path: "${dir}", Kind: "directory"},
		{Target: "i", Path: "${i}", Kind: "probe", Collect: "weird"},
		{Target: "j", Path: "${j}", Kind: "file", Collect: "nonsense"},
		{Target: "derived", Path: "${dir}/c.txt", Kind: "file"},
		{Target: "n", Path: "${n}", Kind: "file"},
		{Target: "s", Path: "${dir}/c.txt", Kind: "file", SkipWhenSet: "dir"},
	}})
	a := f.put(filepath.Join(f.root, "in", "a.txt"), "alpha")
	c := f.put(filepath.Join(f.root, "in", "c.txt"), "charlie")
	j := f.put(filepath.Join(f.root, "in", "j.yaml"), "steps:\n  - run: other\n")
	dir := filepath.Dir(a)
	args := map[string]any{
		"a": a, "b": filepath.Join(dir, "missing.txt"), "c": "/somewhere/else.txt", "dir": dir,
		"x": nil, "f": 5, "empty": "", "i": dir, "j": j, "n": nil,
	}
	if _, err := s.Client("").Call(t.Context(), "inputs", args, client.CallOptions{}); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"a":       fileWant(a, "alpha"),
		"b":       wantInput{Marker: true, Path: filepath.Join(dir, "missing.txt")},
		"c":       "/somewhere/else.txt",
		"d":       fileWant(c, "charlie"), // a null skipWhenSet argument is absent
		"derived": fileWant(c, "charlie"),
		"dir":     dir,
		"empty":   "",
		"f":       5,
		"h":       wantInput{Marker: true, Path: dir},
		"i":       wantInput{Marker: true, Path: dir},
		"j":       fileWant(j, "steps:\n  - run: other\n"),
		"n":       nil,
		"x":       nil,
	}
	calls := s.Requests("/tools/inputs")
	if len(calls) != 1 {
		t.Fatalf("calls: got %d, want 1", len(calls))
	}
	assertJSON(t, "body", bytes.TrimSuffix(calls[0].Body, []byte("\n")), want)
	// No members field, no progress callback: a plain JSON call, still
	// marked linked.
	if got := calls[0].Header.Get("Accept"); got == "application/x-ndjson" {
		t.Errorf("Accept: got %q, want no stream for a call without members", got)
	}
	if got := calls[0].Header.Get("X-Argent-Linked"); got != "1" {
		t.Errorf("x-argent-linked: got %q, want 1", got)
	}
}

// TestFlowInputFields checks the flow file input of a name call: the
// derived flow_file with canonical, spelling and an empty members list,
// and the headers of a call with members.
func TestFlowInputFields(t *testing.T) {
	f := newFixture(t)
	s := newStub(t)
	body := "steps:\n  - echo: hi\n"
	p := f.put("demo.yaml", body)
	_, err := s.Client("tok").Call(t.Context(), "flow-execute", map[string]any{"name": "demo", "project_root": f.proj}, client.CallOptions{})
	if err != nil {
		t.Fatal(err)
	}
	in := lastCall(t, s)
	want := fileWant(p, body)
	want.Canonical, want.Spelling, want.Members = p, listed, &[]wire.Member{}
	assertJSON(t, "flow_file", in["flow_file"], want)
	call := s.Requests("/tools/flow-execute")[0]
	for h, want := range map[string]string{
		"Accept":          "application/x-ndjson",
		"Accept-Encoding": "identity",
		"X-Argent-Linked": "1",
		"Authorization":   "Bearer tok",
		"Content-Type":    "application/json",
	} {
		if got := call.Header.Get(h); got != want {
			t.Errorf("%s: got %q, want %q", h, got, want)
		}
	}
	if got := s.Requests("/tools")[0].Header.Get("Authorization"); got != "Bearer tok" {
		t.Errorf("GET /tools Authorization: got %q, want %q", got, "Bearer tok")
	}
}

func TestNoTokenNoAuthorization(t *testing.T) {
	f := newFixture(t)
	s := newStub(t)
	f.put("demo.yaml", "steps:\n  - echo: hi\n")
	f.run(s, "demo.yaml", nil, client.CallOptions{})
	for _, r := range s.Requests("") {
		if _, ok := r.Header["Authorization"]; ok {
			t.Errorf("%s %s: got an Authorization header, want none without a token", r.Method, r.Path)
		}
	}
}

// TestFlowFileUnreadable: a flow the client cannot read goes as the file
// alone, without canonical, spelling or members.
func TestFlowFileUnreadable(t *testing.T) {
	f := newFixture(t)
	s := newStub(t)
	if _, err := s.Client("").Call(t.Context(), "flow-execute", map[string]any{"name": "ghost", "project_root": f.proj}, client.CallOptions{}); err != nil {
		t.Fatal(err)
	}
	assertJSON(t, "flow_file", lastCall(t, s)["flow_file"], wantInput{Marker: true, Path: filepath.Join(f.flows, "ghost.yaml")})
	if got := s.Requests("/tools/flow-execute")[0].Header.Get("Accept"); got != "" {
		t.Errorf("Accept: got %q, want none (no members field)", got)
	}
}

// TestInlineUploadSplit: members ride in the body while their decoded
// bytes total at most 256 KiB, in collection order; the flow file does
// not count; each other member goes to POST /upload as a gzipped tar of
// one file named by its base name.
func TestInlineUploadSplit(t *testing.T) {
	f := newFixture(t)
	s := newStub(t)
	frag := func(n int) string {
		return "steps:\n  - echo: x\n#" + strings.Repeat("x", n-len("steps:\n  - echo: x\n#")-1) + "\n"
	}
	sizes := map[string]int{"f1": 100 << 10, "f2": 100 << 10, "f3": 100 << 10, "f4": 56 << 10, "f5": 10}
	bodies := map[string]string{}
	for name, n := range sizes {
		if n < 40 {
			bodies[name] = "steps: []\n"
		} else {
			bodies[name] = frag(n)
		}
		f.put(name+".yaml", bodies[name])
	}
	// The flow file itself is 300 KiB: it does not count.
	f.put("main.yaml", "steps:\n  - run: f1\n  - run: f2\n  - run: f3\n  - run: f4\n  - run: f5\n#"+strings.Repeat("m", 300<<10)+"\n")
	in := f.run(s, "main.yaml", nil, client.CallOptions{})
	var members []wire.Member
	if err := json.Unmarshal(in["members"], &members); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, m := range members {
		switch {
		case m.Content != nil:
			got = append(got, filepath.Base(m.Path)+" inline")
		case m.UploadID != "":
			got = append(got, filepath.Base(m.Path)+" upload")
		default:
			got = append(got, filepath.Base(m.Path)+" none")
		}
	}
	// f1+f2 = 200 KiB; f3 would pass 256 KiB: upload; f4 fills the budget
	// to exactly 256 KiB: inline; f5 passes it: upload.
	want := []string{"f1.yaml inline", "f2.yaml inline", "f3.yaml upload", "f4.yaml inline", "f5.yaml upload"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("members: got %v, want %v", got, want)
	}
	ups := s.Requests("/upload")
	if len(ups) != 2 {
		t.Fatalf("uploads: got %d, want 2", len(ups))
	}
	for i, name := range []string{"f3", "f5"} {
		up, m := ups[i], members[[]int{2, 4}[i]]
		if got := up.Header.Get("Content-Type"); got != "application/gzip" {
			t.Errorf("upload Content-Type: got %q, want application/gzip", got)
		}
		sum := sha256.Sum256(up.Body)
		if m.ContentHash != hex.EncodeToString(sum[:]) {
			t.Errorf("%s contentHash: got %s, want the sha256 of the archive %x", name, m.ContentHash, sum)
		}
		if m.UploadID == "" || m.Size == nil || *m.Size != int64(len(bodies[name])) || m.MtimeMs == nil || *m.MtimeMs != fixedMtimeMs {
			t.Errorf("%s: got uploadId %q size %v mtimeMs %v, want an id, %d, %v", name, m.UploadID, m.Size, m.MtimeMs, len(bodies[name]), fixedMtimeMs)
		}
		entries := untar(t, up.Body)
		if len(entries) != 1 || entries[name+".yaml"] != bodies[name] {
			t.Errorf("%s archive: got entries %v, want one file %s.yaml with its bytes", name, keys(entries), name)
		}
	}
}

func untar(t *testing.T, gz []byte) map[string]string {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(gz))
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(zr)
	out := map[string]string{}
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(tr)
		if h.Typeflag == tar.TypeDir {
			out[h.Name] = "<dir>"
			continue
		}
		out[h.Name] = string(b)
	}
}

func keys(m map[string]string) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// TestUpload413StopsTheCall: a proxy that refuses an upload stops the
// call before it is sent, with the body size the proxy must accept.
func TestUpload413StopsTheCall(t *testing.T) {
	f := newFixture(t)
	s := newStub(t)
	s.UploadStatus = http.StatusRequestEntityTooLarge
	big := strings.Repeat("#", 300<<10)
	frag := f.put("big.yaml", "steps: []\n"+big+"\n")
	f.put("main.yaml", "steps:\n  - run: big\n")
	_, err := s.Client("").Call(t.Context(), "flow-execute", map[string]any{"flow_path": f.abs("main.yaml"), "project_root": f.proj}, client.CallOptions{})
	var tooLarge *client.UploadTooLargeError
	if !errors.As(err, &tooLarge) {
		t.Fatalf("err: got %v, want an UploadTooLargeError", err)
	}
	up := s.Requests("/upload")
	if len(up) != 1 {
		t.Fatalf("uploads: got %d, want 1", len(up))
	}
	want := fmt.Sprintf("POST /upload of %s was refused with 413 Request Entity Too Large: the proxy in front of the tool-server must accept a body of %d bytes on POST /upload, and up to 33m for the largest file a link sends (32 MiB in its gzipped tar), for example client_max_body_size 33m; in nginx. The call was not sent.", frag, len(up[0].Body))
	if err.Error() != want {
		t.Errorf("error:\ngot  %s\nwant %s", err, want)
	}
	if n := len(s.Requests("/tools/")); n != 0 {
		t.Errorf("calls: got %d, want 0 after a refused upload", n)
	}
}

// TestStreamProgressAsItArrives: each progress line reaches the callback
// before the tool-server sends the next line, and the result is the last
// result line.
func TestStreamProgressAsItArrives(t *testing.T) {
	f := newFixture(t)
	s := newStub(t)
	seen := make(chan string, 4)
	s.Answer = func(w http.ResponseWriter, body []byte) {
		linktest.Stream(w, `{"event":"progress","data":{"index":0}}`)
		// The next line goes only once the client has shown the first.
		if got := <-seen; got != `{"index":0}` {
			t.Errorf("first progress: got %s, want {\"index\":0}", got)
		}
		fmt.Fprintln(w, `{"event":"progress","data":{"index":1}}`)
		fmt.Fprintln(w)
		fmt.Fprintln(w, `{"event":"unknown","data":1}`)
		fmt.Fprintln(w, `{"event":"result","data":{"ok":false}}`)
		fmt.Fprintln(w, `{"event":"result","data":{"ok":true,"steps":[]}}`)
	}
	f.put("demo.yaml", "steps:\n  - echo: hi\n")
	res, err := s.Client("").Call(t.Context(), "flow-execute", map[string]any{"flow_path": f.abs("demo.yaml"), "project_root": f.proj},
		client.CallOptions{Progress: func(d json.RawMessage) { seen <- string(d) }})
	if err != nil {
		t.Fatal(err)
	}
	if got := <-seen; got != `{"index":1}` {
		t.Errorf("second progress: got %s, want {\"index\":1}", got)
	}
	if string(res) != `{"ok":true,"steps":[]}` {
		t.Errorf("result: got %s, want the last result line's data", res)
	}
}

// TestStreamWaitingLine: a waiting line (the call waits for its device)
// reaches the Waiting callback with its message, and is no step.
func TestStreamWaitingLine(t *testing.T) {
	f := newFixture(t)
	s := newStub(t)
	s.Answer = func(w http.ResponseWriter, body []byte) {
		linktest.Stream(w, `{"event":"waiting","data":{"device":"chromium-cdp-800x600","ahead":1,"holder":"flow-execute","heldMs":1200,"message":"waiting for device chromium-cdp-800x600: flow-execute has held it for 1.2s; 1 call ahead of this one"}}`,
			`{"event":"result","data":{"ok":true,"steps":[]}}`)
	}
	f.put("demo.yaml", "steps:\n  - echo: hi\n")
	var waits []string
	steps := 0
	_, err := s.Client("").Call(t.Context(), "flow-execute", map[string]any{"flow_path": f.abs("demo.yaml"), "project_root": f.proj},
		client.CallOptions{Progress: func(json.RawMessage) { steps++ }, Waiting: func(m string) { waits = append(waits, m) }})
	if err != nil {
		t.Fatal(err)
	}
	if len(waits) != 1 || !strings.HasPrefix(waits[0], "waiting for device chromium-cdp-800x600: ") || steps != 0 {
		t.Errorf("got waiting %q and %d progress lines, want the one waiting message and no step", waits, steps)
	}
}

func TestStreamErrorLine(t *testing.T) {
	f := newFixture(t)
	s := newStub(t)
	s.Answer = func(w http.ResponseWriter, body []byte) {
		linktest.Stream(w, `{"event":"error","error":"step 1 in x: script: { path: a.mjs }","error_code":"FLOW_FILE_INVALID","error_kind":"validation"}`)
	}
	f.put("demo.yaml", "steps:\n  - echo: hi\n")
	_, err := s.Client("").Call(t.Context(), "flow-execute", map[string]any{"flow_path": f.abs("demo.yaml"), "project_root": f.proj}, client.CallOptions{})
	var ce *client.CallError
	if !errors.As(err, &ce) {
		t.Fatalf("err: got %v, want a CallError", err)
	}
	want := client.CallError{Tool: "flow-execute", Status: 200, Message: "step 1 in x: script: { path: a.mjs }", Code: "FLOW_FILE_INVALID", Kind: "validation"}
	if *ce != want {
		t.Errorf("error: got %+v, want %+v", *ce, want)
	}
}

// TestJSONErrorAnswer: a tool-server that does not stream answers JSON;
// its error keeps error, error_code and error_kind.
func TestJSONErrorAnswer(t *testing.T) {
	s := newStub(t)
	s.Answer = func(w http.ResponseWriter, body []byte) {
		linktest.WriteJSON(w, 422, map[string]any{"error": "bad member", "error_code": "X", "error_kind": "unprocessed"})
	}
	_, err := s.Client("").Call(t.Context(), "keyboard", map[string]any{}, client.CallOptions{})
	var ce *client.CallError
	if !errors.As(err, &ce) || ce.Status != 422 || ce.Message != "bad member" || ce.Code != "X" || ce.Kind != "unprocessed" {
		t.Fatalf("err: got %#v, want a 422 CallError bad member X unprocessed", err)
	}
	s.Answer = func(w http.ResponseWriter, body []byte) {
		w.WriteHeader(502)
		fmt.Fprint(w, "<html>bad gateway</html>")
	}
	_, err = s.Client("").Call(t.Context(), "keyboard", map[string]any{}, client.CallOptions{})
	if !errors.As(err, &ce) || ce.Message != "502 Bad Gateway" {
		t.Fatalf("err: got %v, want 502 Bad Gateway", err)
	}
}

// TestConnectionClosedBeforeResult: the call is sent once; the error says
// the tool may have run; no baseline of that call is written.
func TestConnectionClosedBeforeResult(t *testing.T) {
	f := newFixture(t)
	s := newStub(t)
	f.put("snap.yaml", "steps:\n  - snapshot: home\n")
	dir := filepath.Join(f.flows, "__baselines__", "snap")
	s.Answer = func(w http.ResponseWriter, body []byte) {
		linktest.Stream(w, `{"event":"progress","data":{"index":0}}`)
		conn, _, err := http.NewResponseController(w).Hijack()
		if err != nil {
			t.Errorf("hijack: %v", err)
			return
		}
		conn.Close()
	}
	_, err := s.Client("").Call(t.Context(), "flow-execute", map[string]any{"flow_path": f.abs("snap.yaml"), "project_root": f.proj, "updateBaselines": true}, client.CallOptions{})
	var closed *client.ClosedError
	if !errors.As(err, &closed) {
		t.Fatalf("err: got %v, want a ClosedError", err)
	}
	want := "The connection to the tool-server closed before flow-execute finished (other side closed: unexpected EOF). The tool may have run; check its effect before you run it again."
	if err.Error() != want {
		t.Errorf("error:\ngot  %s\nwant %s", err, want)
	}
	if n := len(s.Requests("/tools/")); n != 1 {
		t.Errorf("calls: got %d, want the call sent once", n)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("baseline directory: got %v, want nothing written", err)
	}
}

// TestStreamEndsWithoutResult: a stream that ends cleanly with no result
// line is a closed connection too.
func TestStreamEndsWithoutResult(t *testing.T) {
	f := newFixture(t)
	s := newStub(t)
	s.Answer = func(w http.ResponseWriter, body []byte) {
		linktest.Stream(w, `{"event":"progress","data":{"index":0}}`)
	}
	f.put("demo.yaml", "steps:\n  - echo: hi\n")
	_, err := s.Client("").Call(t.Context(), "flow-execute", map[string]any{"flow_path": f.abs("demo.yaml"), "project_root": f.proj}, client.CallOptions{})
	want := "The connection to the tool-server closed before flow-execute finished (the stream ended without a result). The tool may have run; check its effect before you run it again."
	if err == nil || err.Error() != want {
		t.Errorf("error:\ngot  %v\nwant %s", err, want)
	}
}

// TestTarUploadInput: a tar-upload input goes to POST /upload as a
// gzipped tar whose entries start with its base name.
func TestTarUploadInput(t *testing.T) {
	f := newFixture(t)
	s := newStub(t)
	app := f.mkdir(filepath.Join(f.root, "My.app"))
	f.put(filepath.Join(app, "Info.plist"), "plist")
	f.put(filepath.Join(app, "bin", "My"), "binary")
	if _, err := s.Client("").Call(t.Context(), "reinstall-app", map[string]any{"appPath": app}, client.CallOptions{}); err != nil {
		t.Fatal(err)
	}
	ups := s.Requests("/upload")
	if len(ups) != 1 {
		t.Fatalf("uploads: got %d, want 1", len(ups))
	}
	entries := untar(t, ups[0].Body)
	want := map[string]string{"My.app/": "<dir>", "My.app/Info.plist": "plist", "My.app/bin/": "<dir>", "My.app/bin/My": "binary"}
	if fmt.Sprint(entries) != fmt.Sprint(want) {
		t.Errorf("archive: got %v, want %v", entries, want)
	}
	var in struct {
		Path        string `json:"path"`
		ContentHash string `json:"contentHash"`
		UploadID    string `json:"uploadId"`
	}
	json.Unmarshal(lastCall(t, s)["appPath"], &in)
	sum := sha256.Sum256(ups[0].Body)
	if in.Path != app || in.ContentHash != hex.EncodeToString(sum[:]) || in.UploadID != "up-2" {
		t.Errorf("appPath: got %+v, want path %s, the archive's sha256 and up-2", in, app)
	}
}

// TestFlowFileOverCap: a flow file over 32 MiB goes without its bytes
// (contentOmitted) and without canonical, spelling or members.
func TestFlowFileOverCap(t *testing.T) {
	f := newFixture(t)
	s := newStub(t)
	p := f.put("huge.yaml", "")
	if err := os.Truncate(p, 33<<20); err != nil {
		t.Fatal(err)
	}
	os.Chtimes(p, fixedMtime, fixedMtime)
	if _, err := s.Client("").Call(t.Context(), "flow-execute", map[string]any{"flow_path": p, "project_root": f.proj}, client.CallOptions{}); err != nil {
		t.Fatal(err)
	}
	assertJSON(t, "flow_path", lastCall(t, s)["flow_path"], wantInput{Marker: true, Path: p, Size: ptr(int64(33 << 20)), MtimeMs: ptr(fixedMtimeMs), Omitted: "size-limit"})
}

// TestCall413FromAProxy: a proxy's 413 on the call itself names the body
// size it must accept on POST /tools/<name>; the tool-server's own JSON
// error is kept as it is.
func TestCall413FromAProxy(t *testing.T) {
	s := newStub(t)
	s.Answer = func(w http.ResponseWriter, body []byte) {
		w.WriteHeader(413)
		fmt.Fprint(w, "<html>413 Request Entity Too Large</html>")
	}
	_, err := s.Client("").Call(t.Context(), "keyboard", map[string]any{"text": "hi"}, client.CallOptions{})
	size := len(s.Requests("/tools/keyboard")[0].Body)
	want := fmt.Sprintf("POST /tools/keyboard was refused with 413 Request Entity Too Large: the proxy in front of the tool-server must accept a body of %d bytes on POST /tools/keyboard (the flow file and up to 256 KiB of members; each other member goes to POST /upload), for example with client_max_body_size in nginx. The tool did not run.", size)
	var ce *client.CallError
	if !errors.As(err, &ce) || ce.Status != 413 || ce.Message != want {
		t.Errorf("error:\ngot  %v\nwant %s", err, want)
	}
	s.Answer = func(w http.ResponseWriter, body []byte) {
		linktest.WriteJSON(w, 413, map[string]any{"error": "request body over 50331648 bytes: send large files through POST /upload"})
	}
	_, err = s.Client("").Call(t.Context(), "keyboard", map[string]any{}, client.CallOptions{})
	if !errors.As(err, &ce) || ce.Message != "request body over 50331648 bytes: send large files through POST /upload" {
		t.Errorf("error: got %v, want the tool-server's message", err)
	}
}
