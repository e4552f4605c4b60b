package main

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"image"
	"image/png"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	linkclient "github.com/toolserver/toolserver/link/client"
	"github.com/toolserver/toolserver/link/linktest"
	"github.com/toolserver/toolserver/wire"
)

// newLinkStub is a recording tool-server for the CLI's linked commands: it
// lists flow-execute with its file inputs and answers each call with the
// stream answer writes.
func newLinkStub(t *testing.T, answer func(w http.ResponseWriter, body []byte)) *linktest.Server {
	t.Helper()
	s := linktest.NewServer(t,
		linkclient.ToolEntry{Name: "flow-execute", Description: "Run a saved flow. More.", LongRunning: true, FileInputs: wire.ExecuteFileInputs()},
		linkclient.ToolEntry{Name: "echo-tool", Description: "Echo. More."})
	s.Answer = answer
	s.Artifacts = map[string][]byte{"a1": []byte("diff image")}
	return s
}

// stream answers with an NDJSON stream of lines, each encoded as JSON.
func stream(w http.ResponseWriter, lines ...any) {
	enc := make([]string, len(lines))
	for i, l := range lines {
		b, _ := json.Marshal(l)
		enc[i] = string(b)
	}
	linktest.Stream(w, enc...)
}

func onePNG(t *testing.T) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := png.Encode(&buf, image.NewRGBA(image.Rect(0, 0, 1, 1))); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// linkProject is a project with flows/home.yaml (one snapshot).
func linkProject(t *testing.T) (root, baselines string) {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	flows := filepath.Join(root, ".argent", "flows")
	os.MkdirAll(flows, 0o755)
	os.WriteFile(filepath.Join(flows, "home.yaml"), []byte("steps:\n  - snapshot: home\n"), 0o644)
	return root, filepath.Join(flows, "__baselines__", "home")
}

func linkReport(ok bool, writes ...any) map[string]any {
	rep := map[string]any{"flow": "home", "device": "chromium-cdp-1x1", "ok": ok, "passed": 1, "failed": 0, "skipped": 0, "errored": 0,
		"steps": []any{map[string]any{"index": 0, "kind": "snapshot", "flow": "home", "status": "pass", "reason": "baseline captured", "durationMs": 1}}}
	if len(writes) > 0 {
		rep["baselineWrites"] = writes
	}
	return rep
}

func clientFile(p string, data []byte) map[string]any {
	return map[string]any{"__argentClientFile": true, "path": p, "content": base64.StdEncoding.EncodeToString(data), "encoding": "base64"}
}

// TestFlowRunLinked: a linked run sends flow-execute with the flow by
// name, renders the progress, prints the summary, and writes the
// baselines of the result into the project.
func TestFlowRunLinked(t *testing.T) {
	t.Parallel()
	root, baselines := linkProject(t)
	shot := onePNG(t)
	dst := filepath.Join(baselines, "home__chromium-1x1.png")
	s := newLinkStub(t, func(w http.ResponseWriter, body []byte) {
		rep := linkReport(true, clientFile(dst, shot))
		stream(w, map[string]any{"event": "progress", "data": rep["steps"].([]any)[0]}, map[string]any{"event": "result", "data": rep})
	})
	code, out, errOut := runCLIEnv(t, env{linkclient.FilesLogEnv: "1"}, "flow", "run", "home", "--project", root, "--link", s.URL, "--update-baselines", "--device", "chromium-cdp-1x1")
	if code != 0 {
		t.Fatalf("exit: got %d, want 0\n%s\n%s", code, out, errOut)
	}
	for _, want := range []string{`Flow "home" on chromium-cdp-1x1`, "✓  1 snapshot", "PASS home — 1 passed"} {
		if !strings.Contains(out, want) {
			t.Errorf("stdout: got\n%s\nwant it to contain %q", out, want)
		}
	}
	if want := "[flow-files] baseline " + dst + ": written"; !strings.Contains(errOut, want) {
		t.Errorf("stderr: got\n%s\nwant %q", errOut, want)
	}
	got, err := os.ReadFile(dst)
	if err != nil || !bytes.Equal(got, shot) {
		t.Errorf("baseline: got %v, %v; want the PNG of the result", len(got), err)
	}
	body := s.LastCall(t)
	for k, want := range map[string]string{"name": `"home"`, "project_root": `"` + root + `"`, "device": `"chromium-cdp-1x1"`, "updateBaselines": "true", "prerequisiteAcknowledged": "true"} {
		if string(body[k]) != want {
			t.Errorf("argument %s: got %s, want %s", k, body[k], want)
		}
	}
	var in struct {
		Canonical string            `json:"canonical"`
		Members   []json.RawMessage `json:"members"`
	}
	if err := json.Unmarshal(body["flow_file"], &in); err != nil || in.Canonical != filepath.Join(root, ".argent", "flows", "home.yaml") || in.Members == nil {
		t.Errorf("flow_file: got %s (%v), want the flow with canonical and members", body["flow_file"], err)
	}
}

// TestFlowRunLinkedRefusedBaseline: a baseline the client does not write
// is printed with its reason and the run exits 1.
func TestFlowRunLinkedRefusedBaseline(t *testing.T) {
	t.Parallel()
	root, _ := linkProject(t)
	evil := filepath.Join(root, "evil.png")
	s := newLinkStub(t, func(w http.ResponseWriter, body []byte) {
		stream(w, map[string]any{"event": "result", "data": linkReport(true, clientFile(evil, onePNG(t)))})
	})
	code, out, errOut := runCLI(t, "flow", "run", filepath.Join(root, ".argent", "flows", "home.yaml"), "--project", root, "--link", s.URL, "--update-baselines")
	if code != 1 {
		t.Fatalf("exit: got %d, want 1\n%s\n%s", code, out, errOut)
	}
	want := "✗ baseline not written: " + evil + ": " + evil + " is not in the baseline directory of a run of this call that updates baselines"
	if !strings.Contains(errOut, want) {
		t.Errorf("stderr: got\n%s\nwant %q", errOut, want)
	}
	if _, err := os.Stat(evil); !os.IsNotExist(err) {
		t.Errorf("evil.png: got %v, want nothing written", err)
	}
	if body := s.LastCall(t); string(body["name"]) != "" || !strings.Contains(string(body["flow_path"]), `"__argentFileInput":true`) {
		t.Errorf("call: got %s, want the flow by flow_path", body["flow_path"])
	}
}

// TestFlowRunLinkedErrors: a rejected flow exits 1 as not run; a connection
// closed before the result exits 2 with the text of docs/link-protocol.md ("The
// call").
func TestFlowRunLinkedErrors(t *testing.T) {
	t.Parallel()
	root, _ := linkProject(t)
	s := newLinkStub(t, func(w http.ResponseWriter, body []byte) {
		stream(w, map[string]any{"event": "error", "error": "step 1 in x: script: { path: a.mjs }", "error_code": "FLOW_FILE_INVALID", "error_kind": "validation"})
	})
	code, out, errOut := runCLI(t, "flow", "run", "home", "--project", root, "--link", s.URL)
	if code != 1 || !strings.Contains(out, "not run (invalid flow)") || !strings.Contains(errOut, "step 1 in x: script: { path: a.mjs }") {
		t.Errorf("rejected: got exit %d\n%s\n%s\nwant 1, not run, and the reason", code, out, errOut)
	}
	s.Answer = func(w http.ResponseWriter, body []byte) {
		stream(w, map[string]any{"event": "progress", "data": map[string]any{"index": 0, "kind": "echo", "status": "pass", "message": "hi"}})
	}
	code, _, errOut = runCLI(t, "flow", "run", "home", "--project", root, "--link", s.URL)
	want := "The connection to the tool-server closed before flow-execute finished (the stream ended without a result). The tool may have run; check its effect before you run it again."
	if code != 2 || !strings.Contains(errOut, want) {
		t.Errorf("closed: got exit %d\n%s\nwant 2 and %q", code, errOut, want)
	}
}

// TestFlowRunLinkedJSON: with --json the [flow-files] lines are warning
// objects on stderr and stdout is the report.
func TestFlowRunLinkedJSON(t *testing.T) {
	t.Parallel()
	root, _ := linkProject(t)
	s := newLinkStub(t, func(w http.ResponseWriter, body []byte) {
		stream(w, map[string]any{"event": "result", "data": linkReport(true)})
	})
	os.WriteFile(filepath.Join(root, ".argent", "flows", "home.yaml"), []byte("steps:\n  - run: frag\n"), 0o644)
	os.WriteFile(filepath.Join(root, ".argent", "flows", "frag.yaml"), []byte("steps: []\n"), 0o644)
	code, out, errOut := runCLIEnv(t, env{linkclient.FilesLogEnv: "1"}, "flow", "run", "home", "--project", root, "--link", s.URL, "--json")
	if code != 0 {
		t.Fatalf("exit: got %d, want 0\n%s", code, errOut)
	}
	line, _ := json.Marshal(map[string]any{"event": "warning", "message": "[flow-files] flow " + filepath.Join(root, ".argent", "flows", "frag.yaml") + ": inline 10"})
	if !strings.Contains(errOut, string(line)) {
		t.Errorf("stderr: got\n%s\nwant %s", errOut, line)
	}
	var rep struct{ Flow string }
	if err := json.Unmarshal([]byte(out), &rep); err != nil || rep.Flow != "home" {
		t.Errorf("stdout: got %s (%v), want the report", out, err)
	}
}

// TestFlowRunLinkedOutput: --artifacts downloads the images of a failed
// snapshot to DIR/<flow>/<key>-<role>.png; --output DIR, its former name,
// still does with a deprecation notice, while -o yaml selects a format.
func TestFlowRunLinkedOutput(t *testing.T) {
	t.Parallel()
	root, _ := linkProject(t)
	s := newLinkStub(t, func(w http.ResponseWriter, body []byte) {
		rep := linkReport(false)
		rep["failed"], rep["passed"] = 1, 0
		st := rep["steps"].([]any)[0].(map[string]any)
		st["status"], st["snapshotKey"] = "fail", "home__chromium-1x1.png"
		st["artifacts"] = map[string]any{"diff": map[string]any{"__argentArtifact": true, "id": "a1", "filename": "home-home__chromium-1x1-diff.png"}}
		stream(w, map[string]any{"event": "result", "data": rep})
	})
	const notice = "--output DIR is deprecated; use --artifacts DIR"
	for _, c := range []struct {
		name       string
		args       []string
		deprecated bool
	}{
		{"--artifacts", []string{"--artifacts"}, false},
		{"--output DIR", []string{"--output"}, true},
		{"-o DIR", []string{"-o"}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			outDir := filepath.Join(t.TempDir(), "out")
			code, out, errOut := runCLI(t, "flow", "run", "home", "--project", root, "--link", s.URL, c.args[0], outDir)
			if code != 1 {
				t.Fatalf("exit: got %d, want 1\n%s\n%s", code, out, errOut)
			}
			got, err := os.ReadFile(filepath.Join(outDir, "home", "home__chromium-1x1-diff.png"))
			if err != nil || string(got) != "diff image" {
				t.Errorf("diff artifact: got %q, %v; want the downloaded image", got, err)
			}
			if strings.Contains(errOut, notice) != c.deprecated {
				t.Errorf("stderr: got\n%s\nwant the deprecation notice: %v", errOut, c.deprecated)
			}
		})
	}
	// -o yaml is a format, not a directory: the report as YAML on stdout.
	code, out, errOut := runCLI(t, "flow", "run", "home", "--project", root, "--link", s.URL, "-o", "yaml")
	if code != 1 || !strings.Contains(out, "flow: home\n") || strings.Contains(errOut, notice) {
		t.Errorf("-o yaml: got exit %d\n%s\n%s\nwant 1 and the report as YAML", code, out, errOut)
	}
	if _, err := os.Stat("yaml"); !os.IsNotExist(err) {
		t.Errorf("-o yaml: got a directory yaml (%v), want none", err)
	}
}

func TestCallAndToolsLinked(t *testing.T) {
	t.Parallel()
	s := newLinkStub(t, func(w http.ResponseWriter, body []byte) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"data":{"echo":%s}}`, body)
	})
	code, out, errOut := runCLI(t, "call", "echo-tool", "--args", `{"x":1}`, "--link", s.URL)
	if code != 0 {
		t.Fatalf("call: exit %d\n%s", code, errOut)
	}
	var res struct {
		Data struct{ Echo map[string]any }
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil || res.Data.Echo["x"] != 1.0 {
		t.Errorf("call: got %s (%v), want {data: {echo: {x: 1}}}", out, err)
	}
	code, out, _ = runCLI(t, "tools", "--link", s.URL)
	if code != 0 || !strings.Contains(out, "flow-execute") || !strings.Contains(out, "Run a saved flow") {
		t.Errorf("tools: got exit %d\n%s\nwant the remote listing", code, out)
	}
	code, out, _ = runCLIEnv(t, env{envToolsURL: s.URL}, "tools", "describe", "flow-execute")
	if code != 0 || !strings.Contains(out, `"collect": "flow"`) {
		t.Errorf("tools describe via ARGENT_TOOLS_URL: got exit %d\n%s\nwant the entry with its file inputs", code, out)
	}
}
