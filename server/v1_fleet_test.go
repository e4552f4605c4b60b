package server_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/toolserver/toolserver/device/cdp/cdptest"
	"github.com/toolserver/toolserver/internal/pgtest"
	"github.com/toolserver/toolserver/runs"
)

// fleetRig is two servers over one PostgreSQL: two replicas of a fleet.
func fleetRig(t *testing.T) (a, b *v1Rig) {
	t.Helper()
	dsn := pgtest.DSN(t)
	open := func() *runs.Store {
		st, err := runs.OpenPostgres(t.Context(), dsn, runs.PostgresOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return st
	}
	return newV1RigOn(t, "", "", open()), newV1RigOn(t, "", "", open())
}

// TestV1AnyReplicaAnswers: a run started on one replica is listed,
// fetched, replayed and streamed on the other, its events as they are
// recorded and its end; the other abandons a run the first drives, which
// stops there and writes nothing more.
func TestV1AnyReplicaAnswers(t *testing.T) {
	t.Parallel()
	a, b := fleetRig(t)
	root := t.TempDir()
	writeFlow(t, root, "held", "steps:\n  - echo: first\n  - launch: \""+a.slowURL+"/slow\"\n  - await: { visible: { text: finally here } }\n")
	device := "chromium-cdp-904x604"
	cdptest.Claim(t, device)
	t.Cleanup(func() { cdptest.Stop(t, device) })
	id := a.start(t, root, "held", device, `,"labels":{"fleet":"yes"}`)

	resp, cancel := b.stream(t, "/v1/runs/"+id+"/events")
	defer cancel()
	first := readFrames(t, resp.Body, func(f sseFrame) bool { return f.id == "1" })
	a.release()
	rest := readFrames(t, resp.Body, nil)
	all := append(first, rest...)
	var kinds []string
	for i, f := range all[:len(all)-1] {
		var e runs.Event
		if json.Unmarshal([]byte(f.data), &e); e.Seq != int64(i) {
			t.Fatalf("frame %d on the other replica: %+v", i, f)
		}
		kinds = append(kinds, e.Event.Kind)
	}
	if end := all[len(all)-1]; end.event != "end" || !strings.Contains(end.data, `"state":"completed"`) || !strings.Contains(end.data, `"ok":true`) {
		t.Fatalf("the other replica's end frame: %+v (%v)", end, kinds)
	}
	if got := strings.Join(kinds, " "); got != "RunStarted StepCompleted StepCompleted StepCompleted RunCompleted" {
		t.Errorf("the events on the other replica: %s", got)
	}
	for _, path := range []string{"/v1/runs?label=fleet:yes&outcome=passed", "/v1/runs/" + id, "/v1/runs/" + id + "/replay"} {
		if code, body := b.do(t, "GET", path, ""); code != 200 || !strings.Contains(string(body), `"completed"`) {
			t.Errorf("GET %s on the other replica: %d %.300s", path, code, body)
		}
	}

	// The other replica abandons a run this one drives, held on a page
	// that never answers, once it has recorded its first step.
	a2, b2 := a, b
	stop := make(chan struct{})
	never := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-stop:
		}
	}))
	defer func() {
		close(stop)
		never.CloseClientConnections()
		never.Close()
	}()
	writeFlow(t, root, "hang", "steps:\n  - echo: first\n  - launch: \""+never.URL+"/never\"\n  - echo: never\n")
	hang := a2.startHeld(t, root, "hang", device)
	resp2, cancel2 := b2.stream(t, "/v1/runs/"+hang+"/events")
	defer cancel2()
	readFrames(t, resp2.Body, func(f sseFrame) bool { return f.id == "1" })
	code, body := b2.do(t, "POST", "/v1/runs/"+hang+"/abandon", `{"reason":"from the other replica"}`)
	if code != http.StatusOK || !strings.Contains(string(body), `"abandoned":true`) {
		t.Fatalf("abandon on the other replica: %d %s", code, body)
	}
	a2.plane.Wait() // the run stopped on its replica
	d, err := a2.store.Get(t.Context(), hang)
	if err != nil || d.Status.State != runs.Abandoned || d.Status.Reason != "from the other replica" {
		t.Errorf("the abandoned run: %+v %v", d.Run, err)
	}
	evs, _ := a2.store.Events(t.Context(), hang, 0)
	if last := evs[len(evs)-1]; last.Event.Kind != runs.KindRunAbandoned {
		t.Errorf("its log ends %s, want %s: nothing written after the abandonment", last.Event.Kind, runs.KindRunAbandoned)
	}
}

// startHeld starts a run of flow name on device and returns its id.
func (r *v1Rig) startHeld(t *testing.T, root, name, device string) string {
	t.Helper()
	code, b := r.do(t, "POST", "/v1/runs", fmt.Sprintf(`{"tool_args":{"name":%q,"project_root":%q,"device":%q}}`, name, root, device))
	var st runs.Started
	if json.Unmarshal(b, &st); code != http.StatusCreated {
		t.Fatalf("POST /v1/runs: %d %s", code, b)
	}
	return st.Run
}
