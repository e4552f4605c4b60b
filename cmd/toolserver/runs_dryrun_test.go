package main

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/toolserver/toolserver/runs"
	v1 "github.com/toolserver/toolserver/runs/v1"
)

// TestRunsEventsYAMLAndDryRuns, against a real serve: flow run --detach
// --dry-run prints the runs it would start and starts none; runs events
// -o yaml prints a YAML stream, one document per event; runs abandon
// --dry-run (and cancel, its alias) says a running run would be abandoned
// and abandons nothing, with the real abandon's exits for an ended run
// (1) and an unknown one (2); the real abandon over the link ends the run
// abandoned, as its stream's end frame says; get, replay, resume and
// abandon print YAML with -o yaml.
func TestRunsEventsYAMLAndDryRuns(t *testing.T) {
	t.Parallel()
	device := sharedDevice(t, "chromium-cdp-347x229")
	// The page of held.yaml answers only when the test ends, so its run
	// is running for as long as the test needs.
	released := make(chan struct{})
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		select {
		case <-released:
		case <-req.Context().Done():
		}
	}))
	t.Cleanup(slow.Close)
	t.Cleanup(func() { close(released) })
	root := writeProject(t, map[string]string{
		"alpha.yaml": "steps:\n  - launch: \"{{URL}}/app.html\"\n  - echo: hi\n",
		"held.yaml":  "steps:\n  - launch: \"{{SLOW}}/slow\"\n  - echo: never\n",
	}, "{{SLOW}}", slow.URL)
	u := startServe(t, nil, false, "--state-dir", t.TempDir())
	listRuns := func() []runs.Run {
		t.Helper()
		code, out, errOut := runCLI(t, "runs", "list", "--link", u, "-o", "json")
		var list struct{ Runs []runs.Run }
		if err := json.Unmarshal([]byte(out), &list); code != 0 || err != nil {
			t.Fatalf("runs list: exit %d %v\n%s%s", code, err, out, errOut)
		}
		return list.Runs
	}

	detach := []string{"flow", "run", "alpha", "--project", root, "--device", device, "--link", u, "--detach", "--label", "ci:42"}
	code, out, errOut := runCLI(t, append(detach, "--dry-run")...)
	if want := "would start alpha on " + device + " labelled ci:42\n"; code != 0 || out != want {
		t.Errorf("--detach --dry-run: exit %d\n%q, want %q\n%s", code, out, want, errOut)
	}
	code, out, _ = runCLI(t, append(detach, "--dry-run", "-o", "json")...)
	var plan struct {
		DryRun bool `json:"dry_run"`
		Runs   []detachPlan
	}
	if err := json.Unmarshal([]byte(out), &plan); code != 0 || err != nil || !plan.DryRun || len(plan.Runs) != 1 ||
		plan.Runs[0].Flow != "alpha" || plan.Runs[0].Device != device || len(plan.Runs[0].Labels) != 1 || plan.Runs[0].Labels["ci"] != "42" {
		t.Errorf("--detach --dry-run -o json: exit %d %v\n%s", code, err, out)
	}
	if got := listRuns(); len(got) != 0 {
		t.Fatalf("--detach --dry-run started %d runs", len(got))
	}

	code, out, errOut = runCLI(t, detach...)
	alpha, _, _ := strings.Cut(out, "\t")
	if code != 0 || len(alpha) != 36 {
		t.Fatalf("flow run --detach: exit %d\n%s%s", code, out, errOut)
	}
	code, out, errOut = runCLI(t, "runs", "events", alpha, "--link", u, "-o", "yaml")
	if code != 0 || !strings.HasPrefix(out, "---\nrun_id: ") {
		t.Fatalf("runs events -o yaml: exit %d, not a YAML stream\n%s%s", code, out, errOut)
	}
	dec := yaml.NewDecoder(strings.NewReader(out))
	var kinds []string
	for {
		var e struct {
			RunID string `yaml:"run_id"`
			Seq   int64
			Event struct{ Kind string }
		}
		err := dec.Decode(&e)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil || e.RunID != alpha || e.Seq != int64(len(kinds)) {
			t.Fatalf("event %d of the YAML stream: %v %+v\n%s", len(kinds)+1, err, e, out)
		}
		kinds = append(kinds, e.Event.Kind)
	}
	if len(kinds) < 3 || kinds[0] != runs.KindRunStarted || kinds[len(kinds)-1] != runs.KindRunCompleted {
		t.Errorf("the YAML stream's events: %q", kinds)
	}

	// -o yaml is YAML (block style, not JSON) that reads back to the
	// command's data.
	for _, args := range [][]string{{"get", alpha}, {"replay", alpha}, {"resume", alpha}, {"resume", alpha, "--dry-run"}} {
		code, out, errOut := runCLI(t, append(append([]string{"runs"}, args...), "--link", u, "-o", "yaml")...)
		var doc struct {
			Run    string
			Status any
		}
		if err := yaml.Unmarshal([]byte(out), &doc); code != 0 || err != nil || strings.HasPrefix(out, "{") {
			t.Errorf("runs %q -o yaml: exit %d %v\n%s%s", args, code, err, out, errOut)
			continue
		}
		if st, ok := doc.Status.(map[string]any); !ok || st["state"] != runs.Completed {
			t.Errorf("runs %q -o yaml: status %#v, want the status object of a completed run\n%s", args, doc.Status, out)
		}
		if args[0] != "replay" && doc.Run != alpha {
			t.Errorf("runs %q -o yaml: run %q, want %s\n%s", args, doc.Run, alpha, out)
		}
	}

	for _, verb := range []string{"abandon", "cancel"} {
		code, _, errOut = runCLI(t, "runs", verb, alpha, "--link", u, "--dry-run")
		if code != 1 || !strings.Contains(errOut, "runs "+verb+": run "+alpha+" is completed, not running: nothing to abandon") {
			t.Errorf("runs %s --dry-run of an ended run: exit %d\n%s", verb, code, errOut)
		}
		code, _, errOut = runCLI(t, "runs", verb, "99999999-2222-4333-8444-555555555555", "--link", u, "--dry-run")
		if code != 2 || !strings.Contains(errOut, "no run 99999999-2222-4333-8444-555555555555") {
			t.Errorf("runs %s --dry-run of an unknown run: exit %d\n%s", verb, code, errOut)
		}
	}

	code, out, errOut = runCLI(t, "flow", "run", "held", "--project", root, "--device", device, "--link", u, "--detach")
	held, _, _ := strings.Cut(out, "\t")
	if code != 0 || len(held) != 36 {
		t.Fatalf("flow run held --detach: exit %d\n%s%s", code, out, errOut)
	}
	code, out, errOut = runCLI(t, "runs", "abandon", held, "--link", u, "--dry-run")
	if code != 0 || out != "Run "+held+" is running: runs abandon would abandon it\n" {
		t.Errorf("runs abandon --dry-run of a running run: exit %d\n%s%s", code, out, errOut)
	}
	code, out, _ = runCLI(t, "runs", "cancel", held, "--link", u, "--dry-run", "-o", "yaml")
	if want := "dry_run: true\nrun: " + held + "\nstatus:\n  state: running\n"; code != 0 || out != want {
		t.Errorf("runs cancel --dry-run -o yaml: exit %d\n%s\nwant\n%s", code, out, want)
	}
	// Nothing was abandoned: the run is running, driven, until the real
	// abandon, which ends it abandoned with its reason.
	r := listRuns()
	if len(r) != 2 || r[0].ID != held || r[0].Status.State != runs.Running || r[0].Driver != runs.DriverAttached {
		t.Fatalf("after the dry runs: %+v", r)
	}
	code, out, errOut = runCLI(t, "runs", "abandon", held, "--link", u, "--reason", "by the test", "-o", "yaml")
	var rc struct {
		Run         string
		Abandoned   bool
		AppendedSeq int64 `yaml:"appended_seq"`
		Status      struct{ State, Reason string }
	}
	if err := yaml.Unmarshal([]byte(out), &rc); code != 0 || err != nil || rc.Run != held || !rc.Abandoned ||
		rc.AppendedSeq != r[0].EventCount || rc.Status.State != runs.Abandoned || rc.Status.Reason != "by the test" {
		t.Fatalf("runs abandon -o yaml: exit %d %v %+v\n%s%s", code, err, rc, out, errOut)
	}
	if code, out, _ := runCLI(t, "runs", "events", held, "--link", u); code != 1 || !strings.HasSuffix(out, "Run "+held+" abandoned\nabandoned: by the test\n") {
		t.Errorf("the held run after the abandon: exit %d\n%s", code, out)
	}
	end, err := v1.NewClient(u, "").Follow(t.Context(), held, rc.AppendedSeq, func(runs.Event) error { return nil }, nil)
	if err != nil || end.Status.State != runs.Abandoned || end.Status.Reason != "by the test" || end.Detached {
		t.Errorf("the stream's end frame after the abandon: %+v %v", end, err)
	}
	if code, _, errOut := runCLI(t, "runs", "abandon", held, "--link", u); code != 1 || !strings.Contains(errOut, "wrong state: run "+held+" is abandoned") {
		t.Errorf("runs abandon of the abandoned run: exit %d\n%s", code, errOut)
	}
}
