package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/toolserver/toolserver/device/cdp/cdptest"
	"github.com/toolserver/toolserver/server"
)

// argentCLI is the published Argent client, fetched by make test
// (scripts/fetch-argent.sh).
const argentCLI = "../../.cache/argent/0.25.2/package/dist/cli.js"

// mcp drives `argent mcp` over stdio with JSON-RPC, one message a line.
type mcp struct {
	t   *testing.T
	in  io.WriteCloser
	out *bufio.Scanner
	id  int
}

func (m *mcp) send(method string, params any, notify bool) map[string]any {
	m.t.Helper()
	msg := map[string]any{"jsonrpc": "2.0", "method": method}
	if params != nil {
		msg["params"] = params
	}
	if !notify {
		m.id++
		msg["id"] = m.id
	}
	b, _ := json.Marshal(msg)
	if _, err := m.in.Write(append(b, '\n')); err != nil {
		m.t.Fatal(err)
	}
	if notify {
		return nil
	}
	for m.out.Scan() {
		var resp map[string]any
		if json.Unmarshal(m.out.Bytes(), &resp) != nil {
			continue
		}
		if id, ok := resp["id"].(float64); ok && int(id) == m.id {
			return resp
		}
	}
	m.t.Fatalf("argent mcp closed before answering %s: %v", method, m.out.Err())
	return nil
}

// text joins the text blocks of a tools/call result.
func text(resp map[string]any) (string, bool) {
	res, _ := resp["result"].(map[string]any)
	var parts []string
	for _, c := range res["content"].([]any) {
		if s, ok := c.(map[string]any)["text"].(string); ok {
			parts = append(parts, s)
		}
	}
	isErr, _ := res["isError"].(bool)
	return strings.Join(parts, "\n"), isErr
}

// TestPublishedArgentClient runs Argent 0.25.2's MCP server against this
// tool-server: it lists our tools, runs a plain flow through flow-execute,
// and gets the older-client refusals (docs/link-protocol.md, "Older
// clients and tool-servers") for run: and snapshot: flows.
func TestPublishedArgentClient(t *testing.T) {
	t.Parallel()
	if _, err := os.Stat(argentCLI); err != nil {
		t.Fatalf("the Argent client is missing (%v): run scripts/fetch-argent.sh (make test does)", err)
	}
	pages := httptest.NewServer(http.FileServer(http.Dir("../../testdata/pages")))
	defer pages.Close()
	a, err := newApp(appOptions{stderr: io.Discard, pool: cdptest.Pool(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	// The client runs on this machine, so its paths exist here: make the
	// server treat the flow as coming from elsewhere, as it would in a
	// container, so the older-client rules apply.
	a.flowTools.NoHostFiles = true
	const token = "argent-compat-token"
	srv := server.New(server.Config{Addr: "127.0.0.1:0", Token: token, Tools: a.tools, Artifacts: a.artifacts, Uploads: a.uploads, TempDir: a.tmp})
	if err := srv.Listen(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go srv.Serve(ctx)

	root := t.TempDir()
	flows := filepath.Join(root, ".argent", "flows")
	os.MkdirAll(flows, 0o755)
	write := func(name, body string) {
		os.WriteFile(filepath.Join(flows, name+".yaml"), []byte(strings.ReplaceAll(body, "{{URL}}", pages.URL)), 0o644)
	}
	write("plain", "steps:\n  - echo: hello\n  - launch: \"{{URL}}/app.html\"\n  - tap: Go now\n  - assert: { text: { in: { id: out }, equals: clicked 1 } }\n")
	write("withrun", "steps:\n  - run: plain\n")
	write("withsnap", "steps:\n  - launch: \"{{URL}}/app.html\"\n  - snapshot: home\n")

	cctx, ccancel := context.WithTimeout(ctx, 2*time.Minute)
	defer ccancel()
	cmd := exec.CommandContext(cctx, "node", argentCLI, "mcp")
	home := t.TempDir()
	cmd.Env = append(os.Environ(), "HOME="+home, "ARGENT_TOOLS_URL=http://"+srv.Addr(), "ARGENT_AUTH_TOKEN="+token, "DO_NOT_TRACK=1", "ARGENT_TELEMETRY=0")
	cmd.Stderr = io.Discard
	in, _ := cmd.StdinPipe()
	outPipe, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { in.Close(); cmd.Wait() }()
	sc := bufio.NewScanner(outPipe)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	m := &mcp{t: t, in: in, out: sc}

	m.send("initialize", map[string]any{"protocolVersion": "2025-06-18", "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "toolserver-test", "version": "1"}}, false)
	m.send("notifications/initialized", nil, true)
	list := m.send("tools/list", map[string]any{}, false)
	names := fmt.Sprint(list["result"])
	for _, want := range []string{"flow-execute", "screenshot", "describe", "gesture-tap"} {
		if !strings.Contains(names, want) {
			t.Fatalf("tools/list lacks %s: %s", want, names)
		}
	}
	t.Cleanup(func() { cdptest.Stop(t, "chromium-cdp-1280x800") })
	call := func(name string) (string, bool) {
		resp := m.send("tools/call", map[string]any{"name": "flow-execute", "arguments": map[string]any{"name": name, "project_root": root, "device": "chromium-cdp-1280x800"}}, false)
		return text(resp)
	}
	out, isErr := call("plain")
	if isErr || !strings.Contains(out, "PASS — 3 passed, 0 failed, 0 errored, 0 skipped") {
		t.Fatalf("plain flow through argent mcp: error=%v\n%s", isErr, out)
	}
	out, isErr = call("withrun")
	if !isErr || !strings.Contains(out, "This tool-server runs run: steps for a client that sends their fragments with the call. Update the argent CLI or MCP adapter on the client.") {
		t.Fatalf("run: refusal: error=%v\n%s", isErr, out)
	}
	out, isErr = call("withsnap")
	if !isErr || !strings.Contains(out, "This tool-server runs snapshot: steps for a client that sends their baselines with the call. Update the argent CLI or MCP adapter on the client.") {
		t.Fatalf("snapshot: refusal: error=%v\n%s", isErr, out)
	}
}
