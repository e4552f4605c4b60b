package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"image/png"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// mcpClient is an SDK client whose progress notifications arrive on
// progress.
func mcpClient() (*sdk.Client, chan *sdk.ProgressNotificationParams) {
	progress := make(chan *sdk.ProgressNotificationParams, 64)
	c := sdk.NewClient(&sdk.Implementation{Name: "toolserver-test", Version: "v0"}, &sdk.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, req *sdk.ProgressNotificationClientRequest) {
			progress <- req.Params
		},
	})
	return c, progress
}

// stdioMCP is `toolserver mcp` run in process with pipes for stdin and
// stdout, and an SDK client on the other ends.
type stdioMCP struct {
	cs       *sdk.ClientSession
	progress chan *sdk.ProgressNotificationParams
	stderr   *syncBuffer
	cancel   context.CancelFunc // SIGINT, SIGTERM
	done     chan int           // the exit code
}

func startMCP(t *testing.T) *stdioMCP {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	m := &stdioMCP{stderr: &syncBuffer{}, cancel: cancel, done: make(chan int, 1)}
	s := testStreams(t, nil, outW, m.stderr)
	s.stdin = inR
	go func() { m.done <- run(ctx, []string{"mcp", "--state-dir", t.TempDir()}, s) }()
	client, progress := mcpClient()
	m.progress = progress
	cs, err := client.Connect(context.Background(), &sdk.IOTransport{Reader: outR, Writer: inW}, nil)
	if err != nil {
		cancel()
		inW.Close()
		outR.Close()
		<-m.done
		t.Fatalf("connect: %v; stderr: %s", err, m.stderr)
	}
	m.cs = cs
	t.Cleanup(func() {
		cs.Close()
		cancel()
		<-m.done
	})
	return m
}

// exitCode waits for the command's exit code.
func (m *stdioMCP) exitCode(t *testing.T) int {
	t.Helper()
	select {
	case code := <-m.done:
		m.done <- code // for the cleanup
		return code
	case <-time.After(30 * time.Second):
		t.Fatalf("toolserver mcp did not exit; stderr: %s", m.stderr)
		return -1
	}
}

// TestMCPStdio: a coding agent's session with `toolserver mcp` over its
// stdin and stdout, on the go-sdk client: the tools, a page opened and
// seen as an image, a flow with a progress notification per step, the
// runs; it exits 0 when the client closes stdin, and stdout carried the
// protocol alone (the client would have failed on anything else).
func TestMCPStdio(t *testing.T) {
	t.Parallel()
	m := startMCP(t)
	agentSession(t, m.cs, m.progress, sharedDevice(t, "chromium-cdp-641x401"), 641, 401)
	if err := m.cs.Close(); err != nil {
		t.Errorf("close: %v", err)
	}
	if code := m.exitCode(t); code != exitOK {
		t.Fatalf("exit: got %d, want 0; stderr: %s", code, m.stderr)
	}
}

// TestMCPStdioSignal: SIGINT or SIGTERM (the context) ends a session
// whose stdin is still open with exit 0.
func TestMCPStdioSignal(t *testing.T) {
	t.Parallel()
	m := startMCP(t)
	if err := m.cs.Ping(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	m.cancel()
	if code := m.exitCode(t); code != exitOK {
		t.Fatalf("exit: got %d, want 0; stderr: %s", code, m.stderr)
	}
}

// bearer sends the token with every request of the SDK's HTTP client.
type bearer struct {
	token string
	next  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.next.RoundTrip(r)
}

// TestMCPHTTP: the same session with /mcp on `toolserver serve` (the
// streamable HTTP transport: JSON posts, an event stream per call and
// the client's standing GET stream) behind the token: refused without
// it; and a server stopping with a session open stops at once, not
// after the 10 s its graceful shutdown gives open requests.
func TestMCPHTTP(t *testing.T) {
	t.Parallel()
	const token = "mcp-token"
	ctx, cancel := context.WithCancel(context.Background())
	stderr := &syncBuffer{started: make(chan struct{})}
	s := testStreams(t, env{envAuthToken: token}, io.Discard, stderr)
	done := make(chan int, 1)
	go func() { done <- run(ctx, []string{"serve", "--addr", "127.0.0.1:0", "--state-dir", t.TempDir()}, s) }()
	select {
	case <-stderr.started:
	case code := <-done:
		cancel()
		t.Fatalf("serve exited %d before listening: %s", code, stderr)
	}
	stopped := false
	t.Cleanup(func() {
		cancel()
		if !stopped {
			<-done
		}
	})
	addr := regexp.MustCompile(`listening on http://(\S+) `).FindStringSubmatch(stderr.String())
	if addr == nil {
		t.Fatalf("serve: no address in %q", stderr)
	}
	endpoint := "http://" + addr[1] + "/mcp"

	for _, auth := range []string{"", "Bearer wrong"} {
		req, _ := http.NewRequest("POST", endpoint, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("/mcp with %q: got %d, want 401", auth, resp.StatusCode)
		}
	}

	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	client, progress := mcpClient()
	cs, err := client.Connect(context.Background(), &sdk.StreamableClientTransport{
		Endpoint:   endpoint,
		HTTPClient: &http.Client{Transport: bearer{token, tr}},
		MaxRetries: -1, // a dropped stream is a failure here, not a reconnect
	}, nil)
	if err != nil {
		t.Fatalf("connect: %v; serve: %s", err, stderr)
	}
	t.Cleanup(func() { cs.Close() })
	agentSession(t, cs, progress, sharedDevice(t, "chromium-cdp-643x403"), 643, 403)

	// The session stays open (the client's GET stream with it) while the
	// server stops.
	start := time.Now()
	cancel()
	select {
	case code := <-done:
		stopped = true
		if code != exitOK {
			t.Errorf("serve: exit %d, want 0", code)
		}
		if d := time.Since(start); d > 5*time.Second {
			t.Errorf("serve took %v to stop with an MCP session open", d)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("serve did not stop")
	}
}

// agentSession is what a coding agent does with the tools: list them,
// open a page on device (w×h) and look at it, run a flow on it with a
// progress token, read a tool error, list the runs.
func agentSession(t *testing.T, cs *sdk.ClientSession, progress <-chan *sdk.ProgressNotificationParams, device string, w, h int) {
	t.Helper()
	ctx := context.Background()
	var names []string
	for tl, err := range cs.Tools(ctx, nil) {
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, tl.Name)
		if tl.Name == "screenshot" && !strings.Contains(string(mustJSON(t, tl.InputSchema)), `"device"`) {
			t.Errorf("screenshot's schema: got %s, want its device argument", mustJSON(t, tl.InputSchema))
		}
	}
	for _, want := range []string{"open-url", "screenshot", "describe", "gesture-tap", "flow-execute", "screenshot-diff", "list_runs", "get_run"} {
		if !slices.Contains(names, want) {
			t.Errorf("tools: %s missing from %v", want, names)
		}
	}

	pages := httptest.NewServer(http.FileServer(http.Dir("../../testdata/pages")))
	t.Cleanup(pages.Close)
	callTool(t, cs, "open-url", map[string]any{"device": device, "url": pages.URL + "/app.html"}, nil)
	res := callTool(t, cs, "screenshot", map[string]any{"device": device}, nil)
	if len(res.Content) != 2 {
		t.Fatalf("screenshot: got %d contents, want the JSON and the image", len(res.Content))
	}
	img, ok := res.Content[1].(*sdk.ImageContent)
	if !ok {
		t.Fatalf("screenshot: content 1 is %T, want an image", res.Content[1])
	}
	cfg, err := png.DecodeConfig(bytes.NewReader(img.Data))
	if err != nil || img.MIMEType != "image/png" || cfg.Width != w || cfg.Height != h {
		t.Errorf("screenshot: got %s %dx%d (%v), want a PNG of %dx%d", img.MIMEType, cfg.Width, cfg.Height, err, w, h)
	}

	// A flow of three steps: three notifications, in order.
	root := writeProject(t, map[string]string{
		"press.yaml": "steps:\n  - launch: \"{{URL}}/app.html\"\n  - tap: Go now\n  - assert: { text: { in: { id: out }, equals: clicked 1 } }\n",
	})
	res = callTool(t, cs, "flow-execute", map[string]any{"name": "press", "project_root": root, "device": device}, "run-press")
	var rep struct {
		OK    bool
		Steps []struct{ Kind, Status string }
	}
	if err := json.Unmarshal([]byte(resultText(t, res)), &rep); err != nil || !rep.OK || len(rep.Steps) != 3 {
		t.Fatalf("flow-execute: got %s (%v), want a passed run of 3 steps", resultText(t, res), err)
	}
	for i, s := range rep.Steps {
		select {
		case p := <-progress:
			want := fmt.Sprintf("step %d %s ", i+1, s.Kind)
			if p.ProgressToken != "run-press" || p.Progress != float64(i+1) || !strings.HasPrefix(p.Message, want) || !strings.HasSuffix(p.Message, ": pass") {
				t.Errorf("notification %d: got %v %v %q, want run-press %d %q…: pass", i, p.ProgressToken, p.Progress, p.Message, i+1, want)
			}
		case <-time.After(30 * time.Second):
			t.Fatalf("notification %d of %d never came", i+1, len(rep.Steps))
		}
	}

	// A tool error is a result the agent reads, with the error's message.
	bad, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "open-url", Arguments: map[string]any{"device": device, "url": "chrome://settings"}})
	if err != nil {
		t.Fatal(err)
	}
	if msg := resultText(t, bad); !bad.IsError || !strings.Contains(msg, "chrome:") {
		t.Errorf("open-url chrome://: got error=%v %q, want a tool error naming the scheme", bad.IsError, msg)
	}

	// The run store recorded the flow: list_runs finds it, get_run has
	// its steps; an unknown run is a tool error.
	res = callTool(t, cs, "list_runs", map[string]any{"status": "passed"}, nil)
	var list struct {
		Runs []struct{ Run, Flow, Status, Device string }
	}
	if err := json.Unmarshal([]byte(resultText(t, res)), &list); err != nil || len(list.Runs) != 1 || list.Runs[0].Flow != "press" || list.Runs[0].Device != device {
		t.Fatalf("list_runs: got %s (%v), want the passed run of press", resultText(t, res), err)
	}
	res = callTool(t, cs, "get_run", map[string]any{"id": list.Runs[0].Run}, nil)
	var got struct {
		Status string
		Steps  []json.RawMessage
	}
	if err := json.Unmarshal([]byte(resultText(t, res)), &got); err != nil || got.Status != "passed" || len(got.Steps) != 3 {
		t.Errorf("get_run: got %s (%v), want the run with its 3 steps", resultText(t, res), err)
	}
	if res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "get_run", Arguments: map[string]any{"id": "99999999-2222-4333-8444-555555555555"}}); err != nil || !res.IsError || !strings.Contains(resultText(t, res), "no run") {
		t.Errorf("get_run of an unknown run: %v %+v", err, res)
	}
	select {
	case p := <-progress:
		t.Errorf("a notification past the flow's steps: %+v", p)
	default:
	}
}

// callTool calls name and fails the test on an error; a non-nil token
// asks for progress notifications.
func callTool(t *testing.T, cs *sdk.ClientSession, name string, args map[string]any, token any) *sdk.CallToolResult {
	t.Helper()
	p := &sdk.CallToolParams{Name: name, Arguments: args}
	if token != nil {
		p.SetProgressToken(token)
	}
	res, err := cs.CallTool(context.Background(), p)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if res.IsError {
		t.Fatalf("%s: tool error %s", name, resultText(t, res))
	}
	return res
}

// resultText is the first content of res, the JSON of the result.
func resultText(t *testing.T, res *sdk.CallToolResult) string {
	t.Helper()
	if len(res.Content) == 0 {
		t.Fatal("a result without content")
	}
	tc, ok := res.Content[0].(*sdk.TextContent)
	if !ok {
		t.Fatalf("content 0 is %T, want text", res.Content[0])
	}
	return tc.Text
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
