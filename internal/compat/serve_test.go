package compat

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// served is a toolserver serve the test started.
type served struct {
	cmd    *exec.Cmd
	url    string // http://127.0.0.1:PORT
	stderr *watchedBuffer
	done   chan struct{} // closed when the process has exited
	client *http.Client
}

// watchedBuffer is a process's stderr: what it wrote so far, and a signal
// at each write, so that a wait for a line is woken by the line itself.
type watchedBuffer struct {
	mu    sync.Mutex
	buf   bytes.Buffer
	wrote chan struct{}
}

func (b *watchedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	select {
	case b.wrote <- struct{}{}:
	default:
	}
	return b.buf.Write(p)
}

func (b *watchedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// startTimeout bounds a serve's start: it opens its run store and binds;
// Chromium boots later, at the first call that needs a device.
const startTimeout = time.Minute

// listening is serve's start-up line, which names the address it bound.
var listening = regexp.MustCompile(`listening on (http://127\.0\.0\.1:\d+) `)

// startServe starts toolserver serve on a port the kernel picks and
// waits for its start-up line.
func startServe(t *testing.T, dir string, env []string, args ...string) *served {
	t.Helper()
	s := &served{
		stderr: &watchedBuffer{wrote: make(chan struct{}, 1)},
		done:   make(chan struct{}),
		// An event stream lasts as long as its run: the deadline is
		// generous for a loaded machine, never a wait for a state.
		client: &http.Client{Timeout: 2 * time.Minute, Transport: &http.Transport{DisableCompression: true}},
	}
	s.cmd = exec.Command(bin, append([]string{"serve", "--addr", "127.0.0.1:0"}, args...)...)
	s.cmd.Dir = dir
	s.cmd.Env = append(baseEnv(), env...)
	s.cmd.Stderr = s.stderr
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		s.cmd.Wait()
		close(s.done)
	}()
	t.Cleanup(func() {
		s.client.CloseIdleConnections()
		select {
		case <-s.done:
		default:
			s.cmd.Process.Kill()
			<-s.done
		}
	})
	deadline := time.After(startTimeout)
	for {
		if m := listening.FindStringSubmatch(s.stderr.String()); m != nil {
			s.url = m[1]
			return s
		}
		select {
		case <-s.stderr.wrote:
		case <-s.done:
			t.Fatalf("serve exited before it listened (%v):\n%s", s.cmd.ProcessState, s.stderr.String())
		case <-deadline:
			t.Fatalf("serve did not listen within %s:\n%s", startTimeout, s.stderr.String())
		}
	}
}

// stop stops the server as an orchestrator does (SIGTERM) and records
// its exit and everything it wrote on stderr, the request log included;
// sorted records the lines in sorted order, for a log whose order races.
func (s *served) stop(t *testing.T, name string, sorted bool) {
	t.Helper()
	s.client.CloseIdleConnections()
	if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-s.done:
	case <-time.After(time.Minute):
		t.Fatalf("serve did not stop within a minute of SIGTERM:\n%s", s.stderr.String())
	}
	var b strings.Builder
	fmt.Fprintf(&b, "$ toolserver %s\n", shellWords(s.cmd.Args[1:]))
	fmt.Fprintf(&b, "SIGTERM, exit %d\n", s.cmd.ProcessState.ExitCode())
	log := normalize(s.stderr.String())
	if sorted {
		lines := strings.SplitAfter(log, "\n")
		slices.Sort(lines)
		log = strings.Join(lines, "")
		b.WriteString("(lines sorted)\n")
	}
	section(&b, "stderr", log)
	golden(t, name, normalize(b.String()))
}

// waitLog waits until the server has logged text n times.
func (s *served) waitLog(t *testing.T, text string, n int) {
	t.Helper()
	deadline := time.After(time.Minute)
	for strings.Count(s.stderr.String(), text) < n {
		select {
		case <-s.stderr.wrote:
		case <-s.done:
			t.Fatalf("serve exited before it logged %s:\n%s", text, s.stderr.String())
		case <-deadline:
			t.Fatalf("serve did not log %s within a minute:\n%s", text, s.stderr.String())
		}
	}
}

// request is one HTTP request of an exchange.
type request struct {
	method, path string
	header       []string // "Key: value", in order
	body         string
}

// jsonPost is a POST of a JSON body.
func jsonPost(path, body string) request {
	return request{method: http.MethodPost, path: path, header: []string{"Content-Type: application/json"}, body: body}
}

// get is a GET with no body.
func get(path string, header ...string) request {
	return request{method: http.MethodGet, path: path, header: header}
}

// droppedHeaders are left out of a record: Date is the clock's, and
// Content-Length is the body's length, which the body records (and whose
// digits vary with the durations in it).
var droppedHeaders = []string{"Date", "Content-Length"}

// do sends r and records the exchange under name; it returns the
// response's headers and body for the exchanges that follow from it.
func (s *served) do(t *testing.T, name string, r request) (http.Header, string) {
	t.Helper()
	var body io.Reader
	if r.body != "" {
		body = strings.NewReader(r.body)
	}
	req, err := http.NewRequest(r.method, s.url+r.path, body)
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range r.header {
		k, v, _ := strings.Cut(h, ": ")
		req.Header.Set(k, v)
	}
	resp, err := s.client.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", r.method, r.path, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s %s: reading the body: %v", r.method, r.path, err)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s\n", r.method, r.path)
	for _, h := range r.header {
		fmt.Fprintln(&b, h)
	}
	section(&b, "request body", r.body)
	b.WriteString("-- response --\n")
	fmt.Fprintln(&b, resp.Status)
	keys := make([]string, 0, len(resp.Header))
	for k := range resp.Header {
		if !slices.Contains(droppedHeaders, k) {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	for _, k := range keys {
		for _, v := range resp.Header[k] {
			fmt.Fprintf(&b, "%s: %s\n", k, v)
		}
	}
	section(&b, "response body", string(data))
	golden(t, name, normalize(b.String()))
	return resp.Header, string(data)
}

// Run ids the test chooses, so that its records name them as they are.
const (
	runPassed = fixedIDPrefix + "000000000001"
	runFailed = fixedIDPrefix + "000000000002"
)

// TestServe holds one serve with a run store to its answers over HTTP
// (/tools, /v1, /mcp) and to the CLI's commands over it, in order: the
// refusals first, on an empty store; then runs started over /tools and
// /v1, followed, read, replayed, abandoned and resumed; MCP's session;
// the CLI over --link and over --state-dir; the log on stop.
func TestServe(t *testing.T) {
	t.Parallel()
	work := workDir(t, "serve", "")
	project := filepath.Join(work, "project")
	copyProject(t, "shop", project)
	// A flow whose assertion fails, for a run that ends failed.
	write(t, filepath.Join(project, ".argent", "flows", "fails.yaml"), `steps:
  - launch: ../../site/index.html
  - assert: { text: { in: { id: email }, equals: nobody@example.com } }
`)
	invalid := filepath.Join(work, "invalid")
	copyProject(t, "invalid", invalid)
	state := filepath.Join(work, "state")
	s := startServe(t, work, nil, "--state-dir", state)
	h := func(name string, r request) (http.Header, string) {
		t.Helper()
		return s.do(t, "serve/"+name, r)
	}
	c := func(name string, args ...string) result {
		t.Helper()
		return cli(t, "serve/"+name, exchange{args: args, dir: work})
	}
	link := func(name string, args ...string) result {
		t.Helper()
		return cli(t, "serve/"+name, exchange{args: append(args, "--link", s.url), dir: work})
	}
	args := func(name string, extra string) string {
		return fmt.Sprintf(`{"project_root":%q,"name":%q%s}`, project, name, extra)
	}

	// The server's own answers.
	h("healthz", get("/healthz"))
	h("readyz", get("/readyz"))
	h("tools", get("/tools"))
	h("capabilities", get("/v1/capabilities"))
	h("no-route", get("/nope"))
	h("method-not-allowed", request{method: http.MethodDelete, path: "/tools"})
	h("artifact-unknown", get("/artifacts/nope"))
	h("dashboard-off", get("/dashboard"))

	// The run store, empty.
	c("runs-list-empty", "runs", "list", "--state-dir", "state")
	c("runs-list-empty-json", "runs", "list", "--state-dir", "state", "--json")
	c("runs-list-empty-yaml", "runs", "list", "--state-dir", "state", "-o", "yaml")
	c("runs-get-unknown", "runs", "get", unknownRun, "--state-dir", "state")
	c("runs-get-not-a-uuid", "runs", "get", "nope", "--state-dir", "state")
	c("runs-abandon-held-store", "runs", "abandon", unknownRun, "--dry-run", "--state-dir", "state")
	link("runs-list-empty-link", "runs", "list")
	link("runs-get-unknown-link", "runs", "get", unknownRun)
	link("runs-resume-dry-run-unknown", "runs", "resume", unknownRun, "--dry-run")
	link("runs-abandon-dry-run-unknown", "runs", "abandon", unknownRun, "--dry-run")
	link("runs-abandon-unknown", "runs", "abandon", unknownRun)
	link("runs-replay-unknown", "runs", "replay", unknownRun)
	link("runs-events-unknown", "runs", "events", unknownRun)

	// /v1/runs refused.
	h("runs-empty", get("/v1/runs"))
	h("runs-filtered", get("/v1/runs?status=completed&outcome=passed&label=ci:yes&limit=5"))
	h("runs-bad-cursor", get("/v1/runs?before=xyz"))
	h("runs-unknown-cursor", get("/v1/runs?before="+unknownRun))
	h("runs-bad-status", get("/v1/runs?status=bogus"))
	h("runs-bad-outcome", get("/v1/runs?outcome=bogus"))
	h("runs-bad-label", get("/v1/runs?label=bad"))
	h("runs-bad-limit", get("/v1/runs?limit=abc"))
	h("runs-limit-too-big", get("/v1/runs?limit=100000"))
	h("run-not-a-uuid", get("/v1/runs/nope"))
	h("run-unknown", get("/v1/runs/"+unknownRun))
	h("run-unknown-events", get("/v1/runs/"+unknownRun+"/events"))
	h("run-unknown-replay", get("/v1/runs/"+unknownRun+"/replay"))
	h("run-unknown-file", get("/v1/runs/"+unknownRun+"/files/x.png"))
	h("run-unknown-abandon", request{method: http.MethodPost, path: "/v1/runs/" + unknownRun + "/abandon"})
	h("run-unknown-cancel", request{method: http.MethodPost, path: "/v1/runs/" + unknownRun + "/cancel"})
	h("run-unknown-resume", request{method: http.MethodPost, path: "/v1/runs/" + unknownRun + "/resume"})
	h("start-bad-json", jsonPost("/v1/runs", `{bad`))
	h("start-empty", jsonPost("/v1/runs", `{}`))
	h("start-unknown-field", jsonPost("/v1/runs", `{"tool":"nope","tool_args":{}}`))
	h("start-not-json", request{method: http.MethodPost, path: "/v1/runs", header: []string{"Content-Type: text/plain"}, body: `{}`})
	h("start-no-project-root", jsonPost("/v1/runs", `{"tool_args":{"name":"checkout"}}`))
	h("start-bad-types", jsonPost("/v1/runs", `{"tool_args":{"project_root":5,"name":true}}`))
	h("start-unknown-arg", jsonPost("/v1/runs", `{"tool_args":{"project_root":"/x","name":"x","bogus":1}}`))
	h("start-relative-root", jsonPost("/v1/runs", `{"tool_args":{"project_root":"relative","name":"x"}}`))
	h("start-unknown-flow", jsonPost("/v1/runs", `{"tool_args":`+args("nope", "")+`}`))
	h("start-parse-error", jsonPost("/v1/runs", `{"tool_args":{"project_root":`+fmt.Sprintf("%q", invalid)+`,"name":"broken"}}`))
	h("start-label-value-too-long", jsonPost("/v1/runs", `{"tool_args":`+args("checkout", "")+`,"labels":{"k":"`+strings.Repeat("v", 300)+`"}}`))
	h("start-label-key-too-long", jsonPost("/v1/runs", `{"tool_args":`+args("checkout", "")+`,"labels":{"`+strings.Repeat("k", 300)+`":"v"}}`))
	h("start-bad-run-id", jsonPost("/v1/runs", `{"tool_args":`+args("checkout", "")+`,"run_id":"bad"}`))

	// /tools refused.
	h("tool-unknown", jsonPost("/tools/nope", `{}`))
	h("tool-not-json", request{method: http.MethodPost, path: "/tools/list-devices", header: []string{"Content-Type: text/plain"}, body: `{}`})
	h("tool-bad-json", jsonPost("/tools/list-devices", `{`))
	h("flow-execute-no-args", jsonPost("/tools/flow-execute", `{}`))
	h("flow-execute-bad-types", jsonPost("/tools/flow-execute", `{"project_root":5,"name":true}`))
	h("flow-execute-unknown-arg", jsonPost("/tools/flow-execute", `{"project_root":"/x","bogus":1}`))
	h("flow-execute-unknown-flow", jsonPost("/tools/flow-execute", args("nope", "")))
	h("flow-execute-parse-error", jsonPost("/tools/flow-execute", fmt.Sprintf(`{"project_root":%q,"name":"broken"}`, invalid)))
	h("screenshot-bad-device", jsonPost("/tools/screenshot", `{"device":"bad"}`))

	// Runs: the baselines made by a call of /tools (a run the server
	// names), then compared in a stream of progress.
	h("flow-execute-update-baselines", jsonPost("/tools/flow-execute", args("checkout", `,"updateBaselines":true`)))
	h("flow-execute-stream", request{method: http.MethodPost, path: "/tools/flow-execute",
		header: []string{"Content-Type: application/json", "Accept: application/x-ndjson"}, body: args("checkout", "")})
	h("list-devices", jsonPost("/tools/list-devices", `{}`))

	// A run started on /v1 with an id of the test's, followed to its end.
	h("start-passed", jsonPost("/v1/runs", `{"tool_args":`+args("checkout", "")+`,"labels":{"ci":"yes"},"run_id":"`+runPassed+`"}`))
	h("events-passed", get("/v1/runs/"+runPassed+"/events"))
	h("start-same-id", jsonPost("/v1/runs", `{"tool_args":`+args("checkout", "")+`,"run_id":"`+runPassed+`"}`))
	h("get-passed", get("/v1/runs/"+runPassed))
	h("replay-passed", get("/v1/runs/"+runPassed+"/replay"))
	h("events-passed-from-seq", get("/v1/runs/"+runPassed+"/events?from_seq=15"))
	h("events-passed-last-event-id", get("/v1/runs/"+runPassed+"/events", "Last-Event-ID: 15"))
	h("abandon-passed", request{method: http.MethodPost, path: "/v1/runs/" + runPassed + "/abandon"})
	h("resume-passed", request{method: http.MethodPost, path: "/v1/runs/" + runPassed + "/resume"})
	h("start-failed", jsonPost("/v1/runs", `{"tool_args":`+args("fails", "")+`,"labels":{"ci":"no"},"run_id":"`+runFailed+`"}`))
	h("events-failed", get("/v1/runs/"+runFailed+"/events"))
	h("get-failed", get("/v1/runs/"+runFailed))
	h("runs-all", get("/v1/runs"))
	h("runs-label", get("/v1/runs?label=ci:yes"))
	h("runs-failed", get("/v1/runs?outcome=failed"))
	h("runs-page", get("/v1/runs?limit=1&before="+runFailed))

	// MCP over streamable HTTP: a session, its tools, the run tools.
	mcp := func(name, session, body string) (http.Header, string) {
		t.Helper()
		hdr := []string{"Content-Type: application/json", "Accept: application/json, text/event-stream"}
		if session != "" {
			hdr = append(hdr, "Mcp-Session-Id: "+session, "Mcp-Protocol-Version: 2025-06-18")
		}
		return h("mcp-"+name, request{method: http.MethodPost, path: "/mcp", header: hdr, body: body})
	}
	hdr, _ := mcp("initialize", "", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"compat","version":"1"}}}`)
	session := hdr.Get("Mcp-Session-Id")
	if session == "" {
		t.Fatal("the MCP initialize answered no Mcp-Session-Id")
	}
	mcp("initialized", session, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	mcp("tools-list", session, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
	mcp("list-runs", session, `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"list_runs","arguments":{"limit":1}}}`)
	mcp("get-run", session, `{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"get_run","arguments":{"id":"`+runFailed+`"}}}`)
	mcp("get-run-unknown", session, `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"get_run","arguments":{"id":"`+unknownRun+`"}}}`)
	mcp("abandon-run-unknown", session, `{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"abandon_run","arguments":{"id":"`+unknownRun+`"}}}`)
	mcp("start-run-bad-args", session, `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"start_run","arguments":{"tool_args":{"project_root":5}}}}`)
	mcp("flow-execute-no-args", session, `{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"flow-execute","arguments":{}}}`)
	mcp("unknown-method", session, `{"jsonrpc":"2.0","id":9,"method":"nope"}`)
	mcp("no-session", "", `{"jsonrpc":"2.0","id":10,"method":"tools/list"}`)
	mcp("not-json-rpc", session, `{}`)
	h("mcp-delete", request{method: http.MethodDelete, path: "/mcp", header: []string{"Mcp-Session-Id: " + session}})

	// The CLI over the link, and over the store directly.
	link("tools-link", "tools")
	link("call-list-devices-link", "call", "list-devices")
	link("runs-list-link", "runs", "list")
	link("runs-list-link-json", "runs", "list", "--json")
	link("runs-list-link-failed", "runs", "list", "--outcome", "failed")
	link("runs-get-link", "runs", "get", runPassed)
	link("runs-get-link-json", "runs", "get", runFailed, "-o", "json")
	link("runs-events-link", "runs", "events", runPassed)
	link("runs-events-link-failed", "runs", "events", runFailed)
	link("runs-replay-link", "runs", "replay", runPassed)
	link("runs-resume-dry-run-link", "runs", "resume", runPassed, "--dry-run")
	link("runs-abandon-dry-run-link", "runs", "abandon", runFailed, "--dry-run")
	link("runs-abandon-ended-link", "runs", "abandon", runFailed, "--reason", "compat")
	c("runs-list-state-dir", "runs", "list", "--state-dir", "state")
	c("runs-get-state-dir", "runs", "get", runPassed, "--state-dir", "state")
	c("runs-replay-state-dir", "runs", "replay", runFailed, "--state-dir", "state")
	c("runs-events-state-dir", "runs", "events", runPassed, "--state-dir", "state")
	linkRun := func(name string, args ...string) {
		t.Helper()
		cli(t, "serve/"+name, exchange{args: append(args, "--link", s.url), dir: project})
	}
	linkRun("flow-run-link", "flow", "run", "checkout")
	linkRun("flow-run-link-json", "flow", "run", "checkout", "--json")
	linkRun("flow-run-link-expose-bad-port", "flow", "run", "checkout", "--expose", "localhost:99999")
	linkRun("flow-run-link-expose-not-loopback", "flow", "run", "checkout", "--expose", "example.com:80")
	linkRun("flow-run-link-expose-url", "flow", "run", "checkout", "--expose", "http://localhost:5173")
	linkRun("flow-run-link-expose-only-alone", "flow", "run", "checkout", "--expose-only")
	linkRun("flow-run-link-parse-error", "flow", "run", filepath.Join(invalid, ".argent", "flows", "broken.yaml"))
	linkRun("flow-run-detach-dry-run", "flow", "run", "checkout", "--detach", "--dry-run", "--label", "ci:yes")
	linkRun("flow-run-detach-bad-label", "flow", "run", "checkout", "--detach", "--label", "nocolon")
	linkRun("call-flow-execute-dry-run-link", "call", "flow-execute", "--dry-run", "--args", args("checkout", ""))

	s.stop(t, "serve/stop", false)
}

// TestServeTunnel runs the example over the link with its files served
// through a tunnel (flow run --expose): the baselines made on the
// client's side from the server's captures, then compared.
func TestServeTunnel(t *testing.T) {
	t.Parallel()
	work := workDir(t, "serve-tunnel", "")
	project := filepath.Join(work, "project")
	copyProject(t, "shop", project)
	s := startServe(t, work, nil, "--state-dir", "")
	tunnels := 0
	run := func(name string, args ...string) {
		t.Helper()
		cli(t, "serve-tunnel/"+name, exchange{args: append(args, "--link", s.url), dir: project})
		// The tunnel's end is logged when the server sees it close,
		// after the client has gone.
		tunnels++
		s.waitLog(t, `msg="tunnel closed"`, tunnels)
	}
	run("update-baselines", "flow", "run", "checkout", "--expose", "localhost:", "--update-baselines")
	run("compare", "flow", "run", "checkout", "--expose", "localhost", "--expose-only", "-o", "json")
	// The tunnel's lines race the requests that follow its 101 (the
	// client sends them as soon as it reads it), so this log is compared
	// as a set of lines.
	s.stop(t, "serve-tunnel/stop", true)
}

// TestServeAuth holds a serve with a bearer token to its refusals.
func TestServeAuth(t *testing.T) {
	t.Parallel()
	work := workDir(t, "serve-auth", "")
	s := startServe(t, work, []string{"COMPAT_TOKEN=compat-secret"}, "--auth-token", "COMPAT_TOKEN", "--state-dir", "")
	h := func(name string, r request) {
		t.Helper()
		s.do(t, "serve-auth/"+name, r)
	}
	h("healthz-no-token", get("/healthz"))
	h("tools-no-token", get("/tools"))
	h("tools-wrong-token", get("/tools", "Authorization: Bearer wrong"))
	h("tools-not-bearer", get("/tools", "Authorization: Basic Y29tcGF0OnNlY3JldA=="))
	h("capabilities-token", get("/v1/capabilities", "Authorization: Bearer compat-secret"))
	h("runs-no-store", get("/v1/runs", "Authorization: Bearer compat-secret"))
	h("start-no-store", request{method: http.MethodPost, path: "/v1/runs", header: []string{"Authorization: Bearer compat-secret", "Content-Type: application/json"}, body: `{"tool_args":{"project_root":"/x","name":"x"}}`})
	h("mcp-no-token", jsonPost("/mcp", `{"jsonrpc":"2.0","id":1,"method":"initialize"}`))
	h("cross-site", request{method: http.MethodPost, path: "/tools/list-devices", header: []string{"Authorization: Bearer compat-secret", "Content-Type: application/json", "Origin: https://evil.example", "Sec-Fetch-Site: cross-site"}, body: `{}`})
	cli(t, "serve-auth/tools-link-no-token", exchange{args: []string{"tools", "--link", s.url}, dir: work})
	cli(t, "serve-auth/tools-link-wrong-token", exchange{args: []string{"tools", "--link", s.url}, dir: work, env: []string{"ARGENT_AUTH_TOKEN=wrong"}})
	cli(t, "serve-auth/runs-list-link-token", exchange{args: []string{"runs", "list", "--link", s.url}, dir: work, env: []string{"ARGENT_AUTH_TOKEN=compat-secret"}})
	cli(t, "serve-auth/healthcheck", exchange{args: []string{"healthcheck", "--addr", strings.TrimPrefix(s.url, "http://")}, dir: work, env: []string{"ARGENT_AUTH_TOKEN=compat-secret"}})
	s.stop(t, "serve-auth/stop", false)
}
