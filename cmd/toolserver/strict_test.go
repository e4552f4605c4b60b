package main

import (
	"strings"
	"testing"
)

// TestFlowRunStrict: six "Add to basket" buttons. Without --strict the
// tap takes the first, the line names it and its box, and a warning says
// six matched; with --strict the step fails, locally and over --link
// (where strict travels as flow-execute's argument).
func TestFlowRunStrict(t *testing.T) {
	t.Parallel()
	root := writeProject(t, map[string]string{
		"basket.yaml": `steps:
  - launch: "{{URL}}/plants.html"
  - tap: Add to basket
  - assert: { text: { in: { id: basket }, equals: "basket: Boston fern;" } }
`,
	})
	e := env{envAuthToken: "strict-token"}
	u := startServe(t, e, false)
	dev := "--device=" + sharedDevice(t, "chromium-cdp-820x520")
	tapped := `tap "Add to basket" → role="button" text="Add to basket" (40, 140, 160×36)`
	warning := `⚠ "Add to basket" matched 6 elements; tapped the first: role="button" text="Add to basket" (40, 140, 160×36). Narrow the selector`
	failure := `"Add to basket" matched 6 elements and strict mode wants exactly one; it would have tapped the first`
	for _, c := range []struct {
		name    string
		args    []string
		code    int
		want    []string
		wantNot string
	}{
		{"local", nil, exitOK, []string{tapped, warning, "PASS basket — 3 passed"}, failure},
		{"local strict", []string{"--strict"}, exitFailed, []string{failure, "FAIL basket — 1 passed, 1 failed"}, "⚠"},
		{"linked", []string{"--link", u}, exitOK, []string{tapped, warning, "PASS basket — 3 passed"}, failure},
		{"linked strict", []string{"--link", u, "--strict"}, exitFailed, []string{failure, "FAIL basket — 1 passed, 1 failed"}, "⚠"},
	} {
		t.Run(c.name, func(t *testing.T) {
			args := append([]string{"flow", "run", "basket", "--project", root, dev}, c.args...)
			code, out, errOut := runCLIEnv(t, e, args...)
			if code != c.code {
				t.Fatalf("exit: got %d, want %d\n%s\n%s", code, c.code, out, errOut)
			}
			for _, w := range c.want {
				if !strings.Contains(out, w) {
					t.Errorf("stdout: got\n%s\nwant it to contain %q", out, w)
				}
			}
			if strings.Contains(out, c.wantNot) {
				t.Errorf("stdout: got\n%s\nwant no %q", out, c.wantNot)
			}
		})
	}

	code, out, _ := runCLI(t, "flow", "run", "--help")
	if code != exitOK || !strings.Contains(out, "--strict") || !strings.Contains(out, "Playwright's strict mode") {
		t.Errorf("flow run --help: exit %d, got\n%s\nwant --strict documented", code, out)
	}
}
