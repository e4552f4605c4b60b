package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// flowProject writes a project with two flows and a fragment; {{URL}} is a
// server of ../../testdata/pages.
func flowProject(t *testing.T) string {
	t.Helper()
	return writeProject(t, map[string]string{
		"good.yaml": `steps:
  - launch: "{{URL}}/app.html"
  - run: press
  - snapshot: { name: pressed, maxMismatch: 0 }
`,
		"press.yaml": `steps:
  - tap: Go now
`,
		"sub/bad.yaml": `steps:
  - launch: "{{URL}}/app.html"
  - assert: { visible: { text: nothing like this } }
`,
		"broken.yaml": "steps:\n  - frobnicate: 1\n",
	})
}

func TestFlowRunExitCodesAndOutputs(t *testing.T) {
	t.Parallel()
	root := flowProject(t)
	flows := filepath.Join(root, ".argent", "flows")
	dev := "--device=" + sharedDevice(t, "chromium-cdp-700x500")

	// No baseline yet: exit 1, images of nothing (no baseline to show).
	code, out, _ := runCLI(t, "flow", "run", "good", "--project", root, dev)
	if code != 1 || !strings.Contains(out, `no baseline for "pressed"`) {
		t.Fatalf("first run: exit %d\n%s", code, out)
	}
	code, out, _ = runCLI(t, "flow", "run", "good", "--project", root, dev, "--update-baselines")
	if code != 0 || !strings.Contains(out, "baseline written (pressed__chromium-700x500.png)") {
		t.Fatalf("update: exit %d\n%s", code, out)
	}
	// JSON: the raw report on stdout, progress on stderr.
	code, out, errOut := runCLI(t, "flow", "run", filepath.Join(flows, "good.yaml"), dev, "--json")
	var rep struct {
		Flow  string
		OK    bool
		Steps []struct{ Kind, Status string }
	}
	if code != 0 || json.Unmarshal([]byte(out), &rep) != nil || !rep.OK || rep.Flow != "good" || len(rep.Steps) != 4 {
		t.Fatalf("--json: exit %d\nstdout %s\nstderr %s", code, out, errOut)
	}
	if !strings.Contains(errOut, `"event":"progress"`) {
		t.Fatalf("--json progress on stderr: %s", errOut)
	}

	// The page changes: the snapshot fails and --output gets the images.
	good := filepath.Join(flows, "good.yaml")
	body, _ := os.ReadFile(good)
	os.WriteFile(good, bytes.Replace(body, []byte("  - run: press\n"), []byte("  - run: press\n  - run: press\n"), 1), 0o644)
	outDir := t.TempDir()
	code, out, _ = runCLI(t, "flow", "run", "good", "--project", root, dev, "--output", outDir)
	if code != 1 {
		t.Fatalf("changed page: exit %d\n%s", code, out)
	}
	for _, suffix := range []string{"baseline", "current", "diff"} {
		p := filepath.Join(outDir, "good", "pressed__chromium-700x500-"+suffix+".png")
		if _, err := os.Stat(p); err != nil {
			t.Errorf("--output: %v", err)
		}
	}

	// A directory run: -r reaches sub/, fragments are skipped, the broken
	// flow is reported as not run, the JUnit file names every flow.
	junit := filepath.Join(t.TempDir(), "reports", "junit.xml") // a directory that does not exist yet
	code, out, errOut = runCLI(t, "flow", "run", flows, "-r", dev, "--junit", junit)
	if code != 1 || !strings.Contains(out, `Flow "sub/bad"`) || !strings.Contains(out, "not run (invalid flow)") || !strings.Contains(errOut, "skipping press.yaml") {
		t.Fatalf("dir run: exit %d\n%s\n%s", code, out, errOut)
	}
	x, _ := os.ReadFile(junit)
	for _, want := range []string{`name="broken"`, `name="good"`, `name="sub/bad"`, "<failure"} {
		if !strings.Contains(string(x), want) {
			t.Errorf("junit lacks %s:\n%s", want, x)
		}
	}
}

func TestFlowRunUsageErrors(t *testing.T) {
	t.Parallel()
	root := flowProject(t)
	for _, args := range [][]string{
		{"flow", "run"},
		{"flow", "run", "a b c"},
		{"flow", "run", "a/b"},
		{"flow", "run", "../x/good.yaml"},
		{"flow", "run", "good", "--project", root, "--device", "iphone"},
		{"flow", "frobnicate"},
	} {
		if code, out, errOut := runCLI(t, args...); code != 2 {
			t.Errorf("%v: exit %d, want 2\n%s%s", args, code, out, errOut)
		}
	}
	code, out, _ := runCLI(t, "flow", "list", "--project", root)
	if code != 0 || !strings.Contains(out, "good") || !strings.Contains(out, "fragment") || !strings.Contains(out, "invalid") {
		t.Fatalf("flow list: exit %d\n%s", code, out)
	}
	code, out, _ = runCLI(t, "flow", "schema")
	if code != 0 || !json.Valid([]byte(out)) {
		t.Fatalf("flow schema: exit %d", code)
	}
}
