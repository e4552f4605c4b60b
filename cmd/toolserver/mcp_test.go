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
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolserver/toolserver/runs"
	mcpserver "github.com/toolserver/toolserver/server/mcp"
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
	stateDir string             // its --state-dir
	cancel   context.CancelFunc // SIGINT, SIGTERM
	done     chan int           // the exit code
}

func startMCP(t *testing.T) *stdioMCP {
	t.Helper()
	return startMCPIn(t, t.TempDir())
}

// startMCPIn is startMCP with its runs kept in stateDir.
func startMCPIn(t *testing.T, stateDir string) *stdioMCP {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	m := &stdioMCP{stderr: &syncBuffer{}, stateDir: stateDir, cancel: cancel, done: make(chan int, 1)}
	s := testStreams(t, nil, outW, m.stderr)
	s.stdin = inR
	go func() { m.done <- run(ctx, []string{"mcp", "--state-dir", m.stateDir}, s) }()
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
// runs and the six run tools; it exits 0 when the client closes stdin,
// and stdout carried the protocol alone (the client would have failed on
// anything else).
func TestMCPStdio(t *testing.T) {
	t.Parallel()
	m := startMCP(t)
	device := sharedDevice(t, "chromium-cdp-641x401")
	agentSession(t, m.cs, m.progress, device, 641, 401)
	runSession(t, m.cs, m.stateDir, device)
	if err := m.cs.Close(); err != nil {
		t.Errorf("close: %v", err)
	}
	if code := m.exitCode(t); code != exitOK {
		t.Fatalf("exit: got %d, want 0; stderr: %s", code, m.stderr)
	}
}

// TestMCPStdioInterruptedRun: a run start_run started that is still going
// when the session ends stays running with no driver (a RunInterrupted
// event says why), and resume_run in the next session on the same store
// drives it again, to completed.
func TestMCPStdioInterruptedRun(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	device := sharedDevice(t, "chromium-cdp-645x405")
	root, release := hangingProject(t)
	m := startMCPIn(t, dir)
	var started runs.Started
	decodeTool(t, m.cs, "start_run", map[string]any{"tool_args": map[string]any{"name": "hang", "project_root": root, "device": device}}, &started)
	if err := m.cs.Close(); err != nil {
		t.Fatal(err)
	}
	if code := m.exitCode(t); code != exitOK {
		t.Fatalf("exit: got %d, want 0; stderr: %s", code, m.stderr)
	}
	st, err := runs.OpenReader(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	r, err := st.Run(context.Background(), started.Run)
	evs, eerr := st.Events(context.Background(), started.Run, 0)
	if err != nil || eerr != nil || r.Status.State != runs.Running || r.Driver != runs.DriverNone || !r.Resumable ||
		len(evs) == 0 || evs[len(evs)-1].Event.Kind != runs.KindRunInterrupted {
		t.Fatalf("the run as the session ended: %+v %v %v, want running, no driver, resumable, its last event %s", r, err, eerr, runs.KindRunInterrupted)
	}

	// The page answers now: the run, resumed, runs to its end.
	release()
	m2 := startMCPIn(t, dir)
	var out runs.Resumed
	decodeTool(t, m2.cs, "resume_run", map[string]any{"id": started.Run}, &out)
	if out.Run != started.Run || out.Outcome != runs.ResumeDriving || string(out.Status) != `"running"` {
		t.Fatalf("resume_run: got %+v %s, want driving and running", out, out.Status)
	}
	end, err := st.FollowEvents(context.Background(), started.Run, 0, func(runs.Event) error { return nil })
	if err != nil || end.Status.State != runs.Completed || end.Status.Outcome() != runs.Passed {
		t.Fatalf("the resumed run ended %+v (%v), want completed and passed", end, err)
	}
	var d runs.Detail
	decodeTool(t, m2.cs, "get_run", map[string]any{"id": started.Run}, &d)
	if d.Attempt != 2 || len(d.Steps) != 1 {
		t.Errorf("get_run of the resumed run: attempt %d, %d steps; want attempt 2 and its one step", d.Attempt, len(d.Steps))
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
// after the 10 s its graceful shutdown gives open requests. A run that
// start_run started is the server's own: its drain counts it, and
// leaves it running with no driver, to be resumed, when it stops under
// it.
func TestMCPHTTP(t *testing.T) {
	t.Parallel()
	const token = "mcp-token"
	ctx, cancel := context.WithCancel(context.Background())
	stderr := &syncBuffer{started: make(chan struct{})}
	s := testStreams(t, env{envAuthToken: token}, io.Discard, stderr)
	done := make(chan int, 1)
	stateDir := t.TempDir()
	go func() {
		done <- run(ctx, []string{"serve", "--addr", "127.0.0.1:0", "--state-dir", stateDir, "--drain-timeout", "1s"}, s)
	}()
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
	device := sharedDevice(t, "chromium-cdp-643x403")
	agentSession(t, cs, progress, device, 643, 403)
	runSession(t, cs, stateDir, device)

	// A run in flight as the server stops: the drain waits for it, then
	// stops it; it stays running, to be resumed.
	slow, _ := hangingProject(t)
	var inFlight struct{ Run string }
	decodeTool(t, cs, "start_run", map[string]any{"tool_args": map[string]any{"name": "hang", "project_root": slow, "device": device}}, &inFlight)

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
		// An MCP session's open stream would hold the shutdown for the
		// server's 10 s; the drain (1 s) and the run's stop take less.
		if d := time.Since(start); d >= 10*time.Second {
			t.Errorf("serve took %v to stop with an MCP session open: the session's stream held it", d)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("serve did not stop")
	}
	if log := stderr.String(); !strings.Contains(log, "draining") || !strings.Contains(log, "in_flight=1") {
		t.Errorf("serve's drain did not count the run start_run started: %s", log)
	}
	st, err := runs.OpenReader(stateDir)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	r, err := st.Run(context.Background(), inFlight.Run)
	evs, eerr := st.Events(context.Background(), inFlight.Run, 0)
	if err != nil || eerr != nil || r.Status.State != runs.Running || r.Driver != runs.DriverNone || !r.Resumable ||
		len(evs) == 0 || evs[len(evs)-1].Event.Kind != runs.KindRunInterrupted {
		t.Errorf("the run in flight as serve stopped: %+v %v %v, want running, no driver, resumable, its last event %s", r, err, eerr, runs.KindRunInterrupted)
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
	for _, want := range []string{"open-url", "screenshot", "describe", "gesture-tap", "flow-execute", "screenshot-diff", "list_runs", "get_run", "get_run_events", "start_run", "abandon_run", "resume_run"} {
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
	res = callTool(t, cs, "list_runs", map[string]any{"status": "completed", "outcome": "passed"}, nil)
	var list runs.Page
	if err := json.Unmarshal([]byte(resultText(t, res)), &list); err != nil || len(list.Runs) != 1 || list.Runs[0].Flow != "press" || list.Runs[0].Device != device || list.Runs[0].Source != "tools" {
		t.Fatalf("list_runs: got %s (%v), want the passed run of press", resultText(t, res), err)
	}
	res = callTool(t, cs, "get_run", map[string]any{"id": list.Runs[0].ID}, nil)
	var got runs.Detail
	if err := json.Unmarshal([]byte(resultText(t, res)), &got); err != nil || got.Status.State != runs.Completed || got.Outcome != runs.Passed || len(got.Steps) != 3 {
		t.Errorf("get_run: got %s (%v), want the run with its 3 steps", resultText(t, res), err)
	}
	if res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "get_run", Arguments: map[string]any{"id": "99999999-2222-4333-8444-555555555555"}}); err != nil || !res.IsError || !strings.Contains(resultText(t, res), "unknown_run: unknown run: no run") {
		t.Errorf("get_run of an unknown run: %v %+v", err, res)
	}
	select {
	case p := <-progress:
		t.Errorf("a notification past the flow's steps: %+v", p)
	default:
	}
}

// runSession is what an agent does with the run tools after
// agentSession (whose flow-execute call is the store's one run): a start
// refused before any run exists, a run started on device and followed to
// completed, the list filtered and paged, the events read from a cursor,
// a running run abandoned and then refused, finished runs resumed (which
// changes nothing). stateDir is the store, read beside the server to
// wait for a run's end.
func runSession(t *testing.T, cs *sdk.ClientSession, stateDir, device string) {
	t.Helper()
	root := writeProject(t, map[string]string{
		"press.yaml": "steps:\n  - launch: \"{{URL}}/app.html\"\n  - tap: Go now\n  - assert: { text: { in: { id: out }, equals: clicked 1 } }\n",
	})
	st, err := runs.OpenReader(stateDir)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()

	// A flow that does not exist: refused, no run.
	msg := toolError(t, cs, "start_run", map[string]any{"tool_args": map[string]any{"name": "nope", "project_root": root, "device": device}})
	if !strings.Contains(msg, "bad_request: tool_args: ") || !strings.Contains(msg, "nope") {
		t.Errorf("start_run of a flow that does not exist: got %q, want bad_request naming it", msg)
	}
	var before runs.Page
	decodeTool(t, cs, "list_runs", map[string]any{}, &before)
	if len(before.Runs) != 1 {
		t.Fatalf("runs after a refused start: got %d, want agentSession's one", len(before.Runs))
	}
	tools := before.Runs[0].ID

	// A run started, driven to completed on real Chromium.
	var started runs.Started
	decodeTool(t, cs, "start_run", map[string]any{"tool_args": map[string]any{"name": "press", "project_root": root, "device": device}, "labels": map[string]string{"suite": "mcp"}}, &started)
	if started.Status != runs.Running {
		t.Fatalf("start_run: got %+v, want running", started)
	}
	end, err := st.FollowEvents(context.Background(), started.Run, 0, func(runs.Event) error { return nil })
	if err != nil || end.Status.State != runs.Completed || end.Status.Outcome() != runs.Passed {
		t.Fatalf("the started run ended %+v (%v), want completed and passed", end, err)
	}
	var d runs.Detail
	decodeTool(t, cs, "get_run", map[string]any{"id": started.Run}, &d)
	if d.Source != "v1" || d.Labels["suite"] != "mcp" || len(d.Steps) != 3 || d.Status.Output == nil || d.Status.Output.Passed != 3 {
		t.Errorf("get_run of the started run: got %+v, want source v1, its label, 3 steps passed", d)
	}

	// The list: filters, and a page of one with the cursor to the next.
	for _, tc := range []struct {
		args       map[string]any
		want, next string
	}{
		{map[string]any{"label": []string{"suite:mcp"}}, started.Run, ""},
		{map[string]any{"status": "completed", "outcome": "passed"}, started.Run + " " + tools, ""},
		{map[string]any{"status": "running"}, "", ""},
		{map[string]any{"limit": 1}, started.Run, started.Run},
		{map[string]any{"limit": 1, "before": started.Run}, tools, ""},
	} {
		var p runs.Page
		decodeTool(t, cs, "list_runs", tc.args, &p)
		var ids []string
		for _, r := range p.Runs {
			ids = append(ids, r.ID)
		}
		if got := strings.Join(ids, " "); got != tc.want || p.NextBefore != tc.next {
			t.Errorf("list_runs %v: got [%s] next_before %q, want [%s] next_before %q", tc.args, got, p.NextBefore, tc.want, tc.next)
		}
	}

	// The events from a cursor: the rest of the log, and its end.
	var all, rest mcpserver.EventPage
	decodeTool(t, cs, "get_run_events", map[string]any{"id": started.Run}, &all)
	decodeTool(t, cs, "get_run_events", map[string]any{"id": started.Run, "from_seq": 2, "limit": 2}, &rest)
	if !all.End || len(all.Events) < 5 || all.Events[0].Event.Kind != runs.KindRunStarted || all.Events[len(all.Events)-1].Event.Kind != runs.KindRunCompleted {
		t.Fatalf("get_run_events: got %+v, want the whole log from RunStarted to RunCompleted, and the end", all)
	}
	if rest.End || len(rest.Events) != 2 || rest.Events[0].Seq != 2 || rest.NextSeq != 4 || rest.Status.State != runs.Completed ||
		string(mustJSON(t, rest.Events)) != string(mustJSON(t, all.Events[2:4])) {
		t.Errorf("get_run_events from 2, 2 of them: got %+v, want seqs 2 and 3, next_seq 4, not the end", rest)
	}

	// A running run abandoned, then refused; finished runs resumed.
	slow, _ := hangingProject(t)
	var hang runs.Started
	decodeTool(t, cs, "start_run", map[string]any{"tool_args": map[string]any{"name": "hang", "project_root": slow, "device": device}}, &hang)
	var rc runs.Receipt
	decodeTool(t, cs, "abandon_run", map[string]any{"id": hang.Run, "reason": "an agent stopped it"}, &rc)
	if rc.Run != hang.Run || !rc.Abandoned || rc.Status != (runs.Status{State: runs.Abandoned, Reason: "an agent stopped it"}) {
		t.Errorf("abandon_run: got %+v, want the receipt of the abandonment", rc)
	}
	if end, err := st.FollowEvents(context.Background(), hang.Run, 0, func(runs.Event) error { return nil }); err != nil || end.Status != rc.Status {
		t.Errorf("the abandoned run ended %+v (%v), want %+v", end, err, rc.Status)
	}
	if msg := toolError(t, cs, "abandon_run", map[string]any{"id": hang.Run}); !strings.Contains(msg, "wrong_state: ") {
		t.Errorf("abandon_run of a terminal run: got %q, want wrong_state", msg)
	}
	for _, tc := range []struct{ id, state string }{{started.Run, runs.Completed}, {hang.Run, runs.Abandoned}} {
		var out runs.Resumed
		decodeTool(t, cs, "resume_run", map[string]any{"id": tc.id}, &out)
		var status runs.Status
		if err := json.Unmarshal(out.Status, &status); err != nil || out.Outcome != tc.state || status.State != tc.state {
			t.Errorf("resume_run of a %s run: got %+v (%v)", tc.state, out, err)
		}
	}
}

// hangingProject is a project whose flow hang launches a page that does
// not answer until release (or the test's end): its run stays running
// until something stops it, or release lets it finish.
func hangingProject(t *testing.T) (root string, release func()) {
	t.Helper()
	released := make(chan struct{})
	var once sync.Once
	release = func() { once.Do(func() { close(released) }) }
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-released:
			fmt.Fprint(w, "<!doctype html><p>here at last</p>")
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(func() {
		release()
		slow.Close()
	})
	return writeProject(t, map[string]string{"hang.yaml": "steps:\n  - launch: \"{{SLOW}}/\"\n"}, "{{SLOW}}", slow.URL), release
}

// decodeTool calls name and decodes its JSON answer into out; a tool
// error fails the test.
func decodeTool(t *testing.T, cs *sdk.ClientSession, name string, args map[string]any, out any) {
	t.Helper()
	res := callTool(t, cs, name, args, nil)
	if err := json.Unmarshal([]byte(resultText(t, res)), out); err != nil {
		t.Fatalf("%s: %v in %s", name, err, resultText(t, res))
	}
}

// toolError calls name and returns the message of its tool error; an
// answer that is not one fails the test.
func toolError(t *testing.T, cs *sdk.ClientSession, name string, args map[string]any) string {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if !res.IsError {
		t.Fatalf("%s %v: got %s, want a tool error", name, args, resultText(t, res))
	}
	return resultText(t, res)
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
