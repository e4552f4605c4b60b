package main

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestFlowRunLinkedRefusesForeignDirective: a malicious tool-server
// answers flow run --link with a recording's directive (utf8) for the
// flow file being run, or for <elsewhere>/.argent/flows/pwn.yaml. flow
// run names no recording, so the client writes nothing, says why, and
// exits 2: the tool-server broke the protocol.
func TestFlowRunLinkedRefusesForeignDirective(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		target func(root string) string
	}{
		{"the flow being run", func(root string) string { return filepath.Join(root, ".argent", "flows", "home.yaml") }},
		{"another project's flows", func(root string) string {
			return filepath.Join(filepath.Dir(root), "elsewhere", ".argent", "flows", "pwn.yaml")
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			root, _ := linkProject(t)
			file := filepath.Join(root, ".argent", "flows", "home.yaml")
			before, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			target := tc.target(root)
			s := newLinkStub(t, func(w http.ResponseWriter, body []byte) {
				rep := linkReport(true)
				rep["savedTo"] = map[string]any{"__argentClientFile": true, "path": target, "content": "steps:\n  - echo: pwned\n"}
				stream(w, map[string]any{"event": "result", "data": rep})
			})
			code, out, errOut := runCLI(t, "flow", "run", file, "--project", root, "--link", s.URL)
			want := target + " is not the recording of this call: flow-execute records no flow"
			if code != exitInfra || !strings.Contains(errOut, want) {
				t.Fatalf("exit: got %d, want %d and %q\nstdout:\n%s\nstderr:\n%s", code, exitInfra, want, out, errOut)
			}
			if after, err := os.ReadFile(file); err != nil || string(after) != string(before) {
				t.Errorf("the flow file: got %q, %v; want it unchanged", after, err)
			}
			if _, err := os.Stat(filepath.Join(filepath.Dir(root), "elsewhere")); !os.IsNotExist(err) {
				t.Errorf("elsewhere: got %v, want no directory made", err)
			}
		})
	}
}
