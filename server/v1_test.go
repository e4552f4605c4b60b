package server_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolserver/toolserver/control"
	"github.com/toolserver/toolserver/device/cdp/cdptest"
	"github.com/toolserver/toolserver/runs"
	v1 "github.com/toolserver/toolserver/runs/v1"
	"github.com/toolserver/toolserver/server"
	"github.com/toolserver/toolserver/store"
	"github.com/toolserver/toolserver/tool"
	"github.com/toolserver/toolserver/tool/flowtool"
	"github.com/toolserver/toolserver/tool/recordtool"
)

// v1Rig is a server with the flow tools and a run store, and a page that
// holds its response until the test releases it (a run that waits where
// the test wants it to).
type v1Rig struct {
	url, token string
	store      *runs.Store
	srv        *server.Server
	plane      *control.Plane
	slowURL    string
	release    func()
}

func newV1Rig(t *testing.T, token, commit string) *v1Rig {
	t.Helper()
	st, err := runs.Open(t.TempDir(), 0)
	if err != nil {
		t.Fatal(err)
	}
	return newV1RigOn(t, token, commit, st)
}

// newV1RigOn is a v1Rig over the run store st, which it closes.
func newV1RigOn(t *testing.T, token, commit string, st *runs.Store) *v1Rig {
	t.Helper()
	dir := t.TempDir()
	arts, err := store.NewArtifacts(dir+"/artifacts", 100, 1<<30)
	if err != nil {
		t.Fatal(err)
	}
	reg := tool.NewRegistry()
	(&flowtool.Tools{Pool: cdptest.Pool(t), Artifacts: arts, TempDir: dir}).Register(reg)
	(&recordtool.Tools{Pool: cdptest.Pool(t), TempDir: dir}).Register(reg)
	r := &v1Rig{token: token, store: st, plane: control.New(control.Config{Runs: st, Tools: reg, TempDir: dir})}
	r.srv = server.New(server.Config{Addr: "127.0.0.1:0", Token: token, Tools: reg, Artifacts: arts, TempDir: dir, Version: "1.2.3", Commit: commit, Runs: st, Plane: r.plane})
	hs := httptest.NewServer(r.srv.Handler())
	r.url = hs.URL
	released := make(chan struct{})
	var once sync.Once
	r.release = func() { once.Do(func() { close(released) }) }
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		select {
		case <-released:
		case <-req.Context().Done():
			return
		}
		fmt.Fprint(w, `<!doctype html><p>finally here</p>`)
	}))
	r.slowURL = slow.URL
	t.Cleanup(func() {
		r.release()
		slow.Close()
		hs.Close()
		r.plane.Wait()
		st.Close()
	})
	return r
}

func (r *v1Rig) do(t *testing.T, method, path, body string, hdr ...string) (int, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, r.url+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if r.token != "" {
		req.Header.Set("Authorization", "Bearer "+r.token)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}

// start starts a run of flow name in root on device and returns its id.
func (r *v1Rig) start(t *testing.T, root, name, device, extra string) string {
	t.Helper()
	code, b := r.do(t, "POST", "/v1/runs", fmt.Sprintf(`{"tool_args":{"name":%q,"project_root":%q,"device":%q}%s}`, name, root, device, extra))
	if code != http.StatusCreated {
		t.Fatalf("POST /v1/runs: %d %s", code, b)
	}
	var out struct{ Run, Status string }
	json.Unmarshal(b, &out)
	if out.Status != "running" || !runs.ValidID(out.Run) {
		t.Fatalf("POST /v1/runs: %s", b)
	}
	return out.Run
}

// waitStatus waits until the run's status is final, and returns it.
func (r *v1Rig) waitStatus(t *testing.T, id string) runs.Status {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		changed := r.store.Changed()
		run, err := r.store.Run(t.Context(), id)
		if err != nil {
			t.Fatal(err)
		}
		if runs.Terminal(run.Status.State) {
			return run.Status
		}
		select {
		case <-changed:
		case <-time.After(time.Until(deadline)):
			t.Fatalf("run %s still %+v after a minute", id, run.Status)
		}
	}
}

// quick starts a run of a flow that needs no device (one echo step) and
// waits for its end; its id.
func (r *v1Rig) quick(t *testing.T, extra string) string {
	t.Helper()
	root := t.TempDir()
	writeFlow(t, root, "quick", "steps:\n  - echo: hi\n")
	code, b := r.do(t, "POST", "/v1/runs", fmt.Sprintf(`{"tool_args":{"name":"quick","project_root":%q}%s}`, root, extra))
	var st runs.Started
	if err := json.Unmarshal(b, &st); code != http.StatusCreated || err != nil {
		t.Fatalf("POST /v1/runs: %d %s", code, b)
	}
	if s := r.waitStatus(t, st.Run); s.Outcome() != runs.Passed {
		t.Fatalf("the quick run: %+v", s)
	}
	return st.Run
}

// sseFrame is one frame of an event stream.
type sseFrame struct {
	event, id string
	data      string
}

// readFrames reads frames until the stream ends or stop says to stop.
func readFrames(t *testing.T, body io.Reader, stop func(sseFrame) bool) []sseFrame {
	t.Helper()
	sc := bufio.NewScanner(body)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	var out []sseFrame
	var f sseFrame
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			if f.data == "" && f.event == "" {
				continue
			}
			out = append(out, f)
			if stop != nil && stop(f) {
				return out
			}
			f = sseFrame{}
		case strings.HasPrefix(line, "event: "):
			f.event = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "id: "):
			f.id = strings.TrimPrefix(line, "id: ")
		case strings.HasPrefix(line, "data: "):
			f.data = strings.TrimPrefix(line, "data: ")
		}
	}
	return out
}

func (r *v1Rig) stream(t *testing.T, path string, hdr ...string) (*http.Response, context.CancelFunc) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, "GET", r.url+path, nil)
	if r.token != "" {
		req.Header.Set("Authorization", "Bearer "+r.token)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		cancel()
		t.Fatalf("GET %s: %d %s", path, resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	return resp, cancel
}

// TestV1RunOutlivesItsClientAndStreamsResume: a run started by POST
// /v1/runs goes on with nobody connected; its event stream, dropped mid-
// run and resumed with Last-Event-ID, and again with from_seq, yields every
// event exactly once and in order, then the end frame.
func TestV1RunOutlivesItsClientAndStreamsResume(t *testing.T) {
	t.Parallel()
	r := newV1Rig(t, "s3cret", "")
	root := t.TempDir()
	writeFlow(t, root, "outlive", `steps:
  - launch: "{{URL}}/app.html"
  - tap: Go now
  - assert: { text: { in: { id: out }, equals: clicked 1 } }
  - launch: "`+r.slowURL+`/slow"
  - await: { visible: { text: finally here } }
`)
	device := "chromium-cdp-901x601"
	cdptest.Claim(t, device)
	t.Cleanup(func() { cdptest.Stop(t, device) })
	id := r.start(t, root, "outlive", device, `,"labels":{"suite":"v1","build":"7"}`)

	// Follow until the run blocks on the slow page (after the assert,
	// seq 3), then drop the connection.
	resp, cancel := r.stream(t, "/v1/runs/"+id+"/events")
	first := readFrames(t, resp.Body, func(f sseFrame) bool { return f.id == "3" })
	cancel()
	resp.Body.Close()
	// Nobody is connected now; the run goes on once the page answers.
	r.release()
	if s := r.waitStatus(t, id); s.Outcome() != runs.Passed {
		d, _ := r.store.Get(t.Context(), id)
		t.Fatalf("status %+v, want completed and passed: %+v", s, d)
	}
	resp2, cancel2 := r.stream(t, "/v1/runs/"+id+"/events", "Last-Event-ID", "3")
	rest := readFrames(t, resp2.Body, nil)
	cancel2()
	resp2.Body.Close()

	all := append(first, rest...)
	end := all[len(all)-1]
	var endFrame runs.EndFrame
	if json.Unmarshal([]byte(end.data), &endFrame); end.event != "end" || endFrame.Status.State != runs.Completed || endFrame.Status.Outcome() != runs.Passed || endFrame.Detached {
		t.Fatalf("the last frame: %+v, want the end frame, completed and ok", end)
	}
	var kinds []string
	for i, f := range all[:len(all)-1] {
		var e runs.Event
		if err := json.Unmarshal([]byte(f.data), &e); err != nil {
			t.Fatalf("frame %d: %v", i, err)
		}
		if f.event != "" || f.id != fmt.Sprint(i) || e.Seq != int64(i) || e.RunID != id || e.RecordedAt.IsZero() || e.SchemaVersion != 1 || !strings.Contains(f.data, `"schema_version":1`) {
			t.Fatalf("frame %d: %+v (seq %d), want id %d, no event field", i, f, e.Seq, i)
		}
		kinds = append(kinds, e.Event.Kind)
	}
	if got := strings.Join(kinds, " "); got != "RunStarted StepCompleted StepCompleted StepCompleted StepCompleted StepCompleted RunCompleted" {
		t.Errorf("events: %q", got)
	}
	// from_seq, after the end: the tail from 2 and the end frame.
	resp3, cancel3 := r.stream(t, "/v1/runs/"+id+"/events?from_seq=2")
	tail := readFrames(t, resp3.Body, nil)
	cancel3()
	resp3.Body.Close()
	if len(tail) != len(all)-2 || tail[0].id != "2" || tail[len(tail)-1].event != "end" {
		t.Errorf("from_seq=2: %d frames from %q, want %d from 2", len(tail), tail[0].id, len(all)-2)
	}

	// The run in the list, with its labels; the filters; get.
	code, b := r.do(t, "GET", "/v1/runs?status=completed&outcome=passed&label=suite:v1&label=build:7", "")
	var list struct{ Runs []runs.Run }
	json.Unmarshal(b, &list)
	if code != 200 || len(list.Runs) != 1 || list.Runs[0].ID != id || list.Runs[0].Flow != "outlive" || list.Runs[0].Device != device || list.Runs[0].Labels["suite"] != "v1" {
		t.Fatalf("list: %d %s", code, b)
	}
	if _, b := r.do(t, "GET", "/v1/runs?label=suite:other", ""); !strings.Contains(string(b), `"runs":[]`) {
		t.Errorf("a label that matches nothing: %s", b)
	}
	code, b = r.do(t, "GET", "/v1/runs/"+id, "")
	var d runs.Detail
	json.Unmarshal(b, &d)
	if code != 200 || len(d.Steps) != 5 || d.Status.Output == nil || d.Status.Output.Passed != 5 || d.StepCount != 5 || d.Outcome != runs.Passed {
		t.Fatalf("get: %d %s", code, b)
	}
}

// TestV1Abandon: a running run is abandoned with a reason: 200 with the
// receipt, its stream ends abandoned; abandoning it again is 409
// wrong_state; cancel is the same verb.
func TestV1Abandon(t *testing.T) {
	t.Parallel()
	r := newV1Rig(t, "", "")
	root := t.TempDir()
	writeFlow(t, root, "held", `steps:
  - launch: "`+r.slowURL+`/slow"
  - echo: never
`)
	device := "chromium-cdp-902x602"
	cdptest.Claim(t, device)
	t.Cleanup(func() { cdptest.Stop(t, device) })
	id := r.start(t, root, "held", device, "")
	resp, cancel := r.stream(t, "/v1/runs/"+id+"/events")
	defer cancel()
	code, b := r.do(t, "POST", "/v1/runs/"+id+"/abandon", `{"reason":"not worth it"}`)
	var rc runs.Receipt
	if json.Unmarshal(b, &rc); code != http.StatusOK || rc.Run != id || !rc.Abandoned || rc.AppendedSeq < 1 || rc.Status != (runs.Status{State: runs.Abandoned, Reason: "not worth it"}) {
		t.Fatalf("abandon: %d %s", code, b)
	}
	frames := readFrames(t, resp.Body, func(f sseFrame) bool { return f.event == "end" })
	if last := frames[len(frames)-1]; last.event != "end" || last.data != `{"status":{"state":"abandoned","reason":"not worth it"}}` || frames[len(frames)-2].id != fmt.Sprint(rc.AppendedSeq) {
		t.Errorf("the stream's last frames: %+v", frames[max(0, len(frames)-2):])
	}
	if s := r.waitStatus(t, id); s.State != runs.Abandoned {
		t.Fatalf("status %+v, want abandoned", s)
	}
	r.plane.Wait() // the stopped run lets go of its device
	code, b = r.do(t, "POST", "/v1/runs/"+id+"/abandon", "")
	if code != http.StatusConflict || !strings.Contains(string(b), `"code":"wrong_state"`) {
		t.Errorf("abandon an ended run: %d %s", code, b)
	}
	// cancel, the alias: the same receipt, with its own reason.
	id = r.start(t, root, "held", device, "")
	code, b = r.do(t, "POST", "/v1/runs/"+id+"/cancel", "")
	if code != http.StatusOK || !strings.Contains(string(b), `"status":{"state":"abandoned","reason":"cancelled (POST /v1/runs/{id}/cancel)"}`) {
		t.Errorf("cancel: %d %s", code, b)
	}
}

// TestV1Errors: every error code of the control plane, in its envelope.
func TestV1Errors(t *testing.T) {
	t.Parallel()
	r := newV1Rig(t, "tok", "")
	id := "0b6f1f4e-3c1a-4c8e-9d2f-6a7b8c9d0e1f"
	many := map[string]string{}
	for i := range 17 {
		many[fmt.Sprint("k", i)] = "v"
	}
	manyJSON, _ := json.Marshal(many)
	// A run to conflict with and to find ended.
	r.quick(t, `,"run_id":"`+id+`"`)
	root := t.TempDir()
	writeFlow(t, root, "quick", "steps:\n  - echo: hi\n")
	writeFlow(t, root, "broken", "steps:\n  - click: x\n")
	quickArgs := fmt.Sprintf(`{"name":"quick","project_root":%q}`, root)
	for _, tc := range []struct {
		name, method, path, body string
		hdr                      []string
		status                   int
		code                     string
	}{
		{"no token", "GET", "/v1/runs", "", []string{"Authorization", ""}, 401, "unauthorized"},
		{"wrong token", "GET", "/v1/capabilities", "", []string{"Authorization", "Bearer nope"}, 401, "unauthorized"},
		{"bad json", "POST", "/v1/runs", `[1]`, nil, 400, "bad_request"},
		{"no tool_args", "POST", "/v1/runs", `{"labels":{}}`, nil, 400, "bad_request"},
		{"unknown field", "POST", "/v1/runs", `{"tool_args":{},"agent":"x"}`, nil, 400, "bad_request"},
		{"17 labels", "POST", "/v1/runs", `{"tool_args":{},"labels":` + string(manyJSON) + `}`, nil, 400, "bad_request"},
		{"long label value", "POST", "/v1/runs", `{"tool_args":{},"labels":{"k":"` + strings.Repeat("v", 257) + `"}}`, nil, 400, "bad_request"},
		{"bad run id", "POST", "/v1/runs", `{"tool_args":{},"run_id":"42"}`, nil, 400, "bad_request"},
		{"bad status", "GET", "/v1/runs?status=happy", "", nil, 400, "bad_request"},
		{"bad limit", "GET", "/v1/runs?limit=0", "", nil, 400, "bad_request"},
		{"bad cursor", "GET", "/v1/runs/" + id + "/events", "", []string{"Last-Event-ID", "x"}, 400, "bad_request"},
		{"used run id", "POST", "/v1/runs", `{"tool_args":` + quickArgs + `,"run_id":"` + id + `"}`, nil, 409, "run_exists"},
		{"a flow that does not exist", "POST", "/v1/runs", `{"tool_args":{"name":"none","project_root":"/nonexistent"}}`, nil, 400, "bad_request"},
		{"a flow that does not parse", "POST", "/v1/runs", `{"tool_args":{"name":"broken","project_root":"` + root + `"}}`, nil, 400, "bad_request"},
		{"a bad device id", "POST", "/v1/runs", `{"tool_args":{"name":"quick","project_root":"` + root + `","device":"iphone"}}`, nil, 400, "bad_request"},
		{"another platform", "POST", "/v1/runs", `{"tool_args":{"name":"quick","project_root":"` + root + `","platform":"ios"}}`, nil, 400, "bad_request"},
		{"bad outcome", "GET", "/v1/runs?outcome=errored", "", nil, 400, "bad_request"},
		{"abandon an ended run", "POST", "/v1/runs/" + id + "/abandon", "", nil, 409, "wrong_state"},
		{"abandon with an unknown field", "POST", "/v1/runs/" + id + "/abandon", `{"why":"x"}`, nil, 400, "bad_request"},
		{"abandon with a long reason", "POST", "/v1/runs/6b6f1f4e-3c1a-4c8e-9d2f-6a7b8c9d0e1f/abandon", `{"reason":"` + strings.Repeat("r", 2049) + `"}`, nil, 400, "bad_request"},
		{"abandon an unknown run", "POST", "/v1/runs/6b6f1f4e-3c1a-4c8e-9d2f-6a7b8c9d0e1f/abandon", "", nil, 404, "unknown_run"},
		{"resume an unknown run", "POST", "/v1/runs/6b6f1f4e-3c1a-4c8e-9d2f-6a7b8c9d0e1f/resume", "", nil, 404, "unknown_run"},
		{"replay an unknown run", "GET", "/v1/runs/6b6f1f4e-3c1a-4c8e-9d2f-6a7b8c9d0e1f/replay", "", nil, 404, "unknown_run"},
		{"resume a malformed run id", "POST", "/v1/runs/not-a-uuid/resume", "", nil, 400, "bad_request"},
		{"unknown run", "GET", "/v1/runs/6b6f1f4e-3c1a-4c8e-9d2f-6a7b8c9d0e1f", "", nil, 404, "unknown_run"},
		{"events of an unknown run", "GET", "/v1/runs/6b6f1f4e-3c1a-4c8e-9d2f-6a7b8c9d0e1f/events", "", nil, 404, "unknown_run"},
		{"cancel an ended run", "POST", "/v1/runs/" + id + "/cancel", "", nil, 409, "wrong_state"},
		{"too large", "POST", "/v1/runs", overCap(`{"tool_args":{"x":"`, `"}}`), nil, 413, "payload_too_large"},
		{"no route", "GET", "/v1/nothing", "", nil, 404, "not_found"},
		{"another origin", "GET", "/v1/runs", "", []string{"Origin", "http://evil.example"}, 403, "forbidden"},
		{"a method the route does not take", "DELETE", "/v1/runs", "", nil, 405, "method_not_allowed"},
		{"before an unknown run", "GET", "/v1/runs?before=6b6f1f4e-3c1a-4c8e-9d2f-6a7b8c9d0e1f", "", nil, 400, "bad_request"},
		{"before a malformed id", "GET", "/v1/runs?before=not-a-uuid", "", nil, 400, "bad_request"},
		{"malformed run id", "GET", "/v1/runs/not-a-uuid", "", nil, 400, "bad_request"},
		{"events of a malformed run id", "GET", "/v1/runs/not-a-uuid/events", "", nil, 400, "bad_request"},
		{"cancel a malformed run id", "POST", "/v1/runs/not-a-uuid/cancel", "", nil, 400, "bad_request"},
		{"a file of a malformed run id", "GET", "/v1/runs/not-a-uuid/files/x.png", "", nil, 400, "bad_request"},
		{"a file of an unknown run", "GET", "/v1/runs/6b6f1f4e-3c1a-4c8e-9d2f-6a7b8c9d0e1f/files/x.png", "", nil, 404, "unknown_run"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, b := r.do(t, tc.method, tc.path, tc.body, tc.hdr...)
			var env struct {
				Error struct{ Code, Message string }
			}
			if err := json.Unmarshal(b, &env); err != nil || code != tc.status || env.Error.Code != tc.code || env.Error.Message == "" {
				t.Errorf("got %d %.300s, want %d with code %s and a message", code, b, tc.status, tc.code)
			}
		})
	}
	// internal: a store that fails answers a stable message naming the
	// request, never the store's own error.
	broken := newV1Rig(t, "", "")
	broken.store.Close()
	code, b := broken.do(t, "GET", "/v1/runs", "")
	if code != 500 || !strings.Contains(string(b), `"code":"internal"`) || !strings.Contains(string(b), "internal error (request ") || strings.Contains(string(b), "sql") {
		t.Errorf("a store failure: %d %s", code, b)
	}
}

// TestMethodNotAllowedSaysAllow: a 405 lists, in Allow, the methods the
// route takes, on /v1 (code method_not_allowed) and on /tools (Argent's
// envelope, unchanged).
func TestMethodNotAllowedSaysAllow(t *testing.T) {
	t.Parallel()
	r := newV1Rig(t, "", "")
	for _, tc := range []struct{ method, path, allow, body string }{
		{"DELETE", "/v1/runs", "GET, POST", `"code":"method_not_allowed"`},
		{"GET", "/v1/runs/0b6f1f4e-3c1a-4c8e-9d2f-6a7b8c9d0e1f/cancel", "POST", `"code":"method_not_allowed"`},
		{"PUT", "/v1/runs/0b6f1f4e-3c1a-4c8e-9d2f-6a7b8c9d0e1f", "GET", `"code":"method_not_allowed"`},
		{"DELETE", "/tools", "GET", `"error_kind":"method_not_allowed"`},
	} {
		req, _ := http.NewRequest(tc.method, r.url+tc.path, nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 405 || resp.Header.Get("Allow") != tc.allow || !strings.Contains(string(b), tc.body) {
			t.Errorf("%s %s: %d Allow %q %.200s, want 405 Allow %q with %s", tc.method, tc.path, resp.StatusCode, resp.Header.Get("Allow"), b, tc.allow, tc.body)
		}
	}
}

// TestV1ListPages: a page with older runs behind it names the next
// page's cursor in next_before; the last page has no next_before at all.
func TestV1ListPages(t *testing.T) {
	t.Parallel()
	r := newV1Rig(t, "", "")
	var ids []string
	for range 3 {
		ids = append(ids, r.quick(t, ""))
	}
	code, b := r.do(t, "GET", "/v1/runs?limit=2", "")
	var page runs.Page
	if json.Unmarshal(b, &page); code != 200 || len(page.Runs) != 2 || page.NextBefore != ids[1] {
		t.Fatalf("page 1: %d %.300s, want 2 runs and next_before %s", code, b, ids[1])
	}
	code, b = r.do(t, "GET", "/v1/runs?limit=2&before="+page.NextBefore, "")
	page = runs.Page{}
	if json.Unmarshal(b, &page); code != 200 || len(page.Runs) != 1 || page.Runs[0].ID != ids[0] || strings.Contains(string(b), "next_before") {
		t.Fatalf("page 2: %d %.300s, want run %s and no next_before", code, b, ids[0])
	}
	c := v1.NewClient(r.url, "")
	if p, err := c.List(t.Context(), runs.Filter{Limit: 1}); err != nil || len(p.Runs) != 1 || p.NextBefore != ids[2] {
		t.Errorf("the client's List: %v %+v, want next_before %s", err, p, ids[2])
	}
}

// TestV1RunIDsIgnoreCase: a run id given in upper case is stored in
// lower case, every path finds it in either case, and the same UUID in
// the other case is the same run, not a second one.
func TestV1RunIDsIgnoreCase(t *testing.T) {
	t.Parallel()
	r := newV1Rig(t, "", "")
	upper, lower := "0B6F1F4E-3C1A-4C8E-9D2F-6A7B8C9D0E1F", "0b6f1f4e-3c1a-4c8e-9d2f-6a7b8c9d0e1f"
	if got := r.quick(t, `,"run_id":"`+upper+`"`); got != lower {
		t.Fatalf("start with an upper-case run_id: run %s, want %s", got, lower)
	}
	root := t.TempDir()
	writeFlow(t, root, "quick", "steps:\n  - echo: hi\n")
	for _, id := range []string{upper, lower} {
		if code, b := r.do(t, "GET", "/v1/runs/"+id, ""); code != 200 || !strings.Contains(string(b), `"run":"`+lower+`"`) {
			t.Errorf("GET /v1/runs/%s: %d %.200s", id, code, b)
		}
		if code, b := r.do(t, "POST", "/v1/runs/"+id+"/cancel", ""); code != 409 || !strings.Contains(string(b), `"wrong_state"`) {
			t.Errorf("cancel %s (ended): %d %.200s, want 409 wrong_state", id, code, b)
		}
		resp, cancel := r.stream(t, "/v1/runs/"+id+"/events")
		frames := readFrames(t, resp.Body, func(f sseFrame) bool { return f.event == "end" })
		cancel()
		if len(frames) == 0 || frames[len(frames)-1].event != "end" {
			t.Errorf("events of %s: %v, want the run's events and its end frame", id, frames)
		}
	}
	for _, id := range []string{upper, lower} {
		code, b := r.do(t, "POST", "/v1/runs", fmt.Sprintf(`{"tool_args":{"name":"quick","project_root":%q},"run_id":%q}`, root, id))
		if code != 409 || !strings.Contains(string(b), `"run_exists"`) {
			t.Errorf("a second start as %s: %d %.200s, want 409 run_exists", id, code, b)
		}
	}
}

// TestV1Capabilities: with and without the build's commit.
func TestV1Capabilities(t *testing.T) {
	t.Parallel()
	for _, commit := range []string{"", "a1b2c3d-dirty"} {
		r := newV1Rig(t, "", commit)
		code, b := r.do(t, "GET", "/v1/capabilities", "")
		want := `{"capabilities":{"runs":true,"events":true,"replay":true,"abandon":true,"resume":true,"dashboard":false,"mcp":false,"tunnel":false},"server":{"version":"1.2.3"}}`
		if commit != "" {
			want = `{"capabilities":{"runs":true,"events":true,"replay":true,"abandon":true,"resume":true,"dashboard":false,"mcp":false,"tunnel":false},"server":{"version":"1.2.3","commit":"a1b2c3d-dirty"}}`
		}
		if code != 200 || strings.TrimSpace(string(b)) != want {
			t.Errorf("commit %q: %d %s, want %s", commit, code, b, want)
		}
	}
}
