package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestFlowRunReportsEveryChangedSnapshot: a flow whose two snapshots
// (one in a fragment) both changed reports both in one run, on the step
// lines, in JUnit and over --link, naming the strict default's gate, and
// exits 1 (a linked rerun before the change passes it); the project's stopOnFailure: true, which a linked client sends
// with the call, stops at the first.
func TestFlowRunReportsEveryChangedSnapshot(t *testing.T) {
	t.Parallel()
	root := writeProject(t, map[string]string{
		"two.yaml":  "steps:\n  - launch: \"{{URL}}/app.html\"\n  - snapshot: first\n  - tap: Go now\n  - run: more\n",
		"more.yaml": "steps:\n  - snapshot: second\n",
	})
	dev := "--device=" + sharedDevice(t, "chromium-cdp-790x590")
	if code, out, errOut := runCLI(t, "flow", "run", "two", "--project", root, dev, "--update-baselines"); code != 0 {
		t.Fatalf("update: exit %d\n%s%s", code, out, errOut)
	}
	// A rerun over a link of the baselines adopted locally passes the
	// strict default.
	e := env{envAuthToken: "every-token"}
	u := startServe(t, e, false)
	if code, out, errOut := runCLIEnv(t, e, "flow", "run", "two", "--project", root, dev, "--link", u); code != 0 || strings.Count(out, "0 pixels differ, 0 px allowed (default on chromium)") != 2 {
		t.Fatalf("a linked rerun: exit %d\n%s%s", code, out, errOut)
	}
	flows := filepath.Join(root, ".argent", "flows")
	b, err := os.ReadFile(filepath.Join(flows, "two.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	changed := strings.Replace(string(b), "\n  - snapshot: first", "\n  - tap: Go now\n  - snapshot: first", 1)
	if err := os.WriteFile(filepath.Join(flows, "two.yaml"), []byte(changed), 0o644); err != nil {
		t.Fatal(err)
	}
	failed := func(out string) int { return strings.Count(out, "pixels differ, 0 px allowed (default on chromium)") }

	junit := filepath.Join(root, "junit.xml")
	code, out, errOut := runCLI(t, "flow", "run", "two", "--project", root, dev, "--junit", junit)
	if code != 1 || failed(out) != 2 {
		t.Fatalf("local: exit %d, want 1 and both snapshots failed\n%s%s", code, out, errOut)
	}
	x, err := os.ReadFile(junit)
	if err != nil || strings.Count(string(x), "<failure message=") != 2 || !strings.Contains(string(x), `failures="2"`) || failed(string(x)) < 2 {
		t.Errorf("JUnit: want 2 failures, got %v\n%s", err, x)
	}

	code, out, errOut = runCLIEnv(t, e, "flow", "run", "two", "--project", root, dev, "--link", u)
	if code != 1 || failed(out) != 2 {
		t.Fatalf("linked: exit %d, want 1 and both snapshots failed\n%s%s", code, out, errOut)
	}
	writeConfig(t, root, "snapshot:\n  stopOnFailure: true\n")
	code, out, errOut = runCLIEnv(t, e, "flow", "run", "two", "--project", root, dev, "--link", u)
	if code != 1 || failed(out) != 1 {
		t.Fatalf("linked with the project's stopOnFailure: exit %d, want 1 and one snapshot failed\n%s%s", code, out, errOut)
	}
}
