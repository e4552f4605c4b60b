package server_test

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/toolserver/toolserver/device/cdp/cdptest"
	"github.com/toolserver/toolserver/runs"
)

// TestV1ReplayAndResume: replay is the fold of a run's log, the same
// status GET reads; resuming a finished run is 200 with its status and
// changes nothing; resuming one its driver runs is 202 driving and
// starts no second driver.
func TestV1ReplayAndResume(t *testing.T) {
	t.Parallel()
	r := newV1Rig(t, "", "")
	id := r.quick(t, "")
	code, b := r.do(t, "GET", "/v1/runs/"+id+"/replay", "")
	var rp runs.Replay
	if json.Unmarshal(b, &rp); code != 200 || rp.Status.State != runs.Completed || rp.Outcome != runs.Passed || rp.NextSeq != 3 || rp.StepCount != 1 || rp.Attempt != 1 {
		t.Errorf("replay: %d %s", code, b)
	}
	code, b = r.do(t, "POST", "/v1/runs/"+id+"/resume", "")
	var out struct {
		Run, Outcome string
		Status       runs.Status
	}
	if json.Unmarshal(b, &out); code != 200 || out.Run != id || out.Outcome != runs.Completed || out.Status.State != runs.Completed || out.Status.Output == nil {
		t.Errorf("resume of a completed run: %d %s, want 200 with its status", code, b)
	}
	if d, _ := r.store.Get(t.Context(), id); d.EventCount != 3 {
		t.Errorf("the resume of a finished run recorded something: %d events", d.EventCount)
	}

	root := t.TempDir()
	writeFlow(t, root, "held", "steps:\n  - launch: \""+r.slowURL+"/slow\"\n  - echo: after\n")
	device := "chromium-cdp-903x603"
	cdptest.Claim(t, device)
	t.Cleanup(func() { cdptest.Stop(t, device) })
	held := r.start(t, root, "held", device, "")
	code, b = r.do(t, "POST", "/v1/runs/"+held+"/resume", "")
	if code != http.StatusAccepted || string(b) != `{"run":"`+held+`","outcome":"driving","status":"running"}`+"\n" {
		t.Errorf("resume of a driven run: %d %s, want 202 driving", code, b)
	}
	r.release()
	if s := r.waitStatus(t, held); s.Outcome() != runs.Passed {
		t.Fatalf("the held run: %+v", s)
	}
	evs, _ := r.store.Events(t.Context(), held, 0)
	for _, e := range evs {
		if e.Event.Kind == runs.KindRunResumed {
			t.Errorf("a resume of a driven run started an attempt: %+v", e)
		}
	}
}
