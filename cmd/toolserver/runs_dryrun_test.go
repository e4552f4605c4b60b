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
)

// TestRunsEventsYAMLAndDryRuns, against a real serve: flow run --detach
// --dry-run prints the runs it would start and starts none; runs events
// -o yaml prints a YAML stream, one document per event; runs cancel
// --dry-run says a running run would be cancelled and cancels nothing,
// and has the real cancel's exits for an ended run (1) and an unknown
// one (2).
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
	if len(kinds) < 3 || kinds[0] != "run_started" {
		t.Errorf("the YAML stream's events: %q", kinds)
	}

	code, _, errOut = runCLI(t, "runs", "cancel", alpha, "--link", u, "--dry-run")
	if code != 1 || !strings.Contains(errOut, "run "+alpha+" is passed, not running: nothing to cancel") {
		t.Errorf("runs cancel --dry-run of an ended run: exit %d\n%s", code, errOut)
	}
	code, _, errOut = runCLI(t, "runs", "cancel", "99999999-2222-4333-8444-555555555555", "--link", u, "--dry-run")
	if code != 2 || !strings.Contains(errOut, "no run 99999999-2222-4333-8444-555555555555") {
		t.Errorf("runs cancel --dry-run of an unknown run: exit %d\n%s", code, errOut)
	}

	code, out, errOut = runCLI(t, "flow", "run", "held", "--project", root, "--device", device, "--link", u, "--detach")
	held, _, _ := strings.Cut(out, "\t")
	if code != 0 || len(held) != 36 {
		t.Fatalf("flow run held --detach: exit %d\n%s%s", code, out, errOut)
	}
	code, out, errOut = runCLI(t, "runs", "cancel", held, "--link", u, "--dry-run")
	if code != 0 || out != "Run "+held+" is running: runs cancel would cancel it\n" {
		t.Errorf("runs cancel --dry-run of a running run: exit %d\n%s%s", code, out, errOut)
	}
	code, out, _ = runCLI(t, "runs", "cancel", held, "--link", u, "--dry-run", "-o", "yaml")
	if code != 0 || out != "run: "+held+"\nstatus: running\ndry_run: true\n" && out != "dry_run: true\nrun: "+held+"\nstatus: running\n" {
		t.Errorf("runs cancel --dry-run -o yaml: exit %d\n%s", code, out)
	}
	// Nothing was cancelled: the run is running until the real cancel,
	// which ends it cancelled.
	if r := listRuns(); len(r) != 2 || r[0].ID != held || r[0].Status != runs.Running {
		t.Errorf("after the dry runs: %+v", r)
	}
	if code, _, errOut := runCLI(t, "runs", "cancel", held, "--link", u); code != 0 {
		t.Fatalf("runs cancel: exit %d\n%s", code, errOut)
	}
	if code, out, _ := runCLI(t, "runs", "events", held, "--link", u); code != 1 || !strings.Contains(out, "Run "+held+" cancelled") {
		t.Errorf("the held run after the cancel: exit %d\n%s", code, out)
	}
}
