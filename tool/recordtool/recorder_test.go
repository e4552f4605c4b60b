package recordtool

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/toolserver/toolserver/device/cdp"
	"github.com/toolserver/toolserver/device/cdp/cdptest"
	"github.com/toolserver/toolserver/fault"
	"github.com/toolserver/toolserver/flow"
	"github.com/toolserver/toolserver/store"
	"github.com/toolserver/toolserver/tool"
	"github.com/toolserver/toolserver/tool/devicetool"
	"github.com/toolserver/toolserver/tool/flowtool"
	"github.com/toolserver/toolserver/tool/tooltest"
	"github.com/toolserver/toolserver/wire"
)

var (
	// ran counts the runs of the test tools by the path they were given
	// (each test its own), to prove a refused step never ran.
	ran sync.Map
)

func countRun(call *tool.Call, arg string) {
	var p string
	_ = json.Unmarshal(call.Args[arg], &p)
	n, _ := ran.LoadOrStore(p, new(atomic.Int32))
	n.(*atomic.Int32).Add(1)
}

func runCount(path string) int32 {
	n, ok := ran.Load(path)
	if !ok {
		return 0
	}
	return n.(*atomic.Int32).Load()
}

func TestMain(m *testing.M) { cdptest.Main(m) }

// newRegistry returns the device, flow and recorder tools over the shared
// pool, with recordings and artifacts of their own, plus two test tools
// that declare a directory and a file input. flow-execute is there for the
// steps that record a nested flow.
func newRegistry(t *testing.T) *tool.Registry {
	t.Helper()
	arts, err := store.NewArtifacts(t.TempDir(), 100, 1<<30)
	if err != nil {
		t.Fatal(err)
	}
	r := tool.NewRegistry()
	(&devicetool.Tools{Pool: cdptest.Pool(t), Artifacts: arts}).Register(r)
	(&flowtool.Tools{Pool: cdptest.Pool(t), Artifacts: arts}).Register(r)
	(&Tools{Pool: cdptest.Pool(t)}).Register(r)
	r.Add(&tool.Tool{
		Name:        "test-dir-input",
		InputSchema: tool.Object(map[string]*tool.Schema{"dir": tool.String("a directory")}, "dir"),
		FileInputs:  []wire.FileInput{{Target: "dir", Path: "${dir}", Kind: "directory"}},
		Run: func(_ context.Context, call *tool.Call) (any, error) {
			countRun(call, "dir")
			return map[string]any{"ok": true}, nil
		},
	})
	r.Add(&tool.Tool{
		Name:        "test-file-input",
		InputSchema: tool.Object(map[string]*tool.Schema{"image": tool.String("a PNG")}, "image"),
		FileInputs:  []wire.FileInput{{Target: "image", Path: "${image}", Kind: "file"}},
		Run: func(_ context.Context, call *tool.Call) (any, error) {
			countRun(call, "image")
			return map[string]any{"ok": true}, nil
		},
	})
	return r
}

// callLinked is tooltest.Call as a linked client.
func callLinked(t *testing.T, reg *tool.Registry, name string, args map[string]any) map[string]any {
	t.Helper()
	res, err := tooltest.Invoke(t, reg, name, args, true)
	if err != nil {
		t.Fatalf("%s (linked): %v", name, err)
	}
	return res
}

// recName names a recording for the recorder tools' arguments.
type recName struct{ name, root string }

func (r recName) args(extra map[string]any) map[string]any {
	m := map[string]any{"name": r.name, "project_root": r.root}
	for k, v := range extra {
		m[k] = v
	}
	return m
}

// step is flow-add-step's arguments, with args as JSON text the way the
// Argent clients send it.
func (r recName) step(t *testing.T, command string, args map[string]any) map[string]any {
	t.Helper()
	b, err := json.Marshal(args)
	if err != nil {
		t.Fatal(err)
	}
	return r.args(map[string]any{"command": command, "args": string(b)})
}

func (r recName) file() string { return filepath.Join(r.root, ".argent", "flows", r.name+".yaml") }

// parseFile parses the recording's file on disk.
func parseFile(t *testing.T, path string) *flow.Flow {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	fl, err := flow.Parse(path, data)
	if err != nil {
		t.Fatalf("%s does not parse: %v\n%s", path, err, data)
	}
	return fl
}

// openPage opens app.html on a device and stops the device after the test.
func openPage(t *testing.T, reg *tool.Registry, id string) {
	t.Helper()
	t.Cleanup(func() { cdptest.Stop(t, id) })
	tooltest.Call(t, reg, "open-url", map[string]any{"device": id, "url": cdptest.Pages(t) + "/app.html", "fresh": true})
}

func TestRecordHostRoundTrip(t *testing.T) {
	t.Parallel()
	reg := newRegistry(t)
	const dev = "chromium-cdp-1000x700"
	t.Cleanup(func() { cdptest.Stop(t, dev) })
	r := recName{"checkout", t.TempDir()}

	res := tooltest.Call(t, reg, "flow-start-recording", r.args(nil))
	if got, want := res["message"], `Started recording "checkout" flow`; got != want {
		t.Fatalf("start message: got %v, want %v", got, want)
	}
	if got, want := res["savedTo"], r.file(); got != want {
		t.Fatalf("savedTo: got %v, want %v", got, want)
	}
	if got, want := res["flowFile"], "steps: []\n"; got != want {
		t.Fatalf("flowFile: got %q, want %q", got, want)
	}

	url := cdptest.Pages(t) + "/app.html"
	steps := []struct {
		command  string
		args     map[string]any
		recorded string
	}{
		{"open-url", map[string]any{"device": dev, "url": url, "fresh": true}, "1. launch: " + url},
		// The button #top "Go now" is at 100,50 200x40: its centre.
		{"gesture-tap", map[string]any{"device": dev, "x": 200.0 / 1000, "y": 70.0 / 700}, `2. tap: {"id":"top"}`},
		{"await-ui-element", map[string]any{"device": dev, "condition": "text", "selector": map[string]any{"id": "out"}, "expectedText": "clicked 1"},
			`3. tool: await-ui-element {"condition":"text","expectedText":"clicked 1","selector":{"id":"out"}}`},
		// The input #name is at 100,200, 300 wide.
		{"gesture-tap", map[string]any{"udid": dev, "x": 250.0 / 1000, "y": 208.0 / 700}, `4. tap: {"id":"name"}`},
		{"keyboard", map[string]any{"device": dev, "text": "Ann"}, `5. tool: keyboard {"text":"Ann"}`},
		{"await-ui-element", map[string]any{"device": dev, "condition": "text", "selector": map[string]any{"id": "echo"}, "expectedText": "hello Ann"},
			`6. tool: await-ui-element {"condition":"text","expectedText":"hello Ann","selector":{"id":"echo"}}`},
	}
	for _, s := range steps {
		res := tooltest.Call(t, reg, "flow-add-step", r.step(t, s.command, s.args))
		if got := res["recorded"]; got != s.recorded {
			t.Fatalf("%s recorded: got %v, want %v", s.command, got, s.recorded)
		}
		if got, want := res["message"], `Step added to "checkout" flow`; got != want {
			t.Fatalf("%s message: got %v, want %v", s.command, got, want)
		}
		if res["toolResult"] == nil || res["savedTo"] != r.file() {
			t.Fatalf("%s: got %v, want toolResult and savedTo %s", s.command, res, r.file())
		}
	}
	res = tooltest.Call(t, reg, "flow-add-echo", r.args(map[string]any{"message": "typed the name"}))
	if got, want := res["message"], `Echo added to "checkout" flow`; got != want {
		t.Fatalf("echo message: got %v, want %v", got, want)
	}
	if got, want := res["stepCount"], 7.0; got != want {
		t.Fatalf("stepCount: got %v, want %v", got, want)
	}

	res = tooltest.Call(t, reg, "flow-finish-recording", r.args(nil))
	if got, want := res["message"], `Finished recording "checkout" flow (7 steps)`; got != want {
		t.Fatalf("finish message: got %v, want %v", got, want)
	}
	if got, want := fmt.Sprint(res["summary"]), `[1. launch: `+url+` 2. tap: {"id":"top"}`; !strings.HasPrefix(got, want) {
		t.Fatalf("summary: got %v, want it to start with %v", got, want)
	}
	if res["path"] != r.file() || res["savedTo"] != r.file() || res["steps"] != 7.0 {
		t.Fatalf("finish: got %v, want path and savedTo %s and 7 steps", res, r.file())
	}

	fl := parseFile(t, r.file())
	var kinds []string
	for _, s := range fl.Steps {
		kinds = append(kinds, string(s.Kind()))
	}
	if got, want := strings.Join(kinds, ","), "launch,tap,tool,tap,tool,tool,echo"; got != want {
		t.Fatalf("kinds: got %v, want %v", got, want)
	}
	if got := fl.Steps[1].Directive.(*flow.Tap).On; got == nil || got.ID != "top" {
		t.Fatalf("step 2 selector: got %v, want id top", got)
	}

	_, err := tooltest.Invoke(t, reg, "flow-add-echo", r.args(map[string]any{"message": "late"}), false)
	tooltest.WantCode(t, err, "FLOW_NO_ACTIVE_RECORDING")

	rep := tooltest.Call(t, reg, "flow-execute", map[string]any{"name": "checkout", "project_root": r.root, "device": dev})
	if rep["ok"] != true || rep["passed"] != 6.0 {
		t.Fatalf("replay: got %v, want ok with 6 passed", rep)
	}
}

func TestRecordTapOnEmptySpace(t *testing.T) {
	t.Parallel()
	reg := newRegistry(t)
	const dev = "chromium-cdp-1001x700"
	openPage(t, reg, dev)
	r := recName{"empty", t.TempDir()}
	tooltest.Call(t, reg, "flow-start-recording", r.args(nil))

	res := tooltest.Call(t, reg, "flow-add-step", r.step(t, "gesture-tap", map[string]any{"device": dev, "x": 0.9, "y": 0.9}))
	if got, want := res["recorded"], "1. tap: (0.9, 0.9)"; got != want {
		t.Fatalf("recorded: got %v, want %v", got, want)
	}
	msg, _ := res["message"].(string)
	if !strings.HasPrefix(msg, `Step added to "empty" flow — recorded the tap at (0.9, 0.9) as coordinates: no element`) {
		t.Fatalf("message: got %q, want the coordinates warning", msg)
	}
	tap := parseFile(t, r.file()).Steps[0].Directive.(*flow.Tap)
	if !tap.Point || tap.X != 0.9 || tap.Y != 0.9 {
		t.Fatalf("tap: got %+v, want the point (0.9, 0.9)", tap)
	}

	// A held tap on the button records a long-press of it.
	res = tooltest.Call(t, reg, "flow-add-step", r.step(t, "gesture-tap", map[string]any{"device": dev, "x": 200.0 / 1001, "y": 70.0 / 700, "durationMs": 900}))
	if got, want := res["recorded"], `2. long-press: {"id":"top"} (900ms)`; got != want {
		t.Fatalf("recorded: got %v, want %v", got, want)
	}
}

func TestRecordFailedCallRecordsNothing(t *testing.T) {
	t.Parallel()
	reg := newRegistry(t)
	const dev = "chromium-cdp-1002x700"
	openPage(t, reg, dev)
	r := recName{"failing", t.TempDir()}
	tooltest.Call(t, reg, "flow-start-recording", r.args(nil))

	_, err := tooltest.Invoke(t, reg, "flow-add-step", r.step(t, "keyboard", map[string]any{"device": dev}), false)
	var te *fault.Error
	if !errors.As(err, &te) || te.Field != "text" {
		t.Fatalf("keyboard without text: got %v, want the keyboard tool's own error", err)
	}
	_, err = tooltest.Invoke(t, reg, "flow-add-step", r.step(t, "no-such-tool", nil), false)
	tooltest.WantCode(t, err, "TOOL_NOT_FOUND")
	_, err = tooltest.Invoke(t, reg, "flow-add-step", r.step(t, "await-ui-element", map[string]any{"device": dev, "condition": "visible", "selector": map[string]any{"id": "missing"}, "timeoutMs": 1}), false)
	tooltest.WantCode(t, err, codeStepFailed)
	_, err = tooltest.Invoke(t, reg, "flow-add-step", r.args(map[string]any{"command": "keyboard", "args": "{not json"}), false)
	if !errors.As(err, &te) || te.Field != "args" {
		t.Fatalf("args that are not JSON: got %v, want an args error", err)
	}

	if n := len(parseFile(t, r.file()).Steps); n != 0 {
		t.Fatalf("steps after failed calls: got %d, want 0", n)
	}
	res := tooltest.Call(t, reg, "flow-add-echo", r.args(map[string]any{"message": "still here"}))
	if got, want := res["stepCount"], 1.0; got != want {
		t.Fatalf("stepCount: got %v, want %v", got, want)
	}
}

// wantDirective checks a client-file directive for path and returns its
// content.
func wantDirective(t *testing.T, v any, path string) string {
	t.Helper()
	d, ok := v.(map[string]any)
	if !ok || d["__argentClientFile"] != true || d["path"] != path {
		t.Fatalf("savedTo: got %v, want a client-file directive for %s", v, path)
	}
	content, _ := d["content"].(string)
	if _, err := flow.Parse(path, []byte(content)); err != nil {
		t.Fatalf("directive content does not parse: %v\n%s", err, content)
	}
	return content
}

func TestRecordClientMode(t *testing.T) {
	t.Parallel()
	reg := newRegistry(t)
	t.Run("project not on this machine", func(t *testing.T) {
		t.Parallel()
		r := recName{"remote", filepath.Join(t.TempDir(), "laptop", "proj")}
		path := r.root + "/.argent/flows/remote.yaml"
		res := tooltest.Call(t, reg, "flow-start-recording", r.args(nil))
		if got := wantDirective(t, res["savedTo"], path); got != "steps: []\n" {
			t.Fatalf("start content: got %q, want an empty flow", got)
		}
		res = tooltest.Call(t, reg, "flow-add-echo", r.args(map[string]any{"message": "hi"}))
		if got := wantDirective(t, res["savedTo"], path); !strings.Contains(got, "echo: hi") {
			t.Fatalf("echo content: got %q, want the echo", got)
		}

		// No header: an older client, which sends no files with a step.
		shot := filepath.Join(r.root, "shot.png")
		_, err := tooltest.Invoke(t, reg, "flow-add-step", r.step(t, "test-file-input", map[string]any{"image": shot}), false)
		te := tooltest.WantCode(t, err, "FLOW_FILE_INVALID")
		if !strings.Contains(te.Message, "Update the argent CLI or MCP adapter") {
			t.Fatalf("older client: got %q, want the update advice", te.Message)
		}
		_, err = tooltest.Invoke(t, reg, "flow-add-step", r.step(t, "flow-execute", map[string]any{"name": "other", "project_root": r.root}), false)
		tooltest.WantCode(t, err, "FLOW_FILE_INVALID")
		if got := runCount(shot); got != 0 {
			t.Fatalf("test-file-input ran %d times, want 0", got)
		}

		res = tooltest.Call(t, reg, "flow-finish-recording", r.args(nil))
		if got := wantDirective(t, res["savedTo"], path); !strings.Contains(got, "echo: hi") {
			t.Fatalf("finish content: got %q, want the echo", got)
		}
		if res["path"] != path || res["message"] != `Finished recording "remote" flow (1 steps)` {
			t.Fatalf("finish: got %v, want path %s and 1 step", res, path)
		}
		if _, err := os.Stat(filepath.Dir(r.root)); !errors.Is(err, fs.ErrNotExist) {
			t.Fatalf("stat %s: got %v, want nothing written on this machine", filepath.Dir(r.root), err)
		}
	})
	t.Run("linked", func(t *testing.T) {
		t.Parallel()
		r := recName{"linked", t.TempDir()}
		path := r.root + "/.argent/flows/linked.yaml"
		wantDirective(t, callLinked(t, reg, "flow-start-recording", r.args(nil))["savedTo"], path)
		wantDirective(t, callLinked(t, reg, "flow-add-echo", r.args(map[string]any{"message": "hi"}))["savedTo"], path)
		wantDirective(t, callLinked(t, reg, "flow-finish-recording", r.args(nil))["savedTo"], path)
		if _, err := os.Stat(filepath.Join(r.root, ".argent")); !errors.Is(err, fs.ErrNotExist) {
			t.Fatalf("stat .argent: got %v, want nothing written although the path exists here", err)
		}
	})
}

// TestRemoteUsesNoHostFiles: on a remote registry (a wildcard bind) a
// recording whose project exists on this machine still lives on the
// client (nothing is written here), and flow-execute runs no flow file of
// this machine named by project_root and name.
func TestRemoteUsesNoHostFiles(t *testing.T) {
	t.Parallel()
	reg := newRegistry(t)
	reg.Remote = true
	r := recName{"remote", t.TempDir()}
	path := r.root + "/.argent/flows/remote.yaml"
	wantDirective(t, tooltest.Call(t, reg, "flow-start-recording", r.args(nil))["savedTo"], path)
	wantDirective(t, tooltest.Call(t, reg, "flow-add-echo", r.args(map[string]any{"message": "hi"}))["savedTo"], path)
	wantDirective(t, tooltest.Call(t, reg, "flow-finish-recording", r.args(nil))["savedTo"], path)
	if _, err := os.Stat(filepath.Join(r.root, ".argent")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("stat .argent: got %v, want nothing written on this machine", err)
	}

	flows := filepath.Join(r.root, ".argent", "flows")
	os.MkdirAll(flows, 0o755)
	os.WriteFile(filepath.Join(flows, "here.yaml"), []byte("steps:\n  - echo: server-file-5d1e\n"), 0o644)
	_, err := tooltest.Invoke(t, reg, "flow-execute", map[string]any{"name": "here", "project_root": r.root}, false)
	te := tooltest.WantCode(t, err, "FLOW_FILE_INVALID")
	if te.Field != "name" || !strings.Contains(te.Message, "answers other machines") || strings.Contains(te.Message, "server-file") {
		t.Fatalf("flow-execute by name: got %v, want a refusal on name that runs nothing", te)
	}
}

func TestRecordLinkedRefusals(t *testing.T) {
	t.Parallel()
	reg := newRegistry(t)
	r := recName{"linkrec", t.TempDir()}
	flows := filepath.Join(r.root, ".argent", "flows")
	if err := os.MkdirAll(flows, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, body := range map[string]string{
		"greet.yaml": "steps:\n  - echo: hello\n",
		// keyboard without text or key fails, so this flow never passes.
		"broken.yaml": "steps:\n  - tool: keyboard\n",
		"seed.mjs":    "console.log('seeded')\n",
	} {
		if err := os.WriteFile(filepath.Join(flows, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	callLinked(t, reg, "flow-start-recording", r.args(nil))

	_, err := tooltest.Invoke(t, reg, "flow-add-script", r.args(map[string]any{"path": "seed.mjs"}), true)
	tooltest.WantCode(t, err, "FLOW_FILE_INVALID")

	_, err = tooltest.Invoke(t, reg, "flow-add-step", r.step(t, "test-dir-input", map[string]any{"dir": r.root}), true)
	te := tooltest.WantCode(t, err, "FLOW_FILE_INVALID")
	if !strings.Contains(te.Message, "argument dir is a directory") {
		t.Fatalf("directory input: got %q, want it named", te.Message)
	}
	if got := runCount(r.root); got != 0 {
		t.Fatalf("test-dir-input ran %d times, want 0", got)
	}

	_, err = tooltest.Invoke(t, reg, "flow-add-step", r.step(t, "flow-execute", map[string]any{"name": "broken", "project_root": r.root}), true)
	tooltest.WantCode(t, err, codeStepFailed)

	// A passing flow beside the recording is composed with run:, by name
	// or by a flow_path beside it.
	res := callLinked(t, reg, "flow-add-step", r.step(t, "flow-execute", map[string]any{"name": "greet", "project_root": r.root}))
	if got, want := res["recorded"], "1. run: greet.yaml"; got != want {
		t.Fatalf("recorded: got %v, want %v", got, want)
	}
	res = callLinked(t, reg, "flow-add-step", r.step(t, "flow-execute", map[string]any{"flow_path": filepath.Join(flows, "greet.yaml")}))
	if got, want := res["recorded"], "2. run: greet.yaml"; got != want {
		t.Fatalf("recorded: got %v, want %v", got, want)
	}
	_, err = tooltest.Invoke(t, reg, "flow-add-step", r.step(t, "flow-execute", map[string]any{"flow_path": filepath.Join(t.TempDir(), "away.yaml")}), true)
	tooltest.WantCode(t, err, "FLOW_FILE_INVALID")

	content := wantDirective(t, callLinked(t, reg, "flow-finish-recording", r.args(nil))["savedTo"], r.root+"/.argent/flows/linkrec.yaml")
	if got, want := content, "steps:\n  - run: greet.yaml\n  - run: greet.yaml\n"; got != want {
		t.Fatalf("content: got %q, want %q", got, want)
	}
	if _, err := os.Stat(r.file()); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("stat %s: got %v, want nothing written", r.file(), err)
	}
}

func TestRecordHostAllowsWhatLinkRefuses(t *testing.T) {
	t.Parallel()
	reg := newRegistry(t)
	r := recName{"local", t.TempDir()}
	tooltest.Call(t, reg, "flow-start-recording", r.args(nil))
	res := tooltest.Call(t, reg, "flow-add-step", r.step(t, "test-dir-input", map[string]any{"dir": r.root}))
	if got, want := res["recorded"], fmt.Sprintf(`1. tool: test-dir-input {"dir":%q}`, r.root); got != want {
		t.Fatalf("recorded: got %v, want %v", got, want)
	}
	if got := runCount(r.root); got != 1 {
		t.Fatalf("test-dir-input ran %d times, want 1", got)
	}

	_, err := tooltest.Invoke(t, reg, "flow-add-script", r.args(map[string]any{"path": "scripts/seed.mjs"}), false)
	var te *fault.Error
	if !errors.As(err, &te) || te.Field != "path" {
		t.Fatalf("missing script: got %v, want a path error", err)
	}
	script := filepath.Join(r.root, ".argent", "flows", "scripts", "seed.mjs")
	if err := os.MkdirAll(filepath.Dir(script), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(script, []byte("console.log('seeded')\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	res = tooltest.Call(t, reg, "flow-add-script", r.args(map[string]any{"path": script, "timeout": 5000}))
	if got, want := res["recorded"], "2. script: { path: scripts/seed.mjs, timeout: 5000 }"; got != want {
		t.Fatalf("recorded: got %v, want %v", got, want)
	}
	if n := len(parseFile(t, r.file()).Steps); n != 2 {
		t.Fatalf("steps: got %d, want 2", n)
	}
}

func TestRecordRestartAndValidation(t *testing.T) {
	t.Parallel()
	reg := newRegistry(t)
	r := recName{"again", t.TempDir()}
	tooltest.Call(t, reg, "flow-start-recording", r.args(nil))
	tooltest.Call(t, reg, "flow-add-echo", r.args(map[string]any{"message": "one"}))
	res := tooltest.Call(t, reg, "flow-start-recording", r.args(nil))
	want := fmt.Sprintf(`Restarted recording "again" — the previous take (1 step) was discarded and %s reset to an empty flow.`, r.file())
	if got := res["message"]; got != want {
		t.Fatalf("restart message: got %v, want %v", got, want)
	}
	if res["restarted"] != true || res["discardedSteps"] != 1.0 {
		t.Fatalf("restart: got %v, want restarted with 1 discarded step", res)
	}
	if n := len(parseFile(t, r.file()).Steps); n != 0 {
		t.Fatalf("steps after restart: got %d, want 0", n)
	}

	// A fragment's prerequisite refuses a leading launch before anything runs.
	p := recName{"fragment", r.root}
	res = tooltest.Call(t, reg, "flow-start-recording", p.args(map[string]any{"executionPrerequisite": "The cart holds one item."}))
	if got := res["flowFile"]; got != "executionPrerequisite: The cart holds one item.\nsteps: []\n" {
		t.Fatalf("flowFile: got %q, want the prerequisite and no steps", got)
	}
	_, err := tooltest.Invoke(t, reg, "flow-add-step", p.step(t, "open-url", map[string]any{"device": "chromium-cdp-1003x700", "url": cdptest.Pages(t) + "/app.html", "fresh": true}), false)
	tooltest.WantCode(t, err, "FLOW_E2E_HAS_PREREQUISITE")
	if _, ok := cdptest.Pool(t).Lookup("chromium-cdp-1003x700"); ok {
		t.Fatalf("the refused open-url booted its device; want nothing run")
	}

	for _, c := range []struct {
		args map[string]any
		code string
	}{
		{map[string]any{"name": "a/b", "project_root": r.root}, "FLOW_NAME_INVALID"},
		{map[string]any{"name": "ok", "project_root": "relative/dir"}, "FLOW_PROJECT_ROOT_INVALID"},
		{map[string]any{"name": "ok", "project_root": r.root + "/../x"}, "FLOW_PROJECT_ROOT_INVALID"},
	} {
		_, err := tooltest.Invoke(t, reg, "flow-start-recording", c.args, false)
		tooltest.WantCode(t, err, c.code)
	}
}

func TestRecordNoActiveRecording(t *testing.T) {
	t.Parallel()
	reg := newRegistry(t)
	root := t.TempDir()
	tooltest.Call(t, reg, "flow-start-recording", recName{"other", root}.args(nil))
	_, err := tooltest.Invoke(t, reg, "flow-add-echo", recName{"nope", root}.args(map[string]any{"message": "x"}), false)
	te := tooltest.WantCode(t, err, "FLOW_NO_ACTIVE_RECORDING")
	if te.Kind != fault.Validation {
		t.Fatalf("kind: got %v, want %v", te.Kind, fault.Validation)
	}
	want := fmt.Sprintf(`No active recording for flow "nope" in %s. If you have not started it yet, call flow-start-recording — but note it truncates, so if %s already holds a take you want (finished, or interrupted by a restart), copy it aside or record under a fresh name instead. Active recordings: "other"`,
		root, filepath.Join(root, ".argent", "flows", "nope.yaml"))
	if !strings.HasPrefix(te.Message, want) {
		t.Fatalf("message: got %q, want it to start with %q", te.Message, want)
	}
	for name, extra := range map[string]map[string]any{
		"flow-add-step":         {"command": "keyboard"},
		"flow-add-script":       {"path": "x.mjs"},
		"flow-finish-recording": nil,
	} {
		_, err := tooltest.Invoke(t, reg, name, recName{"nope", root}.args(extra), false)
		tooltest.WantCode(t, err, "FLOW_NO_ACTIVE_RECORDING")
	}
}

func TestRecordConcurrentAppends(t *testing.T) {
	t.Parallel()
	reg := newRegistry(t)
	r := recName{"busy", t.TempDir()}
	tooltest.Call(t, reg, "flow-start-recording", r.args(nil))
	const n = 12
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Go(func() {
			if _, err := tooltest.Invoke(t, reg, "flow-add-echo", r.args(map[string]any{"message": fmt.Sprint("echo ", i)}), false); err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if got := len(parseFile(t, r.file()).Steps); got != n {
		t.Fatalf("steps: got %d, want %d", got, n)
	}
}

func TestRecordEvictsLeastRecentlyUsed(t *testing.T) {
	t.Parallel()
	// A registry of its own, so other tests' recordings do not count.
	r := newRegistry(t)
	root := t.TempDir()
	for i := range MaxRecordings + 1 {
		if _, err := tooltest.Invoke(t, r, "flow-start-recording", recName{fmt.Sprint("r", i), root}.args(nil), false); err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			continue
		}
		// Touch r1 so that r0 is the least recently used.
		if _, err := tooltest.Invoke(t, r, "flow-add-echo", recName{"r1", root}.args(map[string]any{"message": "x"}), false); err != nil {
			t.Fatal(err)
		}
	}
	_, err := tooltest.Invoke(t, r, "flow-add-echo", recName{"r0", root}.args(map[string]any{"message": "x"}), false)
	tooltest.WantCode(t, err, "FLOW_NO_ACTIVE_RECORDING")
	if _, err := tooltest.Invoke(t, r, "flow-add-echo", recName{"r1", root}.args(map[string]any{"message": "x"}), false); err != nil {
		t.Fatalf("r1: got %v, want it still recording", err)
	}
}

func TestGeneratedID(t *testing.T) {
	for _, c := range []struct {
		id   string
		want bool
	}{
		{"top", false},
		{"go-button", false},
		{"submit_btn", false},
		{"username", false},
		{"Close dialog", false},
		{"h264-player", false},
		{"step2", false},
		{"item-42", false},
		{":r1:", true},
		{"«r3»", true},
		{"ember1234", true},
		{"ember12", true},
		{"input-20931", true},
		{"mui-3", true},
		{"react-select-2-input", true},
		{"mat-input-0", true},
		{"a1b2c3d4", true},
		{"btn-3f9a2c7e", true},
		{"550e8400-e29b-41d4-a716-446655440000", true},
		{"x7f3k9q", true},
		{"css-1n7v3ny", true},
		{strings.Repeat("a", 61), true},
	} {
		if got := generatedID(c.id); got != c.want {
			t.Errorf("generatedID(%q): got %v, want %v", c.id, got, c.want)
		}
	}
}

func TestTapSelectors(t *testing.T) {
	frame := func(x, y, w, h float64) cdp.Frame { return cdp.Frame{X: x, Y: y, Width: w, Height: h} }
	button := cdp.Element{ID: "save", Text: "Save", Tag: "button", Visible: true, Frame: frame(0.4, 0.4, 0.2, 0.1)}
	icon := cdp.Element{Tag: "img", Role: "img", Visible: true, Frame: frame(0.42, 0.42, 0.05, 0.05)}
	label := cdp.Element{Text: "Save", Tag: "span", Visible: true, Frame: frame(0.45, 0.41, 0.12, 0.08)}
	card := cdp.Element{ID: "card", Tag: "div", Visible: true, Frame: frame(0, 0, 1, 0.5)}
	hidden := cdp.Element{ID: "ghost", Tag: "div", Frame: frame(0.4, 0.4, 0.01, 0.01)}
	input := cdp.Element{ID: "ember1234", Text: "typed", Tag: "input", Visible: true, Frame: frame(0.1, 0.8, 0.3, 0.05)}
	for _, c := range []struct {
		name string
		els  []cdp.Element
		x, y float64
		want string // the selectors, best first
		why  string
	}{
		{"id before text, the label's text once", []cdp.Element{card, button, label}, 0.5, 0.45, `id="save" text="Save"`, ""},
		{"an icon's button, not the card around it", []cdp.Element{card, button, icon, hidden}, 0.44, 0.44, `id="save" text="Save"`, ""},
		{"a card's id when its centre is under the point", []cdp.Element{card}, 0.5, 0.25, `id="card"`, ""},
		{"not a card whose centre is elsewhere", []cdp.Element{card, cdp.Element{Text: "Price", Tag: "p", Visible: true, Frame: frame(0.1, 0.1, 0.1, 0.05)}}, 0.12, 0.12, `text="Price"`, ""},
		{"nothing under the point", []cdp.Element{button}, 0.9, 0.9, "", "no element that a selector can name is under that point"},
		{"an input's value is no selector", []cdp.Element{input}, 0.2, 0.82, "", `the element under that point has only an id that looks generated ("ember1234") and no text`},
	} {
		t.Run(c.name, func(t *testing.T) {
			cands, _, why := tapSelectors(c.els, c.x, c.y)
			var got []string
			for _, s := range cands {
				got = append(got, s.String())
			}
			if strings.Join(got, " ") != c.want || why != c.why {
				t.Fatalf("got %q (%q), want %q (%q)", strings.Join(got, " "), why, c.want, c.why)
			}
		})
	}
}

// TestRecordSupersededTake checks what a call that looked the recording up
// before a restart or a finish learns once it holds the lock.
func TestRecordSupersededTake(t *testing.T) {
	t.Parallel()
	rc := NewRecordings()
	r := tool.NewRegistry()
	(&Tools{Recordings: rc}).Register(r)
	a := recName{"take", t.TempDir()}
	if _, err := tooltest.Invoke(t, r, "flow-start-recording", a.args(nil), false); err != nil {
		t.Fatal(err)
	}
	tg, err := resolveTarget(recArgs{Name: a.name, ProjectRoot: a.root})
	if err != nil {
		t.Fatal(err)
	}
	s, first := rc.slotFor(tg.key, false)
	if got := rc.still(s, first); got != "" {
		t.Fatalf("first take: got %q, want it current", got)
	}
	if _, err := tooltest.Invoke(t, r, "flow-start-recording", a.args(nil), false); err != nil {
		t.Fatal(err)
	}
	if got, want := rc.still(s, first), "another flow-start-recording restarted it"; got != want {
		t.Fatalf("after a restart: got %q, want %q", got, want)
	}
	_, second := rc.slotFor(tg.key, false)
	if _, err := tooltest.Invoke(t, r, "flow-finish-recording", a.args(nil), false); err != nil {
		t.Fatal(err)
	}
	if got, want := rc.still(s, second), "flow-finish-recording finished it"; got != want {
		t.Fatalf("after finish: got %q, want %q", got, want)
	}
}
