package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolserver/toolserver/internal/treetest"
)

// TestCallDryRun: call --dry-run checks a call as it would run (the
// schema, the flow read and parsed) and runs nothing: a good flow is
// valid and leaves the project as it was; a flow that does not parse, a
// missing one and an unknown argument are the errors the call would
// answer, exit 1; with --link it is a usage error.
func TestCallDryRun(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	flows := filepath.Join(root, ".argent", "flows")
	os.MkdirAll(flows, 0o755)
	os.WriteFile(filepath.Join(flows, "ok.yaml"), []byte("steps:\n  - snapshot: home\n"), 0o644)
	os.WriteFile(filepath.Join(flows, "bad.yaml"), []byte("steps:\n  - click: x\n"), 0o644)
	before := treetest.Of(t, root)
	code, out, errOut := runCLI(t, "call", "flow-execute", "--dry-run", "--args", `{"name":"ok","project_root":"`+root+`","updateBaselines":true}`)
	if code != exitOK || strings.TrimSpace(out) != "{\n  \"data\": {\n    \"dry_run\": true,\n    \"valid\": true\n  }\n}" {
		t.Errorf("a good flow: exit %d %s %s", code, out, errOut)
	}
	treetest.Same(t, before, treetest.Of(t, root))
	for _, tc := range []struct{ args, kind, says string }{
		{`{"name":"bad","project_root":"` + root + `"}`, "validation", `unknown directive \"click\"`},
		{`{"name":"none","project_root":"` + root + `"}`, "not_found", "none.yaml"},
		{`{"name":"ok","project_root":"` + root + `","bogus":1}`, "validation", "bogus"},
	} {
		code, out, _ := runCLI(t, "call", "flow-execute", "--dry-run", "--args", tc.args)
		var got struct{ Error, ErrorKind string }
		json.Unmarshal([]byte(out), &struct {
			Error     *string `json:"error"`
			ErrorKind *string `json:"error_kind"`
		}{&got.Error, &got.ErrorKind})
		if code != exitFailed || got.ErrorKind != tc.kind || !strings.Contains(out, tc.says) {
			t.Errorf("%s: exit %d %s; want exit 1, kind %s, saying %s", tc.args, code, out, tc.kind, tc.says)
		}
	}
	if code, _, errOut := runCLI(t, "call", "list-devices", "--dry-run", "--link", "http://127.0.0.1:1"); code != exitUsage || !strings.Contains(errOut, "--dry-run") {
		t.Errorf("--dry-run with --link: exit %d %s", code, errOut)
	}
}
