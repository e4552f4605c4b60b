package server_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolserver/toolserver/control"
	"github.com/toolserver/toolserver/flow"
	"github.com/toolserver/toolserver/runs"
	"github.com/toolserver/toolserver/server"
)

// logTap is a slog handler that keeps every record and hands the message
// of each at Warn or above to warned.
type logTap struct {
	mu      sync.Mutex
	records []slog.Record
	warned  chan string
}

func newLogTap() *logTap { return &logTap{warned: make(chan string, 64)} }

func (l *logTap) Enabled(context.Context, slog.Level) bool { return true }
func (l *logTap) Handle(_ context.Context, r slog.Record) error {
	l.mu.Lock()
	l.records = append(l.records, r)
	l.mu.Unlock()
	if r.Level >= slog.LevelWarn {
		select {
		case l.warned <- r.Message:
		default:
		}
	}
	return nil
}
func (l *logTap) WithAttrs([]slog.Attr) slog.Handler { return l }
func (l *logTap) WithGroup(string) slog.Handler      { return l }

// errors returns the messages logged at Error.
func (l *logTap) errors() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for _, r := range l.records {
		if r.Level >= slog.LevelError {
			out = append(out, r.Message)
		}
	}
	return out
}

// storeRig is a server over a run store alone: the tests record into the
// store directly.
type storeRig struct {
	url string
	st  *runs.Store
	log *logTap
}

func newStoreRig(t *testing.T, cfg server.Config) *storeRig {
	t.Helper()
	st, err := runs.Open(t.TempDir(), 0)
	if err != nil {
		t.Fatal(err)
	}
	tap := newLogTap()
	cfg.Addr, cfg.Runs, cfg.Plane, cfg.Log = "127.0.0.1:0", st, control.New(control.Config{Runs: st}), slog.New(tap)
	hs := httptest.NewServer(server.New(cfg).Handler())
	t.Cleanup(func() {
		hs.CloseClientConnections()
		hs.Close()
		st.Close()
	})
	return &storeRig{url: hs.URL, st: st, log: tap}
}

func (r *storeRig) get(t *testing.T, path string, hdr ...string) (*http.Response, context.CancelFunc) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, "GET", r.url+path, nil)
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cancel()
		resp.Body.Close()
	})
	return resp, cancel
}

// TestV1StreamCap: past MaxStreams, a stream (a run's or the list's) is
// refused 503 unavailable with Retry-After, in the /v1 envelope; the
// streams already open go on.
func TestV1StreamCap(t *testing.T) {
	t.Parallel()
	r := newStoreRig(t, server.Config{MaxStreams: 2})
	rec, err := r.st.Start(t.Context(), runs.Begin{Source: "v1"})
	if err != nil {
		t.Fatal(err)
	}
	list, _ := r.get(t, "/v1/events")
	run, _ := r.get(t, "/v1/runs/"+rec.ID()+"/events")
	for _, resp := range []*http.Response{list, run} {
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("a stream under the cap: %s", resp.Status)
		}
	}
	for _, path := range []string{"/v1/events", "/v1/runs/" + rec.ID() + "/events"} {
		resp, _ := r.get(t, path)
		if resp.StatusCode == http.StatusOK {
			t.Errorf("GET %s past the cap: 200, a stream; want 503", path)
			continue
		}
		b, _ := io.ReadAll(resp.Body)
		var env runs.ErrorBody
		json.Unmarshal(b, &env)
		if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") != "5" || env.Error.Code != runs.CodeUnavailable || !strings.Contains(env.Error.Message, "2 event streams open") {
			t.Errorf("GET %s past the cap: %s, Retry-After %q, %s; want 503 unavailable, Retry-After 5, the cap named", path, resp.Status, resp.Header.Get("Retry-After"), b)
		}
	}
	// The open run stream still follows its run.
	rec.Append(runs.KindStepCompleted, map[string]string{"k": "v"})
	frames := readFrames(t, run.Body, func(f sseFrame) bool { return f.id == "1" })
	if len(frames) != 2 {
		t.Errorf("the open stream: %+v, want seq 0 and 1", frames)
	}
}

// TestV1StreamDropsAClientThatDoesNotRead: a follower whose connection
// is never read holds neither the run nor the other followers: the run
// records on, a reading follower gets every event, and the stuck one is
// dropped at the write timeout, with a warning in the log.
func TestV1StreamDropsAClientThatDoesNotRead(t *testing.T) {
	t.Parallel()
	// The timeout is short for the stuck follower's sake, and long enough
	// that the reading one, on a machine loaded by the race detector and
	// the suite's browsers, is not dropped too (at 200 ms it once was).
	r := newStoreRig(t, server.Config{StreamWriteTimeout: 3 * time.Second})
	rec, err := r.st.Start(t.Context(), runs.Begin{Source: "v1"})
	if err != nil {
		t.Fatal(err)
	}
	// The stuck follower: a raw connection that sends its request and
	// never reads, with a receive buffer as small as the kernel allows.
	conn, err := net.Dial("tcp", strings.TrimPrefix(r.url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.(*net.TCPConn).SetReadBuffer(1)
	fmt.Fprintf(conn, "GET /v1/runs/%s/events HTTP/1.1\r\nHost: %s\r\n\r\n", rec.ID(), strings.TrimPrefix(r.url, "http://"))
	reading, _ := r.get(t, "/v1/runs/"+rec.ID()+"/events")
	got := make(chan []sseFrame, 1)
	go func() { got <- readFrames(t, reading.Body, nil) }()

	// 200 events of 64 KiB, 12.8 MiB: more than both sockets' buffers.
	big := strings.Repeat("x", 64<<10)
	const n = 200
	for range n {
		if err := rec.Append(runs.KindStepCompleted, map[string]string{"pad": big}); err != nil {
			t.Fatal(err)
		}
	}
	select {
	case msg := <-r.log.warned:
		if !strings.Contains(msg, "event stream dropped") {
			t.Errorf("the warning: %q", msg)
		}
	case <-time.After(time.Minute):
		t.Fatal("the follower that does not read was not dropped")
	}
	if err := rec.End(&flow.Report{OK: true}, nil, nil); err != nil {
		t.Fatal(err)
	}
	frames := <-got
	if len(frames) != n+3 || frames[len(frames)-1].event != "end" {
		t.Fatalf("the reading follower: %d frames, want %d events and the end", len(frames), n+2)
	}
	for i, f := range frames[:n+2] {
		if f.id != fmt.Sprint(i) {
			t.Fatalf("frame %d has id %q", i, f.id)
		}
	}
}

// TestV1ChangesStream: the run list's stream lists every run first, then
// the runs that change, from one listing shared by its followers.
func TestV1ChangesStream(t *testing.T) {
	t.Parallel()
	r := newStoreRig(t, server.Config{})
	old, err := r.st.Start(t.Context(), runs.Begin{Flow: "old", Source: "v1"})
	if err != nil {
		t.Fatal(err)
	}
	old.End(&flow.Report{OK: true}, nil, nil)
	var bodies []io.Reader
	for range 3 {
		resp, _ := r.get(t, "/v1/events")
		bodies = append(bodies, resp.Body)
	}
	scanners := make([]*bufio.Scanner, len(bodies))
	next := func(i int) []runs.Run {
		t.Helper()
		if scanners[i] == nil {
			scanners[i] = bufio.NewScanner(bodies[i])
			scanners[i].Buffer(nil, 1<<20)
		}
		for scanners[i].Scan() {
			if data, ok := strings.CutPrefix(scanners[i].Text(), "data: "); ok {
				var f struct{ Runs []runs.Run }
				if err := json.Unmarshal([]byte(data), &f); err != nil {
					t.Fatal(err)
				}
				return f.Runs
			}
		}
		t.Fatalf("stream %d ended: %v", i, scanners[i].Err())
		return nil
	}
	for i := range bodies {
		if first := next(i); len(first) != 1 || first[0].Flow != "old" || first[0].Outcome != runs.Passed {
			t.Fatalf("stream %d's first frame: %+v, want the old run", i, first)
		}
	}
	rec, err := r.st.Start(t.Context(), runs.Begin{Flow: "new", Source: "v1"})
	if err != nil {
		t.Fatal(err)
	}
	rec.End(&flow.Report{OK: true}, nil, nil)
	for i := range bodies {
		for {
			f := next(i)
			if len(f) != 1 || f[0].Flow != "new" {
				t.Fatalf("stream %d: %+v, want only the new run", i, f)
			}
			if f[0].Outcome == runs.Passed {
				break
			}
		}
	}
}

// TestV1CursorPastTheEnd: a cursor past a log's end replays nothing (the
// largest Last-Event-ID included, whose plus one would wrap to the
// log's start), then the end frame; a cursor that is not a non-negative
// int64 is 400.
func TestV1CursorPastTheEnd(t *testing.T) {
	t.Parallel()
	r := newStoreRig(t, server.Config{})
	rec, err := r.st.Start(t.Context(), runs.Begin{Source: "v1"})
	if err != nil {
		t.Fatal(err)
	}
	rec.Append(runs.KindStepCompleted, map[string]string{"k": "v"})
	rec.End(&flow.Report{OK: true}, nil, nil)
	path := "/v1/runs/" + rec.ID() + "/events"
	for _, c := range []struct {
		query string
		hdr   []string
	}{
		{"", []string{"Last-Event-ID", "9223372036854775807"}},
		{"", []string{"Last-Event-ID", "9223372036854775806"}},
		{"", []string{"Last-Event-ID", "2"}},
		{"?from_seq=9223372036854775807", nil},
		{"?from_seq=3", nil},
	} {
		resp, _ := r.get(t, path+c.query, c.hdr...)
		frames := readFrames(t, resp.Body, nil)
		if resp.StatusCode != http.StatusOK || len(frames) != 1 || frames[0].event != "end" || !strings.Contains(frames[0].data, `"state":"completed"`) {
			t.Errorf("cursor %q %q: %s %+v, want the end frame alone", c.query, c.hdr, resp.Status, frames)
		}
	}
	for _, hdr := range [][]string{
		{"Last-Event-ID", "9223372036854775808"},
		{"Last-Event-ID", "-1"},
		{"Last-Event-ID", "1.5"},
	} {
		resp, _ := r.get(t, path, hdr...)
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(b), `"bad_request"`) || !strings.Contains(string(b), "is not a sequence number") {
			t.Errorf("cursor %q: %s %s, want 400 bad_request", hdr, resp.Status, b)
		}
	}
	for _, q := range []string{"-1", "9223372036854775808", "x"} {
		resp, _ := r.get(t, path+"?from_seq="+q)
		if resp.StatusCode != http.StatusBadRequest {
			t.Errorf("from_seq=%s: %s, want 400", q, resp.Status)
		}
	}
}

// TestV1BadNamesAreNotInternal: a file name or a label filter that no
// run can have is a 404 or a 400 naming it, never a 500 logged at
// ERROR; a label key with JSON path characters finds its run.
func TestV1BadNamesAreNotInternal(t *testing.T) {
	t.Parallel()
	r := newStoreRig(t, server.Config{})
	rec, err := r.st.Start(t.Context(), runs.Begin{Source: "v1", Labels: map[string]string{`x\`: "1", `a"b`: "2", "$.c[0]": "3"}})
	if err != nil {
		t.Fatal(err)
	}
	// A kept image, so that the run's directory of files exists.
	img := filepath.Join(t.TempDir(), "current.png")
	os.WriteFile(img, []byte("\x89PNG fake"), 0o644)
	rec.Step(flow.StepReport{Kind: "snapshot", Status: flow.StatusFail, SnapshotKey: "home__chromium-10x10.png",
		Artifacts: map[string]flow.Artifact{"current": {Handle: &flow.ArtifactHandle{Artifact: true, ID: "a1", HostPath: img}}}})
	rec.End(&flow.Report{Failed: 1}, nil, nil)
	files := "/v1/runs/" + rec.ID() + "/files/"
	d, _ := r.st.Get(t.Context(), rec.ID())
	if len(d.Snapshots) != 1 || d.Snapshots[0].Files["current"] == "" {
		t.Fatalf("the image was not kept: %+v", d.Snapshots)
	}
	if resp, _ := r.get(t, files+d.Snapshots[0].Files["current"]); resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "image/png" {
		t.Fatalf("the kept image: %s %s", resp.Status, resp.Header.Get("Content-Type"))
	}
	for _, c := range []struct {
		path   string
		status int
		code   string
		names  string
	}{
		{files + "%00", 404, runs.CodeUnknownRun, `"\x00"`},
		{files + "001-current-home.png%00.png", 404, runs.CodeUnknownRun, `"001-current-home.png\x00.png"`},
		{files + "%01", 404, runs.CodeUnknownRun, `"\x01"`},
		{files + strings.Repeat("a", 4000), 404, runs.CodeUnknownRun, "aaaa"},
		{"/v1/runs?label=a%00b:x", 400, runs.CodeBadRequest, `"a\x00b"`},
		{"/v1/runs?label=a%1Bb:x", 400, runs.CodeBadRequest, `"a\x1bb"`},
		{"/v1/runs?label=" + strings.Repeat("k", 4000) + ":x", 400, runs.CodeBadRequest, "4000 bytes"},
		{"/v1/runs?label=x%5C:1", 200, "", rec.ID()},
		{"/v1/runs?label=a%22b:2", 200, "", rec.ID()},
		{"/v1/runs?label=$.c%5B0%5D:3", 200, "", rec.ID()},
	} {
		resp, _ := r.get(t, c.path)
		b, _ := io.ReadAll(resp.Body)
		var env runs.ErrorBody
		json.Unmarshal(b, &env)
		said := env.Error.Message
		if c.status == 200 {
			said = string(b)
		}
		if resp.StatusCode != c.status || env.Error.Code != c.code || !strings.Contains(said, c.names) || len(b) > 1000 {
			t.Errorf("GET %.80s: %d %.300s; want %d %s naming %s", c.path, resp.StatusCode, b, c.status, c.code, c.names)
		}
	}
	if errs := r.log.errors(); len(errs) > 0 {
		t.Errorf("logged at ERROR: %q", errs)
	}
}
