package main

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolserver/toolserver/runs"
	v1 "github.com/toolserver/toolserver/runs/v1"
)

// holdPage is a page that answers only once released, and says when a
// browser first asked for it: a run that waits where the test wants.
type holdPage struct {
	url     string
	asked   chan struct{}
	release func()
}

func newHoldPage(t *testing.T) *holdPage {
	t.Helper()
	h := &holdPage{asked: make(chan struct{})}
	released := make(chan struct{})
	var asked, rel sync.Once
	h.release = func() { rel.Do(func() { close(released) }) }
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		asked.Do(func() { close(h.asked) })
		select {
		case <-released:
		case <-r.Context().Done():
			return
		}
		fmt.Fprint(w, `<!doctype html><p>finally here</p>`)
	}))
	h.url = srv.URL
	t.Cleanup(func() {
		h.release()
		srv.Close()
	})
	return h
}

// killedMidRun starts a serve over dir, starts a run of a flow that waits
// on page, kills the serve with SIGKILL while the run waits, and returns
// the run's id.
func killedMidRun(t *testing.T, dir, root string, page *holdPage) string {
	t.Helper()
	p := startServeProc(t, "", "--state-dir", dir)
	c := v1.NewClient(p.url, "")
	args := fmt.Sprintf(`{"name":"held","project_root":%q,"device":"chromium-cdp-640x400"}`, root)
	st, err := c.Start(t.Context(), runs.StartRequest{ToolArgs: []byte(args)})
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-page.asked:
	case <-time.After(time.Minute):
		t.Fatal("the run never asked for the held page")
	}
	p.kill()
	return st.Run
}

// followToEnd follows run id on the server at url to its end frame and
// returns the kinds of its events.
func followToEnd(t *testing.T, url, id string) ([]string, runs.EndFrame) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	var kinds []string
	end, err := v1.NewClient(url, "").Follow(ctx, id, 0, func(e runs.Event) error {
		kinds = append(kinds, e.Event.Kind)
		return nil
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return kinds, end
}

// TestResumeAfterSIGKILL: a run of POST /v1/runs whose serve was killed
// with SIGKILL mid-run is, for the next serve over the same --state-dir,
// running with no driver; POST /v1/runs/{id}/resume re-drives it from its
// recorded arguments (the flow again from its first step) to completed,
// and its log records the new attempt. With serve --resume-interrupted
// the next serve re-drives such a run by itself.
func TestResumeAfterSIGKILL(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	root := t.TempDir()
	page := newHoldPage(t)
	flowFile := filepath.Join(root, ".argent", "flows", "held.yaml")
	os.MkdirAll(filepath.Dir(flowFile), 0o755)
	if err := os.WriteFile(flowFile, []byte("steps:\n  - launch: \""+page.url+"/slow\"\n  - await: { visible: { text: finally here } }\n"), 0o644); err != nil {
		t.Fatal(err)
	}

	id := killedMidRun(t, dir, root, page)
	page.release()
	p := startServeProc(t, "", "--state-dir", dir)
	c := v1.NewClient(p.url, "")
	d, err := c.Get(t.Context(), id)
	if err != nil || d.Status.State != runs.Running || d.Driver != runs.DriverNone || !d.Resumable {
		t.Fatalf("the killed run, to the next serve: %+v, %v; want running, driver none, resumable", d.Run, err)
	}
	if kinds, end := followToEnd(t, p.url, id); !end.Detached || end.Status.State != runs.Running || kinds[0] != runs.KindRunStarted {
		t.Errorf("its stream: %v, end %+v; want its events and a detached end", kinds, end)
	}
	out, err := c.Resume(t.Context(), id)
	if err != nil || out.Outcome != runs.ResumeDriving {
		t.Fatalf("resume: %+v, %v", out, err)
	}
	kinds, end := followToEnd(t, p.url, id)
	if end.Status.Outcome() != runs.Passed || end.Detached {
		t.Fatalf("the resumed run's end: %+v (%v)", end, kinds)
	}
	if got := strings.Join(kinds[1:], " "); got != "RunResumed StepCompleted StepCompleted RunCompleted" {
		t.Errorf("the resumed run's log after RunStarted: %s", got)
	}
	if d, _ := c.Get(t.Context(), id); d.Attempt != 2 || d.StepCount != 2 || len(d.Steps) != 2 {
		t.Errorf("the resumed run: %+v", d.Run)
	}
	p.kill()

	// --resume-interrupted: the next serve re-drives it by itself.
	page2 := newHoldPage(t)
	os.WriteFile(flowFile, []byte("steps:\n  - launch: \""+page2.url+"/slow\"\n  - await: { visible: { text: finally here } }\n"), 0o644)
	id2 := killedMidRun(t, dir, root, page2)
	page2.release()
	p = startServeProc(t, "", "--state-dir", dir, "--resume-interrupted")
	if _, end := followToEnd(t, p.url, id2); end.Status.Outcome() != runs.Passed {
		t.Fatalf("the run --resume-interrupted re-drove: %+v", end)
	}
	if !strings.Contains(p.stderr.String(), "resumed run "+id2) {
		t.Errorf("serve did not say it resumed the run: %s", p.stderr)
	}
}
