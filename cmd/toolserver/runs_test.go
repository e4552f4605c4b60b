package main

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/toolserver/toolserver/runs"
)

// TestDetachedRunsAndTheRunsCommands: flow run --detach starts runs on a
// tool-server that keeps them, runs events follows each to its end (exit
// by its status), runs list/get show them with their labels and steps,
// and an attached linked run is recorded too.
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
	var list struct{ Runs []runs.Run }
	if err := json.Unmarshal([]byte(out), &list); code != 0 || err != nil || len(list.Runs) != 3 {
		t.Fatalf("runs list -o json: exit %d %v\n%s", code, err, out)
	}
	if r := list.Runs[0]; r.Source != "tools" || r.Flow != "alpha" || r.Status != runs.Passed || !r.Linked {
		t.Errorf("the attached run: %+v", r)
	}
	if r := list.Runs[1]; r.ID != beta || r.Source != "v1" || r.Labels["ci"] != "42" || r.Status != runs.Failed || r.Device != device {
		t.Errorf("the detached run: %+v", r)
	}
	code, out, _ = runCLI(t, "runs", "list", "--link", u, "--label", "ci:42", "--status", "failed")
	if code != 0 || !strings.Contains(out, beta) || strings.Contains(out, alpha) || !strings.HasPrefix(out, "RUN") {
		t.Errorf("runs list --label --status: exit %d\n%s", code, out)
	}
	code, out, _ = runCLI(t, "runs", "get", beta, "--link", u)
	if code != 0 || !strings.Contains(out, "Run "+beta+": failed") || !strings.Contains(out, `snapshot "basket"`) {
		t.Errorf("runs get: exit %d\n%s", code, out)
	}
	code, _, errOut = runCLI(t, "runs", "cancel", beta, "--link", u)
	// A run that ended cannot be cancelled: a failed result (1), with the
	// server's wrong_state message, not a usage error.
	if code != 1 || !strings.Contains(errOut, "toolserver: runs cancel: wrong state: run "+beta+" is failed, not running") {
		t.Errorf("runs cancel of an ended run: exit %d\n%s", code, errOut)
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

// TestRunsGetOfARunWithoutDevice: a run rejected before it had a device
// (an invalid flow) is shown without an "on" and its empty device.
func TestRunsGetOfARunWithoutDevice(t *testing.T) {
	t.Parallel()
	root := writeProject(t, map[string]string{
		"broken.yaml": "steps:\n  - launch: \"{{URL}}/app.html\"\n  - tap: { nope: 1 }\n",
	})
	u := startServe(t, nil, false, "--state-dir", t.TempDir())
	code, out, errOut := runCLI(t, "flow", "run", "broken", "--project", root, "--link", u, "--detach")
	id, _, _ := strings.Cut(out, "\t")
	if code != 0 || len(id) != 36 {
		t.Fatalf("flow run --detach: exit %d\n%s\n%s", code, out, errOut)
	}
	if code, out, errOut := runCLI(t, "runs", "events", id, "--link", u); code != 1 {
		t.Fatalf("runs events: exit %d\n%s\n%s", code, out, errOut)
	}
	code, out, errOut = runCLI(t, "runs", "get", id, "--link", u)
	header, _, _ := strings.Cut(out, "\n")
	if code != 0 || !strings.HasPrefix(header, "Run "+id+": ") || !strings.Contains(header, `(flow "broken", started `) {
		t.Errorf("runs get: exit %d\n%s\n%s\nwant a header without a device", code, out, errOut)
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
	if err := json.Unmarshal([]byte(out), &list); code != 0 || err != nil || len(list.Runs) != 1 || list.Runs[0].Flow != "alpha" || list.Runs[0].Status != runs.Passed {
		t.Fatalf("runs list --state-dir beside the serve that holds it: exit %d %v\n%s\n%s", code, err, out, errOut)
	}
	id := list.Runs[0].ID
	if code, out, _ := runCLI(t, "runs", "get", id, "--state-dir", state); code != 0 || !strings.Contains(out, `snapshot "top"`) {
		t.Errorf("runs get --state-dir: exit %d\n%s", code, out)
	}
	if code, out, _ := runCLI(t, "runs", "events", id, "--state-dir", state); code != 0 || !strings.Contains(out, "Run "+id+" passed") {
		t.Errorf("runs events --state-dir: exit %d\n%s", code, out)
	}
	if code, _, errOut := runCLI(t, "runs", "list", "--state-dir", state, "--link", u); code != exitUsage || !strings.Contains(errOut, "not both") {
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
