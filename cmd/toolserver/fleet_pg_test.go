package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/toolserver/toolserver/internal/pgtest"
	"github.com/toolserver/toolserver/runs"
)

// The fleet of these tests: three `serve --store-file` replicas (each a
// process of its own, with its own browsers) over one PostgreSQL
// database, behind a round-robin nginx. Its lease is short, so that a
// replica lost mid-run is taken over within seconds, and a run gets two
// attempts in all.
const (
	pgFleetToken  = "fleet-pg"
	pgFleetDevice = "chromium-cdp-331x301"
	pgFleetLease  = "2s"
)

// pgFleet is the fleet, and every /v1 answer the test read from it.
type pgFleet struct {
	reps   []*serveProc
	nginx  string
	args   []string // each replica's serve arguments
	site   string   // a page that says ready
	mu     sync.Mutex
	bodies []string
}

// startPGFleet starts the fleet on a new database of the test binary's
// cluster. The replicas read the address (the role with a password, over
// TCP) from a file, as a Kubernetes Secret mounts it.
func startPGFleet(t *testing.T) *pgFleet {
	t.Helper()
	c := pgtest.Get(t)
	db := filepath.Base(strings.SplitN(strings.TrimPrefix(pgtest.DSN(t), "postgres://postgres@/"), "?", 2)[0])
	secret := filepath.Join(t.TempDir(), "dsn")
	if err := os.WriteFile(secret, []byte(c.TCPDSN(db)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `<!doctype html><p>ready</p>`)
	}))
	t.Cleanup(site.Close)
	f := &pgFleet{args: []string{"--store-file", secret, "--run-lease", pgFleetLease, "--max-attempts", "2"}, site: site.URL}
	var urls []string
	for range 3 {
		p := f.startReplica(t)
		urls = append(urls, p.url)
	}
	f.nginx = startNginxUpstream(t, urls, "8m")
	return f
}

// startReplica starts one more replica over the fleet's store.
func (f *pgFleet) startReplica(t *testing.T) *serveProc {
	t.Helper()
	p := startServeProc(t, pgFleetToken, f.args...)
	f.reps = append(f.reps, p)
	return p
}

// project writes flow f of steps (each {{NAME}} replaced as vars say)
// into a project of its own and returns the run request's tool_args.
func (f *pgFleet) project(t *testing.T, steps string, vars ...string) json.RawMessage {
	t.Helper()
	root := writeProject(t, map[string]string{"f.yaml": steps}, append([]string{"{{SITE}}", f.site}, vars...)...)
	b, _ := json.Marshal(map[string]string{"name": "f", "project_root": root, "device": pgFleetDevice})
	return b
}

// do sends a request of the /v1 API to base with the fleet's token and
// returns the answer's status and body, which it keeps.
func (f *pgFleet) do(t *testing.T, method, base, path string, body any) (int, []byte) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(t.Context(), method, base+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+pgFleetToken)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s%s: %v", method, base, path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s %s%s: %v", method, base, path, err)
	}
	f.keep(string(b))
	return resp.StatusCode, b
}

func (f *pgFleet) keep(s string) {
	f.mu.Lock()
	f.bodies = append(f.bodies, s)
	f.mu.Unlock()
}

// get is a GET that must answer 200.
func (f *pgFleet) get(t *testing.T, base, path string) []byte {
	t.Helper()
	code, b := f.do(t, http.MethodGet, base, path, nil)
	if code != http.StatusOK {
		t.Fatalf("GET %s%s: %d %s", base, path, code, b)
	}
	return b
}

// start starts a run of tool_args at base (a replica, or nginx).
func (f *pgFleet) start(t *testing.T, base string, args json.RawMessage) string {
	t.Helper()
	code, b := f.do(t, http.MethodPost, base, "/v1/runs", runs.StartRequest{ToolArgs: args})
	var st runs.Started
	if code != http.StatusCreated || json.Unmarshal(b, &st) != nil || st.Run == "" {
		t.Fatalf("POST %s/v1/runs: %d %s", base, code, b)
	}
	return st.Run
}

// sseFrame is one frame of a server-sent event stream, as sent.
type sseFrame struct {
	event, id, data string
}

// stream reads one connection of the SSE stream at base+path, sent
// Last-Event-ID lastID when it is 0 or more, handing each frame to each
// until each returns false, the stream ends, or it drops. It returns
// once the answer's headers came, with a channel that gets the
// connection's error (nil when each stopped it or EOF ended it) once it
// is over.
func (f *pgFleet) stream(ctx context.Context, t *testing.T, base, path string, lastID int64, each func(sseFrame) bool) <-chan error {
	t.Helper()
	done := make(chan error, 1)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+pgFleetToken)
	req.Header.Set("Accept", "text/event-stream")
	if lastID >= 0 {
		req.Header.Set("Last-Event-ID", strconv.FormatInt(lastID, 10))
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		done <- err
		return done
	}
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		f.keep(string(b))
		done <- fmt.Errorf("GET %s%s: %d %s", base, path, resp.StatusCode, b)
		return done
	}
	go func() {
		defer resp.Body.Close()
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 64<<10), 16<<20)
		var fr sseFrame
		for sc.Scan() {
			line := sc.Text()
			switch {
			case strings.HasPrefix(line, "event: "):
				fr.event = strings.TrimPrefix(line, "event: ")
			case strings.HasPrefix(line, "id: "):
				fr.id = strings.TrimPrefix(line, "id: ")
			case strings.HasPrefix(line, "data: "):
				fr.data = strings.TrimPrefix(line, "data: ")
			case line == "" && fr.data != "":
				f.keep(fr.data)
				if !each(fr) {
					done <- nil
					return
				}
				fr = sseFrame{}
			}
		}
		done <- sc.Err()
	}()
	return done
}

// followed is what a follower of a run's stream read: the events in
// the order they came (every frame, duplicates included) and the end
// frame.
type followed struct {
	frames []sseFrame
	end    runs.EndFrame
}

// events are the events read, decoded.
func (fw followed) events(t *testing.T) []runs.Event {
	t.Helper()
	var out []runs.Event
	for _, fr := range fw.frames {
		var e runs.Event
		if err := json.Unmarshal([]byte(fr.data), &e); err != nil {
			t.Fatalf("a frame of the stream is not an event: %q", fr.data)
		}
		out = append(out, e)
	}
	return out
}

// follow follows run id's stream from seq from to its terminal end frame,
// through the bases in turn: a dropped connection, or an end frame that
// says no driver runs the run (yet: a take-over is coming), is followed
// again with the cursor (Last-Event-ID) on the next base, every 100 ms at
// most, until the deadline. each, when set, sees every frame as it comes.
func (f *pgFleet) follow(t *testing.T, id string, from int64, each func(sseFrame), bases ...string) followed {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	var out followed
	next := from
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for i := 0; ; i++ {
		base := bases[i%len(bases)]
		var end *runs.EndFrame
		var bad error
		done := f.stream(ctx, t, base, "/v1/runs/"+id+"/events", next-1, func(fr sseFrame) bool {
			if each != nil {
				each(fr)
			}
			if fr.event == "end" {
				var e runs.EndFrame
				if err := json.Unmarshal([]byte(fr.data), &e); err != nil {
					bad = fmt.Errorf("an end frame that is no status: %q", fr.data)
				}
				end = &e
				return false
			}
			out.frames = append(out.frames, fr)
			if n, err := strconv.ParseInt(fr.id, 10, 64); err == nil && n >= next {
				next = n + 1
			}
			return true
		})
		err := <-done
		switch {
		case bad != nil:
			t.Fatal(bad)
		case end != nil && runs.Terminal(end.Status.State):
			out.end = *end
			return out
		case ctx.Err() != nil:
			t.Fatalf("run %s did not end: %d events read, last error %v", id, len(out.frames), err)
		}
		select {
		case <-ctx.Done():
			t.Fatalf("run %s did not end: %d events read", id, len(out.frames))
		case <-tick.C:
		}
	}
}

// checkOnce fails unless the frames are events seq from, from+1, … in
// order, each once, with ids that say their seq.
func checkOnce(t *testing.T, fw followed, from int64) {
	t.Helper()
	for i, e := range fw.events(t) {
		want := from + int64(i)
		if e.Seq != want || fw.frames[i].id != strconv.FormatInt(e.Seq, 10) {
			t.Fatalf("event %d of the stream is seq %d (id %q), want %d, each once in order: %s", i, e.Seq, fw.frames[i].id, want, kinds(fw.events(t)))
		}
	}
}

// kinds is events' seqs and kinds, for a message.
func kinds(evs []runs.Event) string {
	var b strings.Builder
	for _, e := range evs {
		fmt.Fprintf(&b, "%d:%s ", e.Seq, e.Event.Kind)
	}
	return b.String()
}

// storedEvents is run id's log as replica base reads it from the store
// (its stream, from seq 0, of a run that has ended).
func (f *pgFleet) storedEvents(t *testing.T, base, id string) []runs.Event {
	t.Helper()
	fw := f.follow(t, id, 0, nil, base)
	checkOnce(t, fw, 0)
	return fw.events(t)
}

// waitLog waits until a line of p's log holds every one of want, and
// returns it; it fails the test at the deadline.
func waitLog(t *testing.T, p *serveProc, d time.Duration, want ...string) string {
	t.Helper()
	deadline := time.Now().Add(d)
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		if line, ok := logLine(p, want...); ok {
			return line
		}
		if time.Now().After(deadline) {
			t.Fatalf("no line of the replica's log holds %q:\n%s", want, p.stderr)
		}
		<-tick.C
	}
}

// logLine is the first line of p's log that holds every one of want.
func logLine(p *serveProc, want ...string) (string, bool) {
	for line := range strings.Lines(p.stderr.String()) {
		all := true
		for _, w := range want {
			all = all && strings.Contains(line, w)
		}
		if all {
			return line, true
		}
	}
	return "", false
}

// tookOver is whether replica p's log says it took run id over.
func tookOver(p *serveProc, id string) bool {
	_, ok := logLine(p, "took over a run whose driver was lost", id)
	return ok
}

// takeoverAt is the index of the one RunResumed of evs, a take-over of
// the second attempt; it fails the test otherwise.
func takeoverAt(t *testing.T, evs []runs.Event) int {
	t.Helper()
	at := -1
	for i, e := range evs {
		if e.Event.Kind != runs.KindRunResumed {
			continue
		}
		var p struct {
			Attempt  int  `json:"attempt"`
			Takeover bool `json:"takeover"`
		}
		json.Unmarshal(e.Event.Payload, &p)
		if at >= 0 || !p.Takeover || p.Attempt != 2 {
			t.Fatalf("want one RunResumed, a take-over (attempt 2): %s %s", kinds(evs), e.Event.Payload)
		}
		at = i
	}
	if at < 0 {
		t.Fatalf("no take-over in the log: %s", kinds(evs))
	}
	return at
}

// TestFleetOverPostgres: three serve replicas over one PostgreSQL behind
// a round-robin nginx are one control plane. A run started through nginx
// reads the same on every replica; a stream dropped on one replica goes
// on on another from its cursor, each event once; a replica killed
// mid-run, or paused past its lease, loses its run to another, which
// completes it, and the paused one writes nothing more when it wakes; a
// run whose replicas keep dying fails after its attempts; and the
// store's password is in no log, no answer, no process's arguments.
func TestFleetOverPostgres(t *testing.T) {
	t.Parallel()
	outer := t
	f := startPGFleet(t)
	ps0, err := exec.Command("ps", "-eo", "args").CombinedOutput()
	if err != nil {
		t.Fatalf("ps: %v %s", err, ps0)
	}

	t.Run("a run reads the same on every replica", func(t *testing.T) {
		args := f.project(t, "steps:\n  - launch: \"{{SITE}}/page\"\n  - await: { visible: { text: ready } }\n  - echo: one\n  - echo: two\n")
		id := f.start(t, f.nginx, args)
		through := f.follow(t, id, 0, nil, f.nginx)
		checkOnce(t, through, 0)
		if through.end.Status.State != runs.Completed || through.end.Status.Outcome() != runs.Passed {
			t.Fatalf("the run through nginx: %+v, want completed and passed", through.end)
		}
		evs := through.events(t)
		if len(evs) != 6 || evs[0].Event.Kind != runs.KindRunStarted || evs[5].Event.Kind != runs.KindRunCompleted {
			t.Fatalf("the run's log: %s, want RunStarted, 4 steps, RunCompleted", kinds(evs))
		}
		var detail, replay []byte
		for i, p := range f.reps {
			var page runs.Page
			if err := json.Unmarshal(f.get(t, p.url, "/v1/runs"), &page); err != nil || len(page.Runs) != 1 || page.Runs[0].ID != id || page.Runs[0].Status.State != runs.Completed {
				t.Errorf("replica %d lists %+v (%v), want run %s completed", i, page.Runs, err, id)
			}
			d, r := f.get(t, p.url, "/v1/runs/"+id), f.get(t, p.url, "/v1/runs/"+id+"/replay")
			if i == 0 {
				detail, replay = d, r
			} else if !bytes.Equal(d, detail) || !bytes.Equal(r, replay) {
				t.Errorf("replica %d reads the run otherwise than replica 0:\n%s\n%s\nwant\n%s\n%s", i, d, r, detail, replay)
			}
			var got runs.Detail
			if err := json.Unmarshal(d, &got); err != nil || got.ID != id || len(got.Steps) != 4 || got.Status.State != runs.Completed {
				t.Errorf("replica %d: GET /v1/runs/%s: %s", i, id, d)
			}
			var rp runs.Replay
			if err := json.Unmarshal(r, &rp); err != nil || rp.Status.State != runs.Completed || rp.NextSeq != 6 || rp.StepCount != 4 {
				t.Errorf("replica %d: replay %s", i, r)
			}
			own := f.follow(t, id, 0, nil, p.url)
			if !slices.Equal(own.frames, through.frames) || own.end.Status.State != runs.Completed {
				t.Errorf("replica %d streams the run otherwise than nginx did:\n%v\nwant\n%v", i, own.frames, through.frames)
			}
		}
	})

	t.Run("a stream resumed on another replica", func(t *testing.T) {
		held, reached, release := heldPage(t)
		args := f.project(t, "steps:\n  - launch: \"{{SITE}}/page\"\n  - await: { visible: { text: ready } }\n  - echo: one\n  - launch: \"{{HELD}}/held\"\n  - await: { visible: { text: here } }\n", "{{HELD}}", held)
		a, b := f.reps[0], f.reps[1]
		id := f.start(t, a.url, args)
		// Follow on the replica that drives the run, and drop after the
		// echo (seq 3): the run waits on the held page by then.
		const k = 3
		ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
		defer cancel()
		var first []sseFrame
		done := f.stream(ctx, t, a.url, "/v1/runs/"+id+"/events", -1, func(fr sseFrame) bool {
			first = append(first, fr)
			return fr.id != strconv.Itoa(k) && fr.event != "end"
		})
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		if n := len(first); n != k+1 || first[n-1].id != strconv.Itoa(k) {
			t.Fatalf("the stream on the driving replica: %v, want seq 0 to %d", first, k)
		}
		select {
		case <-reached:
		case <-ctx.Done():
			t.Fatal("the run never reached the held page")
		}
		// The list stream of a replica that does not drive the run.
		completed := make(chan struct{})
		var once sync.Once
		listDone := f.stream(ctx, t, b.url, "/v1/events", -1, func(fr sseFrame) bool {
			var v struct {
				Runs []runs.Run `json:"runs"`
			}
			json.Unmarshal([]byte(fr.data), &v)
			for _, r := range v.Runs {
				if r.ID == id && r.Status.State == runs.Completed {
					once.Do(func() { close(completed) })
					return false
				}
			}
			return true
		})
		// Reconnect on the other replica with the cursor, then let the
		// run go on: B sends what A's follower did not have, as A records
		// it, each event once.
		var rest followed
		var restEnd []byte
		restDone := f.stream(ctx, t, b.url, "/v1/runs/"+id+"/events", k, func(fr sseFrame) bool {
			if fr.event == "end" {
				restEnd = []byte(fr.data)
				return false
			}
			rest.frames = append(rest.frames, fr)
			return true
		})
		release()
		if err := <-restDone; err != nil || json.Unmarshal(restEnd, &rest.end) != nil {
			t.Fatalf("the stream on replica B: %v, end frame %q, after %v", err, restEnd, rest.frames)
		}
		checkOnce(t, rest, k+1)
		evs := rest.events(t)
		if len(evs) != 3 || evs[2].Event.Kind != runs.KindRunCompleted || rest.end.Status.State != runs.Completed {
			t.Fatalf("the rest of the run on replica B: %s %+v, want seq %d to 6, completed", kinds(evs), rest.end, k+1)
		}
		// The whole log, as stored, is the two parts end to end.
		var whole []sseFrame
		whole = append(append(whole, first...), rest.frames...)
		if stored := f.follow(t, id, 0, nil, b.url); !slices.Equal(stored.frames, whole) {
			t.Errorf("the log as stored:\n%v\nthe two streams:\n%v", stored.frames, whole)
		}
		// The stream ends because its callback saw the run completed:
		// both channels are then ready, and only completed says which.
		select {
		case <-completed:
		case err := <-listDone:
			select {
			case <-completed:
			default:
				t.Fatalf("the list stream of replica B ended (%v) before it showed the run completed", err)
			}
		case <-ctx.Done():
			t.Fatal("the list stream of replica B never showed the run completed")
		}
	})

	t.Run("a replica killed mid-run", func(t *testing.T) {
		held, reached, release := heldPage(t)
		args := f.project(t, "steps:\n  - launch: \"{{HELD}}/held\"\n  - await: { visible: { text: here } }\n", "{{HELD}}", held)
		a := f.reps[0]
		id := f.start(t, a.url, args)
		select {
		case <-reached:
		case <-time.After(2 * time.Minute):
			t.Fatal("the run never reached the held page")
		}
		// A follower through nginx, from the start: it hears of the kill
		// as a dropped stream, or as a run that no driver runs, and
		// follows on to the end.
		var seenResumed bool
		killed := make(chan struct{})
		var kill sync.Once
		fw := f.follow(t, id, 0, func(fr sseFrame) {
			if strings.Contains(fr.data, `"kind":"RunStarted"`) {
				kill.Do(func() {
					a.kill()
					release()
					close(killed)
				})
			}
			if strings.Contains(fr.data, `"kind":"RunResumed"`) {
				seenResumed = true
			}
		}, f.nginx)
		<-killed
		checkOnce(t, fw, 0)
		evs := fw.events(t)
		at := takeoverAt(t, evs)
		if !seenResumed || fw.end.Status.State != runs.Completed || fw.end.Status.Outcome() != runs.Passed {
			t.Fatalf("the follower through nginx: %s, end %+v; want the take-over, then completed", kinds(evs), fw.end)
		}
		// The first attempt got no further than the held page; after the
		// take-over, the second attempt's steps, each once.
		if at != 1 {
			t.Errorf("before the take-over: %s, want RunStarted alone", kinds(evs[:at]))
		}
		if got := kinds(evs[at+1:]); len(evs)-at-1 != 3 || evs[len(evs)-1].Event.Kind != runs.KindRunCompleted {
			t.Errorf("after the take-over: %s, want its 2 steps and RunCompleted", got)
		}
		takers := 0
		for _, p := range f.reps[1:] {
			if tookOver(p, id) {
				takers++
			}
		}
		if takers != 1 {
			t.Errorf("%d replicas say they took over run %s, want 1", takers, id)
		}
	})

	t.Run("a replica paused past its lease", func(t *testing.T) {
		held, reached, release := heldPage(t)
		args := f.project(t, "steps:\n  - launch: \"{{HELD}}/held\"\n  - await: { visible: { text: here } }\n  - echo: done\n", "{{HELD}}", held)
		paused, other := f.reps[1], f.reps[2]
		id := f.start(t, paused.url, args)
		select {
		case <-reached:
		case <-time.After(2 * time.Minute):
			t.Fatal("the run never reached the held page")
		}
		if err := syscall.Kill(paused.proc.Pid, syscall.SIGSTOP); err != nil {
			t.Fatal(err)
		}
		resumed := false
		t.Cleanup(func() {
			if !resumed {
				syscall.Kill(paused.proc.Pid, syscall.SIGCONT)
			}
		})
		// The other replica takes the run over once the paused one's
		// lease lapsed; the held page answers once it has.
		var once sync.Once
		fw := f.follow(t, id, 0, func(fr sseFrame) {
			if strings.Contains(fr.data, `"kind":"RunResumed"`) {
				once.Do(release)
			}
		}, other.url)
		checkOnce(t, fw, 0)
		evs := fw.events(t)
		at := takeoverAt(t, evs)
		if fw.end.Status.State != runs.Completed || fw.end.Status.Outcome() != runs.Passed {
			t.Fatalf("the run: %s, end %+v; want completed", kinds(evs), fw.end)
		}
		if !tookOver(other, id) {
			t.Errorf("the other replica's log does not say it took run %s over:\n%s", id, other.stderr)
		}

		// The paused replica wakes: it finds it lost the run, and writes
		// nothing more to it.
		if err := syscall.Kill(paused.proc.Pid, syscall.SIGCONT); err != nil {
			t.Fatal(err)
		}
		resumed = true
		line := waitLog(t, paused, time.Minute, "lost a run", id)
		if !strings.Contains(line, "WARN") {
			t.Errorf("the paused replica's log says it lost the run, but not as a warning: %s", line)
		}
		after := f.storedEvents(t, paused.url, id)
		if !slices.EqualFunc(after, evs, func(a, b runs.Event) bool {
			return a.Seq == b.Seq && a.Event.Kind == b.Event.Kind && bytes.Equal(a.Event.Payload, b.Event.Payload)
		}) {
			t.Fatalf("the log changed after the paused replica woke:\n%s\nwas\n%s", kinds(after), kinds(evs))
		}
		if at != 1 {
			t.Errorf("before the take-over: %s, want RunStarted alone (the paused replica was held at the first step)", kinds(after[:at]))
		}
		if got := kinds(after[at+1:]); len(after)-at-1 != 4 || after[len(after)-1].Event.Kind != runs.KindRunCompleted {
			t.Errorf("after the take-over: %s, want the 3 steps of the second attempt and RunCompleted", got)
		}
		var rp runs.Replay
		if err := json.Unmarshal(f.get(t, paused.url, "/v1/runs/"+id+"/replay"), &rp); err != nil || rp.Status.State != runs.Completed || rp.Attempt != 2 || rp.NextSeq != int64(len(evs)) {
			t.Errorf("the replay after the paused replica woke: %+v %v", rp, err)
		}
		if tookOver(paused, id) {
			t.Errorf("the paused replica took its own run back:\n%s", paused.stderr)
		}
	})

	t.Run("a run out of attempts fails", func(t *testing.T) {
		// Replica 0 was killed above: a fourth replica joins (for the rest
		// of the test: its last check looks at it), so that one is left
		// when the run's two attempts have died with theirs.
		f.startReplica(outer)
		held, reached, _ := heldPage(t)
		args := f.project(t, "steps:\n  - launch: \"{{HELD}}/held\"\n  - await: { visible: { text: here } }\n", "{{HELD}}", held)
		first := f.reps[1]
		id := f.start(t, first.url, args)
		select {
		case <-reached:
		case <-time.After(2 * time.Minute):
			t.Fatal("the run never reached the held page")
		}
		first.kill()
		alive := []*serveProc{f.reps[2], f.reps[3]}
		// The run is taken over by one of the two; it dies in turn.
		deadline := time.Now().Add(time.Minute)
		taker := -1
		for taker < 0 {
			for i, p := range alive {
				if tookOver(p, id) {
					taker = i
				}
			}
			if taker < 0 && time.Now().After(deadline) {
				t.Fatalf("no replica took run %s over", id)
			}
			if taker < 0 {
				<-time.After(50 * time.Millisecond)
			}
		}
		alive[taker].kill()
		last := alive[1-taker]
		fw := f.follow(t, id, 0, nil, last.url)
		checkOnce(t, fw, 0)
		evs := fw.events(t)
		takeoverAt(t, evs)
		if fw.end.Status.State != runs.Failed || !strings.Contains(fw.end.Status.Error, "after 2 attempts") || evs[len(evs)-1].Event.Kind != runs.KindRunFailed {
			t.Fatalf("a run whose two attempts died: %s, end %+v; want failed after 2 attempts", kinds(evs), fw.end)
		}
		if tookOver(last, id) {
			t.Errorf("the last replica took the run over a third time:\n%s", last.stderr)
		}
	})

	t.Run("the password is nowhere", func(t *testing.T) {
		// Every replica's answers to the /v1 reads, and its log.
		for i, p := range f.reps {
			select {
			case <-p.exited:
			default:
				for _, path := range []string{"/v1/runs", "/v1/capabilities", "/v1/runs/00000000-0000-4000-8000-000000000000", "/v1/runs/nope/replay", "/readyz", "/healthz"} {
					f.do(t, http.MethodGet, p.url, path, nil)
				}
			}
			if log := p.stderr.String(); strings.Contains(log, pgtest.Password) {
				t.Errorf("replica %d logged the password:\n%s", i, log)
			} else if !strings.Contains(log, "shared by the fleet") || !strings.Contains(log, pgtest.PasswordUser+":xxxxx@") {
				t.Errorf("replica %d does not say which store it keeps the runs in:\n%s", i, log)
			}
		}
		f.mu.Lock()
		n := len(f.bodies)
		for _, b := range f.bodies {
			if strings.Contains(b, pgtest.Password) {
				t.Errorf("an answer shows the password: %.500s", b)
			}
		}
		f.mu.Unlock()
		if n < 20 {
			t.Errorf("only %d answers were read", n)
		}
		ps, err := exec.Command("ps", "-eo", "args").CombinedOutput()
		if err != nil {
			t.Fatalf("ps: %v %s", err, ps)
		}
		// Only the lines of interest are shown: ps lists the whole machine.
		for _, out := range [][]byte{ps0, ps} {
			replicas := 0
			for line := range strings.Lines(string(out)) {
				if strings.Contains(line, " serve --addr ") && strings.Contains(line, "--store-file") {
					replicas++
				}
				if strings.Contains(line, pgtest.Password) {
					t.Errorf("ps shows the password: %s", line)
				}
			}
			if replicas == 0 {
				t.Errorf("ps shows no replica (%d lines)", strings.Count(string(out), "\n"))
			}
		}
	})
}
