package main

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/toolserver/toolserver/runs"
)

// TestDetachedRunsAndTheRunsCommands: flow run --detach starts runs on a
// tool-server that keeps them, runs events follows each to its end (exit
// by its outcome), runs list/get show them with their labels and steps,
// list pages with next_before, replay folds a run's log, resume leaves a
// finished run alone, and an attached linked run is recorded too.
func TestDetachedRunsAndTheRunsCommands(t *testing.T) {
	t.Parallel()
	device := sharedDevice(t, "chromium-cdp-334x214")
	root := reviewedProject(t, device, true)
	u := startServe(t, nil, false, "--state-dir", t.TempDir())
	idRE := regexp.MustCompile(`^([0-9a-f-]{36})\t(\w+)\n$`)

	detach := func(name string) string {
		t.Helper()
		code, out, errOut := runCLI(t, "flow", "run", name, "--project", root, "--device", device, "--link", u, "--detach", "--label", "ci:42")
		m := idRE.FindStringSubmatch(out)
		if code != 0 || m == nil || m[2] != name {
			t.Fatalf("flow run %s --detach: exit %d\n%s\n%s", name, code, out, errOut)
		}
		return m[1]
	}
	alpha := detach("alpha")
	code, out, errOut := runCLI(t, "runs", "events", alpha, "--link", u)
	if code != 0 || !strings.Contains(out, `snapshot "top"`) || !strings.Contains(out, "Run "+alpha+" passed") {
		t.Fatalf("runs events of a passing run: exit %d\n%s\n%s", code, out, errOut)
	}
	beta := detach("beta")
	code, out, _ = runCLI(t, "runs", "events", beta, "--link", u)
	if code != 1 || !strings.Contains(out, "Run "+beta+" failed") {
		t.Fatalf("runs events of a failing run: exit %d\n%s", code, out)
	}
	// An attached linked run is a run of the store too.
	if code, out, errOut := runCLI(t, "flow", "run", "alpha", "--project", root, "--device", device, "--link", u); code != 0 {
		t.Fatalf("an attached linked run: exit %d\n%s\n%s", code, out, errOut)
	}

	code, out, _ = runCLI(t, "runs", "list", "--link", u, "-o", "json")
	var list runs.Page
	if err := json.Unmarshal([]byte(out), &list); code != 0 || err != nil || len(list.Runs) != 3 || list.NextBefore != "" {
		t.Fatalf("runs list -o json: exit %d %v\n%s", code, err, out)
	}
	if r := list.Runs[0]; r.Source != "tools" || r.Flow != "alpha" || r.Status.State != runs.Completed || r.Outcome != runs.Passed || !r.Linked {
		t.Errorf("the attached run: %+v", r)
	}
	if r := list.Runs[1]; r.ID != beta || r.Source != "v1" || r.Labels["ci"] != "42" || r.Status.State != runs.Completed || r.Outcome != runs.FailedChecks || r.Device != device {
		t.Errorf("the detached run: %+v", r)
	}
	code, out, _ = runCLI(t, "runs", "list", "--link", u, "--label", "ci:42", "--outcome", "failed")
	if code != 0 || !strings.Contains(out, beta) || strings.Contains(out, alpha) || !strings.HasPrefix(out, "RUN") || strings.Contains(out, "more:") {
		t.Errorf("runs list --label --outcome: exit %d\n%s", code, out)
	}
	if code, out, _ := runCLI(t, "runs", "list", "--link", u, "--status", "completed", "--outcome", "passed", "-o", "json"); code != 0 ||
		!strings.Contains(out, alpha) || strings.Contains(out, beta) {
		t.Errorf("runs list --status completed --outcome passed: exit %d\n%s", code, out)
	}
	// Paging: a page of one says the cursor of the next, which is the
	// next older run; the last page says none.
	code, out, _ = runCLI(t, "runs", "list", "--link", u, "--limit", "1")
	if want := "more: --before " + list.Runs[0].ID + "\n"; code != 0 || !strings.HasSuffix(out, want) || strings.Count(out, "\n") != 3 {
		t.Errorf("runs list --limit 1: exit %d\n%s\nwant a last line %q", code, out, want)
	}
	code, out, _ = runCLI(t, "runs", "list", "--link", u, "--limit", "1", "--before", list.Runs[1].ID, "-o", "json")
	var page runs.Page
	if err := json.Unmarshal([]byte(out), &page); code != 0 || err != nil || len(page.Runs) != 1 || page.Runs[0].ID != alpha || page.NextBefore != "" {
		t.Errorf("runs list --limit 1 --before (the last page): exit %d %v\n%s", code, err, out)
	}
	code, out, _ = runCLI(t, "runs", "list", "--link", u, "--limit", "2", "-o", "yaml")
	var ypage struct {
		Runs []struct {
			Run    string
			Status struct{ State string }
		}
		NextBefore string `yaml:"next_before"`
	}
	if err := yaml.Unmarshal([]byte(out), &ypage); code != 0 || err != nil || len(ypage.Runs) != 2 || ypage.NextBefore != beta || ypage.Runs[1].Status.State != runs.Completed {
		t.Errorf("runs list --limit 2 -o yaml: exit %d %v\n%s", code, err, out)
	}
	// Replay folds the log: over the link as in the store.
	code, out, _ = runCLI(t, "runs", "replay", beta, "--link", u)
	if code != 0 || !strings.HasPrefix(out, "Run "+beta+": completed (failed), attempt 1\n") {
		t.Errorf("runs replay: exit %d\n%s", code, out)
	}
	// A finished run is left alone by a resume, which says its state.
	code, out, errOut = runCLI(t, "runs", "resume", alpha, "--link", u)
	if code != 0 || !strings.HasPrefix(out, "Run "+alpha+" had finished: completed (passed); nothing to resume\n") {
		t.Errorf("runs resume of a finished run: exit %d\n%s%s", code, out, errOut)
	}
	code, out, errOut = runCLI(t, "runs", "resume", beta, "--link", u, "--dry-run")
	if code != 0 || !strings.Contains(out, "had finished: completed (failed); resume would leave it alone") {
		t.Errorf("runs resume --dry-run of a finished run: exit %d\n%s%s", code, out, errOut)
	}
	code, out, _ = runCLI(t, "runs", "get", beta, "--link", u)
	if code != 0 || !strings.Contains(out, "Run "+beta+": failed") || !strings.Contains(out, `snapshot "basket"`) {
		t.Errorf("runs get: exit %d\n%s", code, out)
	}
	// A run that ended cannot be abandoned: a failed result (1), with the
	// server's wrong_state message, not a usage error; cancel, its alias,
	// alike.
	for _, verb := range []string{"abandon", "cancel"} {
		code, _, errOut = runCLI(t, "runs", verb, beta, "--link", u)
		if code != 1 || !strings.Contains(errOut, "toolserver: runs "+verb+": wrong state: run "+beta+" is completed") {
			t.Errorf("runs %s of an ended run: exit %d\n%s", verb, code, errOut)
		}
	}
	code, _, errOut = runCLI(t, "runs", "get", "99999999-2222-4333-8444-555555555555", "--link", u)
	if code != 2 || !strings.Contains(errOut, "no run 99999999-2222-4333-8444-555555555555") {
		t.Errorf("runs get of an unknown run: exit %d\n%s", code, errOut)
	}
	for _, args := range [][]string{
		{"flow", "run", "alpha", "--project", root, "--detach"},
		{"flow", "run", "alpha", "--project", root, "--detach", "--link", u, "--update-baselines"},
		{"flow", "run", "alpha", "--project", root, "--label", "a:b"},
		{"runs", "list"},
	} {
		if code, _, errOut := runCLI(t, args...); code != 2 || errOut == "" {
			t.Errorf("%q: exit %d, want a usage error\n%s", args, code, errOut)
		}
	}
}

// evil is a string a client of a shared tool-server may put in a label
// or an echo: it retitles the terminal (OSC 0, ended by BEL) and clears
// the screen (CSI 2J).
const evil = "\x1b]0;x\x07\x1b[2J"

// TestRunsTextOutputEscapesControls: a run whose label and echo hold
// terminal escapes is shown by runs events, list and get, and the echo by
// flow run, with the escapes written out, never a raw ESC or BEL; -o
// yaml, which cannot hold a raw C1 control or DEL, prints them escaped
// too.
func TestRunsTextOutputEscapesControls(t *testing.T) {
	t.Parallel()
	device := sharedDevice(t, "chromium-cdp-341x221")
	root := writeProject(t, map[string]string{
		"evil.yaml": "steps:\n  - launch: \"{{URL}}/app.html\"\n  - echo: \"\\e]0;x\\a\\e[2J\"\n",
	})
	u := startServe(t, nil, false, "--state-dir", t.TempDir())
	code, out, errOut := runCLI(t, "flow", "run", "evil", "--project", root, "--device", device, "--link", u, "--detach",
		"--label", "who:"+evil, "--label", "c1:\u009b31m\x7f")
	id, _, _ := strings.Cut(out, "\t")
	if code != 0 || len(id) != 36 {
		t.Fatalf("flow run --detach: exit %d\n%s\n%s", code, out, errOut)
	}
	escaped := `\u001b]0;x\u0007\u001b[2J`
	for _, args := range [][]string{
		{"runs", "events", id},
		{"runs", "list"},
		{"runs", "get", id},
	} {
		code, out, errOut := runCLI(t, append(args, "--link", u)...)
		if code != 0 {
			t.Fatalf("%q: exit %d\n%s\n%s", args, code, out, errOut)
		}
		if strings.ContainsAny(out+errOut, "\x1b\x07\u009b\x7f") {
			t.Errorf("%q printed a raw control character:\n%q", args, out+errOut)
		}
		if !strings.Contains(out, escaped) {
			t.Errorf("%q: got\n%s\nwant the escapes written %s", args, out, escaped)
		}
	}
	// flow run's step lines, locally and over the link, alike.
	for _, args := range [][]string{
		{"flow", "run", "evil", "--project", root, "--device", device},
		{"flow", "run", "evil", "--project", root, "--device", device, "--link", u},
	} {
		code, out, errOut := runCLI(t, args...)
		if code != 0 || strings.ContainsAny(out+errOut, "\x1b\x07") || !strings.Contains(out, "› "+escaped) {
			t.Errorf("%q: exit %d\n%q\n%q\nwant the echo escaped", args, code, out, errOut)
		}
	}
	code, out, errOut = runCLI(t, "runs", "list", "--link", u, "-o", "yaml")
	if code != 0 || strings.ContainsAny(out, "\x1b\x07\u009b\x7f") || !strings.Contains(out, `c1: "\x9B31m\x7F"`) {
		t.Errorf("runs list -o yaml: exit %d\n%s\n%s", code, out, errOut)
	}
	code, out, _ = runCLI(t, "runs", "list", "--link", u, "-o", "json")
	if code != 0 || strings.ContainsAny(out, "\x1b\x07\u009b\x7f") || !strings.Contains(out, `"c1": "\u009b31m\u007f"`) {
		t.Errorf("runs list -o json: exit %d\n%s", code, out)
	}
}

// TestRunsGetOfARunWithoutDevice: an invalid flow is refused before any
// run exists (flow run --detach exits 2 with the reason); a run that has
// no device yet is shown without an "on" and its empty device.
func TestRunsGetOfARunWithoutDevice(t *testing.T) {
	t.Parallel()
	root := writeProject(t, map[string]string{
		"broken.yaml": "steps:\n  - launch: \"{{URL}}/app.html\"\n  - tap: { nope: 1 }\n",
	})
	state := t.TempDir()
	id := leftRunning(t, state, runs.Begin{Flow: "broken", Source: "v1", Args: []byte(`{}`)})[0]
	u := startServe(t, nil, false, "--state-dir", state)
	code, out, errOut := runCLI(t, "flow", "run", "broken", "--project", root, "--link", u, "--detach")
	if code != 2 || out != "" || !strings.Contains(errOut, `tap: unknown option "nope"`) {
		t.Errorf("flow run --detach of an invalid flow: exit %d\n%s\n%s", code, out, errOut)
	}
	if code, out, _ := runCLI(t, "runs", "list", "--link", u, "-o", "json"); code != 0 || strings.Count(out, `"run":`) != 1 {
		t.Errorf("the refused start created a run: exit %d\n%s", code, out)
	}
	code, out, errOut = runCLI(t, "runs", "get", id, "--link", u)
	header, _, _ := strings.Cut(out, "\n")
	if want := "Run " + id + ": running (no driver) (flow \"broken\", started "; code != 0 || !strings.HasPrefix(header, want) {
		t.Errorf("runs get: exit %d\n%s\n%s\nwant a header without a device: %s", code, out, errOut, want)
	}
}

// TestRunsReadTheStoreDirectly: runs list, get and events read a state
// directory directly, no server asked, while the serve that holds it runs.
func TestRunsReadTheStoreDirectly(t *testing.T) {
	t.Parallel()
	device := sharedDevice(t, "chromium-cdp-334x215")
	root := reviewedProject(t, device, true)
	state := t.TempDir()
	u := startServe(t, nil, false, "--state-dir", state)
	code, out, errOut := runCLI(t, "flow", "run", "alpha", "--project", root, "--device", device, "--link", u)
	if code != 0 {
		t.Fatalf("a linked run: exit %d\n%s\n%s", code, out, errOut)
	}
	code, out, errOut = runCLI(t, "runs", "list", "--state-dir", state, "-o", "json")
	var list struct{ Runs []runs.Run }
	if err := json.Unmarshal([]byte(out), &list); code != 0 || err != nil || len(list.Runs) != 1 || list.Runs[0].Flow != "alpha" || list.Runs[0].Outcome != runs.Passed {
		t.Fatalf("runs list --state-dir beside the serve that holds it: exit %d %v\n%s\n%s", code, err, out, errOut)
	}
	id := list.Runs[0].ID
	if code, out, _ := runCLI(t, "runs", "get", id, "--state-dir", state); code != 0 || !strings.Contains(out, `snapshot "top"`) {
		t.Errorf("runs get --state-dir: exit %d\n%s", code, out)
	}
	if code, out, _ := runCLI(t, "runs", "events", id, "--state-dir", state); code != 0 || !strings.Contains(out, "Run "+id+" passed") {
		t.Errorf("runs events --state-dir: exit %d\n%s", code, out)
	}
	// Replay folds the store's log, read beside the serve that holds it,
	// to what the server's replay says.
	code, out, errOut = runCLI(t, "runs", "replay", id, "--state-dir", state, "-o", "yaml")
	var rp struct {
		Status    struct{ State string }
		Outcome   string
		NextSeq   int64 `yaml:"next_seq"`
		StepCount int64 `yaml:"step_count"`
		Attempt   int
	}
	if err := yaml.Unmarshal([]byte(out), &rp); code != 0 || err != nil || strings.HasPrefix(out, "{") || rp.Status.State != runs.Completed ||
		rp.Outcome != runs.Passed || rp.NextSeq != list.Runs[0].EventCount || rp.StepCount != list.Runs[0].StepCount || rp.StepCount == 0 || rp.Attempt != 1 {
		t.Errorf("runs replay --state-dir -o yaml: exit %d %v %+v\n%s%s", code, err, rp, out, errOut)
	}
	_, fromDir, _ := runCLI(t, "runs", "replay", id, "--state-dir", state, "-o", "json")
	_, fromLink, _ := runCLI(t, "runs", "replay", id, "--link", u, "-o", "json")
	if fromDir != fromLink || fromDir == "" {
		t.Errorf("runs replay: the store says\n%s\nthe server\n%s", fromDir, fromLink)
	}
	if code, _, errOut := runCLI(t, "runs", "list", "--state-dir", state, "--link", u); code != exitUsage || !strings.Contains(errOut, "give one of --state-dir, --store and --link") {
		t.Errorf("--state-dir with --link: exit %d, %s", code, errOut)
	}
	empty := t.TempDir()
	if code, _, errOut := runCLI(t, "runs", "list", "--state-dir", empty); code != exitUsage || !strings.Contains(errOut, "no run store in "+empty) {
		t.Errorf("a directory without a store: exit %d, %s", code, errOut)
	}
	if code, _, errOut := runCLI(t, "runs", "get", "0000000a-0000-4000-8000-000000000000", "--state-dir", state); code != exitUsage || !strings.Contains(errOut, "unknown run") {
		t.Errorf("an unknown run: exit %d, %s", code, errOut)
	}
}

// leftRunning writes a store in dir holding one run per begin, each left
// running by a process that is gone (the store closed under it), with
// recorded arguments: running with no driver, resumable.
func leftRunning(t *testing.T, dir string, begins ...runs.Begin) []string {
	t.Helper()
	st, err := runs.Open(dir, 0)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, b := range begins {
		rec, err := st.Start(t.Context(), b)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, rec.ID())
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	return ids
}

// getRun is runs get -o json of id in the store in dir.
func getRun(t *testing.T, dir, id string) runs.Detail {
	t.Helper()
	code, out, errOut := runCLI(t, "runs", "get", id, "--state-dir", dir, "-o", "json")
	var d runs.Detail
	if err := json.Unmarshal([]byte(out), &d); code != 0 || err != nil {
		t.Fatalf("runs get %s: exit %d %v\n%s%s", id, code, err, out, errOut)
	}
	return d
}

// TestRunsAbandonInTheStore: with no serve holding it, runs abandon
// --state-dir writes the store directly (--dry-run writes nothing); a run
// that ended is exit 1, an unknown one 2; runs events of a run left
// running with no driver says how to resume it (exit 1). While a serve
// holds the store, abandon without --link is refused, saying to use it,
// and abandon --link abandons through it; runs resume without --link
// says a tool-server resumes.
func TestRunsAbandonInTheStore(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	args := []byte(`{"name":"gone","project_root":"/nonexistent"}`)
	ids := leftRunning(t, dir,
		runs.Begin{Flow: "gone", Source: "v1", Args: args, Labels: map[string]string{"ci": "7"}},
		runs.Begin{Flow: "later", Source: "v1", Args: args})
	left, later := ids[0], ids[1]

	code, out, errOut := runCLI(t, "runs", "events", left, "--state-dir", dir)
	if code != 1 || !strings.Contains(out, "Run "+left+" is running with no driver") || !strings.Contains(out, "toolserver runs resume "+left+" --link URL") ||
		!strings.Contains(out, "serve --state-dir DIR --resume-interrupted") {
		t.Errorf("runs events of a run with no driver: exit %d\n%s%s", code, out, errOut)
	}

	before := getRun(t, dir, left)
	if before.Status.State != runs.Running || before.Driver != runs.DriverNone || !before.Resumable {
		t.Fatalf("the run left running: %+v", before.Run)
	}
	code, out, errOut = runCLI(t, "runs", "abandon", left, "--state-dir", dir, "--dry-run")
	if code != 0 || out != "Run "+left+" is running: runs abandon would abandon it\n" {
		t.Errorf("runs abandon --dry-run: exit %d\n%s%s", code, out, errOut)
	}
	if after := getRun(t, dir, left); after.EventCount != before.EventCount || after.Status.State != runs.Running {
		t.Errorf("runs abandon --dry-run wrote the run: %+v", after.Run)
	}

	code, out, errOut = runCLI(t, "runs", "abandon", left, "--state-dir", dir, "--reason", "left over", "-o", "json")
	var rc runs.Receipt
	if err := json.Unmarshal([]byte(out), &rc); code != 0 || err != nil || rc.Run != left || !rc.Abandoned || rc.AppendedSeq != before.EventCount ||
		rc.Status != (runs.Status{State: runs.Abandoned, Reason: "left over"}) {
		t.Fatalf("runs abandon --state-dir: exit %d %v %+v\n%s%s", code, err, rc, out, errOut)
	}
	if d := getRun(t, dir, left); d.Status.State != runs.Abandoned || d.Status.Reason != "left over" || d.Driver != "" || d.EventCount != before.EventCount+1 {
		t.Errorf("the run after the abandon: %+v", d.Run)
	}
	if code, out, _ := runCLI(t, "runs", "events", left, "--state-dir", dir); code != 1 || !strings.HasSuffix(out, "Run "+left+" abandoned\nabandoned: left over\n") {
		t.Errorf("runs events of the abandoned run: exit %d\n%s", code, out)
	}
	for _, extra := range [][]string{nil, {"--dry-run"}} {
		code, _, errOut := runCLI(t, append([]string{"runs", "abandon", left, "--state-dir", dir}, extra...)...)
		if code != 1 || !strings.Contains(errOut, "run "+left+" is abandoned") {
			t.Errorf("runs abandon %q of an abandoned run: exit %d\n%s", extra, code, errOut)
		}
		code, _, errOut = runCLI(t, append([]string{"runs", "abandon", "99999999-2222-4333-8444-555555555555", "--state-dir", dir}, extra...)...)
		if code != 2 || !strings.Contains(errOut, "unknown run") {
			t.Errorf("runs abandon %q of an unknown run: exit %d\n%s", extra, code, errOut)
		}
	}
	empty := t.TempDir()
	if code, _, errOut := runCLI(t, "runs", "abandon", left, "--state-dir", empty); code != 2 || !strings.Contains(errOut, "no run store in "+empty) {
		t.Errorf("runs abandon in a directory without a store: exit %d\n%s", code, errOut)
	}

	// A serve holds the store: it writes it, so abandon goes through it.
	u := startServe(t, nil, false, "--state-dir", dir)
	for _, extra := range [][]string{nil, {"--dry-run"}} {
		code, out, errOut := runCLI(t, append([]string{"runs", "abandon", later, "--state-dir", dir}, extra...)...)
		if code != 2 || out != "" || !strings.Contains(errOut, "a serve holds the run store in "+dir) || !strings.Contains(errOut, "--link URL") {
			t.Errorf("runs abandon %q while a serve holds the store: exit %d\n%s%s", extra, code, out, errOut)
		}
	}
	if d := getRun(t, dir, later); d.Status.State != runs.Running {
		t.Fatalf("the refused abandons changed the run: %+v", d.Run)
	}
	code, out, errOut = runCLI(t, "runs", "abandon", later, "--link", u)
	if code != 0 || !strings.HasPrefix(out, "Run "+later+": abandoned (event ") {
		t.Errorf("runs abandon --link: exit %d\n%s%s", code, out, errOut)
	}
	if d := getRun(t, dir, later); d.Status.State != runs.Abandoned {
		t.Errorf("the run after runs abandon --link: %+v", d.Run)
	}
	for _, extra := range [][]string{nil, {"--dry-run"}} {
		code, _, errOut := runCLI(t, append([]string{"runs", "resume", later}, extra...)...)
		if code != 2 || !strings.Contains(errOut, "give --link URL") || !strings.Contains(errOut, "serve --state-dir DIR --resume-interrupted") {
			t.Errorf("runs resume %q without --link: exit %d\n%s", extra, code, errOut)
		}
	}
}

// TestRunsResumeDrivesARunLeftRunning: a run whose process is gone is
// running with no driver in a serve's store; runs resume --dry-run says
// it would re-drive it, runs resume over the link drives it (202
// driving), and runs events follows the new attempt to its pass.
func TestRunsResumeDrivesARunLeftRunning(t *testing.T) {
	t.Parallel()
	device := sharedDevice(t, "chromium-cdp-334x216")
	root := reviewedProject(t, device, true)
	state := t.TempDir()
	args, err := json.Marshal(map[string]string{"name": "alpha", "project_root": root, "device": device})
	if err != nil {
		t.Fatal(err)
	}
	id := leftRunning(t, state, runs.Begin{Flow: "alpha", Device: device, Source: "v1", Args: args})[0]
	u := startServe(t, nil, false, "--state-dir", state)

	code, out, errOut := runCLI(t, "runs", "resume", id, "--link", u, "--dry-run")
	if want := "Dry run: run " + id + " is running with no driver: resume would re-drive it from its flow's first step, attempt 2\n"; code != 0 || out != want {
		t.Errorf("runs resume --dry-run: exit %d\n%q\nwant %q\n%s", code, out, want, errOut)
	}
	if d := getRun(t, state, id); d.Driver != runs.DriverNone || d.EventCount != 1 {
		t.Fatalf("runs resume --dry-run changed the run: %+v", d.Run)
	}
	code, out, errOut = runCLI(t, "runs", "resume", id, "--link", u, "-o", "yaml")
	var rs struct{ Run, Outcome, Status string }
	if err := yaml.Unmarshal([]byte(out), &rs); code != 0 || err != nil || rs != (struct{ Run, Outcome, Status string }{id, runs.ResumeDriving, runs.Running}) {
		t.Fatalf("runs resume -o yaml: exit %d %v %+v\n%s%s", code, err, rs, out, errOut)
	}
	code, out, errOut = runCLI(t, "runs", "events", id, "--link", u)
	if code != 0 || !strings.Contains(out, "Run "+id+" resumed") || !strings.Contains(out, `snapshot "top"`) || !strings.Contains(out, "Run "+id+" passed\n") {
		t.Errorf("runs events of the resumed run: exit %d\n%s%s", code, out, errOut)
	}
	code, out, _ = runCLI(t, "runs", "replay", id, "--state-dir", state)
	if code != 0 || !strings.HasPrefix(out, "Run "+id+": completed (passed), attempt 2\n") {
		t.Errorf("runs replay of the resumed run: exit %d\n%s", code, out)
	}
	code, out, _ = runCLI(t, "runs", "resume", id, "--link", u)
	if code != 0 || !strings.HasPrefix(out, "Run "+id+" had finished: completed (passed)") {
		t.Errorf("runs resume of the run it drove to its end: exit %d\n%s", code, out)
	}
}
