package main

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
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolserver/toolserver/runs"
)

// heldSite serves the pages of a held run: /basket.html in the banner
// colour of the moment, and /hold.html, whose script fetches /hold and
// shows "released" once it answers. While hold is on, /hold answers only
// after release.
type heldSite struct {
	URL     string
	hold    atomic.Bool
	banner  atomic.Value // string
	release func()
}

func newHeldSite(t *testing.T) *heldSite {
	t.Helper()
	s := &heldSite{}
	s.banner.Store("#243b6b")
	released := make(chan struct{})
	var once sync.Once
	s.release = func() { once.Do(func() { close(released) }) }
	mux := http.NewServeMux()
	mux.HandleFunc("/basket.html", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, `<!doctype html><meta charset="utf-8"><style>body{margin:0;font:16px "DejaVu Sans",sans-serif}
header{background:%s;color:#fff;padding:12px 16px;font-weight:bold}main{padding:12px 16px}</style>
<header>Fernhouse</header><main><p>Three ferns in your basket.</p></main>`, s.banner.Load())
	})
	mux.HandleFunc("/hold.html", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<!doctype html><p id="state">holding</p>
<script>fetch("/hold").then(() => { document.getElementById("state").textContent = "released"; });</script>`)
	})
	mux.HandleFunc("/hold", func(w http.ResponseWriter, r *http.Request) {
		if s.hold.Load() {
			select {
			case <-released:
			case <-r.Context().Done():
				return
			}
		}
		fmt.Fprint(w, "ok")
	})
	srv := httptest.NewServer(mux)
	s.URL = srv.URL
	t.Cleanup(func() {
		s.release()
		srv.Close()
	})
	return s
}

// TestDashboardInChromium: our own runner drives the dashboard of
// `serve --dashboard` in Chromium as a user would. It enters the token,
// sees the empty list, sees a run started by POST /v1/runs appear live
// while the run is held mid-way, opens it (its first step shown, an
// Abandon button, no Resume button: its driver is attached). Then the network drops the page's streams, the run is
// released, and the page, reconnected (the run's events resumed by
// Last-Event-ID), shows it end failed (completed, its outcome failed)
// with each of its steps once and no Abandon button any more; it
// opens the failed snapshot in the report's viewer: baseline, current
// and diff loaded (fetched with the token, shown by blob: URLs), the
// slider, and n; the label filter, one that matches nothing and the
// run's own; and a run without a device, whose header shows none.
func TestDashboardInChromium(t *testing.T) {
	t.Parallel()
	const token = "dash-s3cret-token"
	device := sharedDevice(t, "chromium-cdp-333x213")

	// The watched run's project: its baseline adopted, then the banner
	// changed, so its snapshot fails; and held at /hold until released.
	site := newHeldSite(t)
	root := writeProject(t, map[string]string{
		"held.yaml": "steps:\n  - launch: \"{{SITE}}/hold.html\"\n  - await: { visible: { text: released }, timeout: 300000 }\n  - launch: \"{{SITE}}/basket.html\"\n  - snapshot: basket\n",
		"bare.yaml": "steps:\n  - echo: a run with no device\n",
	}, "{{SITE}}", site.URL)
	if code, out, errOut := runCLI(t, "flow", "run", "held", "--project", root, "--device", device, "--update-baselines"); code != 0 {
		t.Fatalf("adopting the baseline: exit %d\n%s\n%s", code, out, errOut)
	}
	site.banner.Store("#8a1538")
	site.hold.Store(true)

	u := startServe(t, env{envAuthToken: token}, false, "--dashboard", "--state-dir", t.TempDir())
	proxy := newTCPProxy(t, strings.TrimPrefix(u, "http://"))

	// The user, on a device of its own.
	user := sharedDevice(t, "chromium-cdp-1100x700")
	dash := writeProject(t, map[string]string{
		"dashboard.yaml": `steps:
  - launch: "{{DASH}}/dashboard"
  - await: { visible: { id: token }, timeout: 30000 }
  - type: { into: { id: token }, text: "{{TOKEN}}", submit: false }
  - tap: Connect
  - await: { visible: { text: No runs yet }, timeout: 30000 }
  - echo: the dashboard lists no runs
  - await: { text: { in: { id: runs }, contains: held }, timeout: 60000 }
  - assert: { text: { in: { id: runs }, contains: running } }
  - tap: { text: held, within: { id: runs } }
  - await: { visible: { id: run-detail }, timeout: 30000 }
  - await: { visible: { role: button, text: Abandon, within: { id: run-detail } }, timeout: 30000 }
  - await: { text: { in: { id: step-1 }, contains: launch }, timeout: 60000 }
  - assert: { hidden: { role: button, text: Resume, within: { id: run-detail } } }
  - echo: the run is running and shows its first step
  - await: { text: { in: { id: run-status }, equals: failed }, timeout: 60000 }
  - await: { text: { in: { id: runs }, contains: failed }, timeout: 30000 }
  - assert: { hidden: { role: button, text: Abandon, within: { id: run-detail } } }
  - await: { text: { in: { id: step-4 }, contains: snapshot }, timeout: 30000 }
  - await: { text: { in: { id: snap-0 }, contains: "Baseline 333×213" }, timeout: 30000 }
  - await: { text: { in: { id: snap-0 }, contains: "Current 333×213" }, timeout: 30000 }
  - await: { text: { in: { id: snap-0 }, contains: "Diff 333×213" }, timeout: 30000 }
  - tap: { role: tab, text: Slider, within: { id: snap-0 } }
  - await: { visible: { id: snap-0-slider }, timeout: 30000 }
  - press: n
  - await: { visible: { text: "Failure 1 of 1" }, timeout: 30000 }
  - type: { into: { id: filter-label }, text: "suite:other", submit: true }
  - await: { visible: { text: No runs match the filters }, timeout: 30000 }
  - type: { into: { id: filter-label }, text: "suite:dash", submit: true }
  - await: { text: { in: { id: runs }, contains: held }, timeout: 30000 }
  - type: { into: { id: filter-label }, text: "suite:nodevice", submit: true }
  - tap: { text: bare, within: { id: runs } }
  - await: { text: { in: { id: run-status }, equals: passed }, timeout: 30000 }
  - assert: { text: { in: { id: run-head }, matches: '^\s*passed\s*bare\s*suite:nodevice\s*$' } }
  - echo: a run without a device shows none
`,
	}, "{{DASH}}", proxy.URL(), "{{TOKEN}}", token)
	// An echo the flow reached prints "  › …"; one it skipped, after an
	// earlier step failed, prints "  · › …" and must not count.
	listed, running := newLineWatch("  › the dashboard lists no runs"), newLineWatch("  › the run is running")
	errOut := newLineWatch()
	out := io.MultiWriter(listed, running)
	done := runAsync([]string{"flow", "run", "dashboard", "--project", dash, "--device", user},
		testStreams(t, nil, out, errOut))
	awaitLine(t, listed, errOut, done)

	id := startV1Run(t, u, token, fmt.Sprintf(`{"tool_args":{"name":"held","project_root":%q,"device":%q},"labels":{"suite":"dash"}}`, root, device))
	awaitLine(t, running, errOut, done)
	// A run without a device: its header shows none (no "null"). It starts
	// once the page has opened the held run: started with it, its row came
	// in above the held one between the flow finding "held" and tapping
	// it, and the tap opened the other run, or none.
	startV1Run(t, u, token, fmt.Sprintf(`{"tool_args":{"name":"bare","project_root":%q},"labels":{"suite":"nodevice"}}`, root))
	// The page's two streams, the list's (GET /v1/events) and the run's
	// (GET /v1/runs/{id}/events), are open: wait for both (a stream the
	// page is reconnecting under load comes back within its backoff),
	// then drop every connection.
	streams := func(open []string) bool {
		list, run := false, false
		for _, line := range open {
			list = list || strings.HasPrefix(line, "GET /v1/events ")
			run = run || strings.HasPrefix(line, "GET /v1/runs/"+id+"/events ")
		}
		return list && run
	}
	if !proxy.AwaitRequests(time.Minute, streams) {
		t.Fatalf("the page's two streams are not both open; its open connections last sent %q\nthe proxy's connections:\n%s\nthe dashboard flow so far:\n%s\n%s", proxy.Requests(), proxy.History(), listed, errOut)
	}
	if n := proxy.Drop(); n < 2 {
		t.Fatalf("the drop reset %d connections, want the page's two streams at least", n)
	}
	site.release()
	if code := waitExit(t, done, listed, errOut); code != 0 {
		t.Fatalf("the dashboard flow: exit %d\n%s\n%s", code, listed, errOut)
	}

	// The store agrees with what the page showed.
	var d runs.Detail
	getV1(t, u+"/v1/runs/"+id, token, &d)
	if d.Status.State != runs.Completed || d.Outcome != runs.FailedChecks || len(d.Snapshots) != 1 || len(d.Snapshots[0].Files) != 3 {
		t.Fatalf("the run: got %+v, outcome %q, with snapshots %+v; want completed, failed, with one snapshot of three images", d.Status, d.Outcome, d.Snapshots)
	}
	// The page is served without the token; nothing else is.
	resp, err := http.Get(u + "/dashboard")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(resp.Header.Get("Content-Security-Policy"), "connect-src 'self'") {
		t.Errorf("GET /dashboard without the token: got %d, CSP %q; want 200 with its CSP", resp.StatusCode, resp.Header.Get("Content-Security-Policy"))
	}
	resp, err = http.Get(u + "/v1/runs")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("GET /v1/runs without the token: got %d, want 401", resp.StatusCode)
	}
}

// awaitLine waits until w holds its line; the run ending first, or two
// minutes going by, fails the test.
func awaitLine(t *testing.T, w, errOut *lineWatch, done <-chan int) {
	t.Helper()
	select {
	case <-w.seen:
	case code := <-done:
		t.Fatalf("flow run exited %d before the line %q\n%s\n%s", code, w.want, w, errOut)
	case <-time.After(2 * time.Minute):
		t.Fatalf("no line %q\n%s\n%s", w.want, w, errOut)
	}
}

// startV1Run starts a run by POST /v1/runs with body and returns its id.
func startV1Run(t *testing.T, base, token, body string) string {
	t.Helper()
	req, err := http.NewRequest("POST", base+"/v1/runs", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out struct{ Run, Status string }
	b, _ := io.ReadAll(resp.Body)
	if err := json.Unmarshal(b, &out); err != nil || resp.StatusCode != http.StatusCreated || !runs.ValidID(out.Run) {
		t.Fatalf("POST /v1/runs: got %d %s, want 201 with a run id", resp.StatusCode, b)
	}
	return out.Run
}

// getV1 decodes GET url, sent with the token, into v.
func getV1(t *testing.T, url, token string, v any) {
	t.Helper()
	req, err := http.NewRequest("GET", url, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: got %d %s, want 200", url, resp.StatusCode, b)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
}

// TestDashboardShowsAStalledRun: two runs started by POST /v1/runs are
// held mid-way when their serve is killed (SIGKILL); a fresh serve over
// the same --state-dir reports them running with no driver. The
// dashboard, with a threshold of an hour, shows each as "no driver";
// with ?stale=1s, as "stalled" once a second has gone by with nothing
// recorded, each with a Resume button and its first attempt's steps. The
// user abandons one with a reason (shown as text, its markup too) and
// resumes the other: its steps start over as attempt 2 and it ends
// passed, the Resume button gone.
func TestDashboardShowsAStalledRun(t *testing.T) {
	t.Parallel()
	const token = "stall-s3cret-token"
	site := newHeldSite(t)
	site.hold.Store(true)
	flow := "steps:\n  - launch: \"{{SITE}}/hold.html\"\n  - await: { visible: { text: released }, timeout: 300000 }\n"
	root := writeProject(t, map[string]string{"held.yaml": flow, "stuck.yaml": flow}, "{{SITE}}", site.URL)
	state := t.TempDir()

	first := startServeProc(t, token, "--state-dir", state)
	start := func(name, device string) string {
		return startV1Run(t, first.url, token, fmt.Sprintf(`{"tool_args":{"name":%q,"project_root":%q,"device":%q},"labels":{"suite":"stall"}}`, name, root, device))
	}
	held, stuck := start("held", "chromium-cdp-333x213"), start("stuck", "chromium-cdp-334x213")
	awaitEvent(t, first.url, token, held, runs.KindStepCompleted)
	awaitEvent(t, first.url, token, stuck, runs.KindStepCompleted)
	first.kill()
	// The next attempt runs to its end.
	site.release()

	second := startServeProc(t, token, "--dashboard", "--state-dir", state)
	for _, id := range []string{held, stuck} {
		var r runs.Run
		getV1(t, second.url+"/v1/runs/"+id, token, &r)
		if r.Status.State != runs.Running || r.Driver != runs.DriverNone || !r.Resumable {
			t.Fatalf("run %s after the kill: %+v; want running, driver none, resumable", id, r)
		}
	}

	user := sharedDevice(t, "chromium-cdp-1101x700")
	login := `  - await: { visible: { id: token }, timeout: 30000 }
  - type: { into: { id: token }, text: "{{TOKEN}}", submit: false }
  - tap: Connect
`
	dash := writeProject(t, map[string]string{
		"stalled.yaml": `steps:
  - launch: "{{DASH}}/dashboard?stale=1h"
` + login + `  - await: { text: { in: { id: "run-{{HELD}}" }, contains: no driver }, timeout: 30000 }
  - assert: { text: { in: { id: "run-{{STUCK}}" }, contains: no driver } }
  - echo: runs with no driver, not yet stale
  - launch: "{{DASH}}/dashboard?stale=1s"
` + login + `  - await: { text: { in: { id: "run-{{HELD}}" }, contains: stalled }, timeout: 30000 }
  - await: { text: { in: { id: "run-{{STUCK}}" }, contains: stalled }, timeout: 30000 }
  - tap: { text: stuck, within: { id: runs } }
  - await: { visible: { role: button, text: Resume, within: { id: run-detail } }, timeout: 30000 }
  - await: { text: { in: { id: run-why }, contains: "stalled: the process that drove the run is gone" }, timeout: 30000 }
  - await: { text: { in: { id: step-1 }, contains: launch }, timeout: 30000 }
  - type: { into: { id: abandon-reason }, text: "<b>left</b> & gone", submit: false }
  - tap: { role: button, text: Abandon, within: { id: run-detail } }
  - await: { text: { in: { id: run-status }, equals: abandoned }, timeout: 30000 }
  - assert: { text: { in: { id: run-why }, equals: "abandoned: <b>left</b> & gone" } }
  - assert: { hidden: { role: button, text: Resume, within: { id: run-detail } } }
  - await: { text: { in: { id: "run-{{STUCK}}" }, contains: abandoned }, timeout: 30000 }
  - tap: { text: held, within: { id: runs } }
  - await: { visible: { role: button, text: Resume, within: { id: run-detail } }, timeout: 30000 }
  - await: { text: { in: { id: step-1 }, contains: launch }, timeout: 30000 }
  - tap: { role: button, text: Resume, within: { id: run-detail } }
  - await: { text: { in: { id: run-attempt }, contains: "attempt 2" }, timeout: 30000 }
  - await: { text: { in: { id: run-status }, equals: passed }, timeout: 60000 }
  - assert: { text: { in: { id: step-2 }, contains: await } }
  - assert: { hidden: { id: step-3 } }
  - assert: { hidden: { role: button, text: Resume, within: { id: run-detail } } }
  - await: { text: { in: { id: "run-{{HELD}}" }, contains: passed }, timeout: 30000 }
`,
	}, "{{DASH}}", second.url, "{{TOKEN}}", token, "{{HELD}}", held, "{{STUCK}}", stuck)
	if code, out, errOut := runCLI(t, "flow", "run", "stalled", "--project", dash, "--device", user); code != 0 {
		t.Fatalf("the dashboard flow: exit %d\n%s\n%s", code, out, errOut)
	}

	// The store agrees with what the page showed.
	var r runs.Run
	getV1(t, second.url+"/v1/runs/"+held, token, &r)
	if r.Status.State != runs.Completed || r.Outcome != runs.Passed || r.Attempt != 2 || r.Driver != "" {
		t.Errorf("the resumed run: %+v; want completed, passed, attempt 2, no driver field", r)
	}
	getV1(t, second.url+"/v1/runs/"+stuck, token, &r)
	if r.Status.State != runs.Abandoned || r.Status.Reason != "<b>left</b> & gone" {
		t.Errorf("the abandoned run: %+v; want abandoned with the reason typed", r)
	}
}

// awaitEvent reads run id's event stream on base until an event of kind
// comes; the stream ending first, or two minutes going by, fails the
// test.
func awaitEvent(t *testing.T, base, token, id, kind string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, "GET", base+"/v1/runs/"+id+"/events", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var seen []string
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			continue
		}
		var e runs.Event
		if json.Unmarshal([]byte(data), &e) != nil {
			continue
		}
		if e.Event.Kind == kind {
			return
		}
		seen = append(seen, e.Event.Kind)
	}
	t.Fatalf("run %s: no %s event (saw %v; %v)", id, kind, seen, sc.Err())
}
