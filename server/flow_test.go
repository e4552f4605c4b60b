package server_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolserver/toolserver/device/cdp/cdptest"
)

func writeFlow(t *testing.T, root, name, body string) {
	t.Helper()
	p := filepath.Join(root, ".argent", "flows", name+".yaml")
	os.MkdirAll(filepath.Dir(p), 0o755)
	if err := os.WriteFile(p, []byte(strings.ReplaceAll(body, "{{URL}}", cdptest.PagesURL())), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestFlowExecuteStreams runs a flow through POST /tools/flow-execute with
// NDJSON: one progress line per finished step, then the report.
func TestFlowExecuteStreams(t *testing.T) {
	t.Parallel()
	r := newRig(t, "")
	root := t.TempDir()
	writeFlow(t, root, "demo", `steps:
  - echo: hello
  - launch: "{{URL}}/app.html"
  - tap: Go now
  - assert: { text: { in: { id: out }, equals: clicked 1 } }
`)
	t.Cleanup(func() { cdptest.Stop(t, "chromium-cdp-900x600") })
	body := fmt.Sprintf(`{"name":"demo","project_root":%q,"device":"chromium-cdp-900x600"}`, root)
	resp := postNDJSON(t, r.url+"/tools/flow-execute", body)
	defer resp.Body.Close()
	var events []string
	var report struct {
		OK     bool
		Passed int
		Flow   string
	}
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		var line struct {
			Event string
			Data  json.RawMessage
		}
		if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
			t.Fatalf("bad line %q", sc.Text())
		}
		events = append(events, line.Event)
		if line.Event == "result" {
			json.Unmarshal(line.Data, &report)
		}
	}
	want := "progress progress progress progress result"
	if got := strings.Join(events, " "); got != want || !report.OK || report.Passed != 3 || report.Flow != "demo" {
		t.Fatalf("events %q (want %q), report %+v", got, want, report)
	}
}

func TestFlowExecuteRejections(t *testing.T) {
	t.Parallel()
	r := newRig(t, "")
	root := t.TempDir()
	writeFlow(t, root, "broken", "steps:\n  - frobnicate: 1\n")
	writeFlow(t, root, "prereq", "executionPrerequisite: logged in\nsteps:\n  - echo: hi\n")
	for _, tc := range []struct {
		name, body string
		status     int
		want       string
	}{
		{"both sources", fmt.Sprintf(`{"name":"x","flow_path":"/a.yaml","project_root":%q}`, root), 400, "Pass exactly one flow source: name or flow_path."},
		{"bad name", fmt.Sprintf(`{"name":"../x","project_root":%q}`, root), 400, "FLOW_NAME_INVALID"},
		{"relative root", `{"name":"x","project_root":"rel/dir"}`, 400, "project_root must be an absolute path"},
		{"invalid file", fmt.Sprintf(`{"name":"broken","project_root":%q}`, root), 400, `"error_code":"FLOW_FILE_INVALID"`},
		{"missing", fmt.Sprintf(`{"name":"absent","project_root":%q}`, root), 404, "ENOENT: no such file or directory, open '"},
		{"notice", fmt.Sprintf(`{"name":"prereq","project_root":%q}`, root), 200, "must be fulfilled before it can run"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp, body := do(t, "POST", r.url+"/tools/flow-execute", tc.body)
			if resp.StatusCode != tc.status || !strings.Contains(string(body), tc.want) {
				t.Fatalf("got %d %s, want %d with %q", resp.StatusCode, body, tc.status, tc.want)
			}
		})
	}
}
