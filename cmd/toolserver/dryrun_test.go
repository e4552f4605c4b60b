package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolserver/toolserver/internal/treetest"

	flowrun "github.com/toolserver/toolserver/flow/run"
)

// dryRunReport is the part of flow run -o json a dry run adds.
type dryRunReport struct {
	OK    bool
	Steps []struct {
		Kind, Status, Reason, SnapshotKey string
	}
	WouldWriteBaselines []flowrun.Plan
}

// TestFlowRunDryRunLocal: flow run --update-baselines --dry-run runs the
// flow, writes no baseline (nor its directory) and lists each baseline it
// would write, new or updated, with its size; -o json carries the list.
// The JUnit file asked for is written.
func TestFlowRunDryRunLocal(t *testing.T) {
	t.Parallel()
	root := flowProject(t)
	dev := "--device=" + sharedDevice(t, "chromium-cdp-701x501")
	baseline := filepath.Join(root, ".argent", "flows", "__baselines__", "good", "pressed__chromium-701x501.png")
	junit := filepath.Join(t.TempDir(), "junit.xml")

	before := treetest.Of(t, root)
	code, out, errOut := runCLI(t, "flow", "run", "good", "--project", root, dev, "--update-baselines", "--dry-run", "--junit", junit)
	if code != exitOK {
		t.Fatalf("dry run: got exit %d, want 0\n%s\n%s", code, out, errOut)
	}
	treetest.Same(t, before, treetest.Of(t, root))
	for _, want := range []string{
		"dry run: baseline not written (pressed__chromium-701x501.png)",
		"Dry run: 1 baseline would be written; nothing was written:\n  new    ",
		" bytes  " + baseline + "\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("stdout: got\n%s\nwant it to contain %q", out, want)
		}
	}
	if _, err := os.Stat(junit); err != nil {
		t.Errorf("--junit in a dry run: got %v, want the file written", err)
	}

	// Adopt for real; on the same screen a dry run would write nothing
	// (the capture has the baseline's bytes); over another file it sees
	// an update.
	if code, out, _ := runCLI(t, "flow", "run", "good", "--project", root, dev, "--update-baselines"); code != exitOK {
		t.Fatalf("update: got exit %d, want 0\n%s", code, out)
	}
	code, out, errOut = runCLI(t, "flow", "run", "good", "--project", root, dev, "--update-baselines", "--dry-run")
	if code != exitOK || !strings.Contains(out, "baseline unchanged (pressed__chromium-701x501.png)") || !strings.Contains(out, "Dry run: no baseline would be written.") {
		t.Errorf("dry run on the same screen: got exit %d\n%s\n%s\nwant the baseline unchanged and none listed", code, out, errOut)
	}
	if err := os.WriteFile(baseline, []byte("an older baseline"), 0o644); err != nil {
		t.Fatal(err)
	}
	before = treetest.Of(t, root)
	code, out, errOut = runCLI(t, "flow", "run", "good", "--project", root, dev, "--update-baselines", "--dry-run", "-o", "json")
	if code != exitOK {
		t.Fatalf("dry run -o json: got exit %d, want 0\n%s\n%s", code, out, errOut)
	}
	treetest.Same(t, before, treetest.Of(t, root))
	var rep dryRunReport
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("-o json: %v in\n%s", err, out)
	}
	if len(rep.WouldWriteBaselines) != 1 {
		t.Fatalf("wouldWriteBaselines: got %+v, want one", rep.WouldWriteBaselines)
	}
	if p := rep.WouldWriteBaselines[0]; p.Path != baseline || p.Action != flowrun.PlanUpdate || p.Bytes <= 0 {
		t.Errorf("wouldWriteBaselines[0]: got %+v, want %s, update, its size", p, baseline)
	}
	last := rep.Steps[len(rep.Steps)-1]
	if last.Kind != "snapshot" || last.Reason != "dry run: baseline not written (pressed__chromium-701x501.png)" {
		t.Errorf("snapshot step: got %+v, want the dry run's reason", last)
	}
	if !strings.Contains(errOut, `dry run: baseline not written (pressed__chromium-701x501.png)`) {
		t.Errorf("progress on stderr: got\n%s\nwant the dry run's reason", errOut)
	}
}

// TestFlowRunDryRunNestedUpdate: the baselines a nested flow-execute
// that updates them would write, which the runner runs inline over the
// same source, are listed and not written.
func TestFlowRunDryRunNestedUpdate(t *testing.T) {
	t.Parallel()
	root := flowProject(t)
	nested := filepath.Join(root, ".argent", "flows", "nested.yaml")
	body := fmt.Sprintf("steps:\n  - tool: flow-execute\n    args: { name: good, project_root: %q, updateBaselines: true }\n", root)
	if err := os.WriteFile(nested, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	baseline := filepath.Join(root, ".argent", "flows", "__baselines__", "good", "pressed__chromium-702x502.png")
	before := treetest.Of(t, root)
	code, out, errOut := runCLI(t, "flow", "run", "nested", "--project", root, "--device="+sharedDevice(t, "chromium-cdp-702x502"), "--dry-run")
	if code != exitOK || !strings.Contains(out, " bytes  "+baseline+"\n") || !strings.Contains(out, "dry run: baseline not written (pressed__chromium-702x502.png)") {
		t.Errorf("got exit %d\n%s\n%s\nwant 0 and the nested flow's baseline listed", code, out, errOut)
	}
	treetest.Same(t, before, treetest.Of(t, root))
}

// TestFlowRunLinkedDryRun: over a link, a dry run applies none of the
// result's baselines and lists them, new or updated, with their sizes; a
// baseline the client would refuse still fails the run.
func TestFlowRunLinkedDryRun(t *testing.T) {
	t.Parallel()
	root, baselines := linkProject(t)
	shot := onePNG(t)
	dst := filepath.Join(baselines, "home__chromium-1x1.png")
	evil := filepath.Join(root, "evil.png")
	writes := []any{clientFile(dst, shot)}
	s := newLinkStub(t, func(w http.ResponseWriter, body []byte) {
		rep := linkReport(true, writes...)
		step := rep["steps"].([]any)[0].(map[string]any)
		step["snapshotKey"] = "home__chromium-1x1.png"
		step["reason"] = "baseline captured; the client writes it when the run ends (" + dst + ")"
		stream(w, map[string]any{"event": "progress", "data": step}, map[string]any{"event": "result", "data": rep})
	})
	args := []string{"flow", "run", "home", "--project", root, "--link", s.URL, "--update-baselines", "--dry-run", "--device", "chromium-cdp-1x1"}

	before := treetest.Of(t, root)
	code, out, errOut := runCLI(t, args...)
	if code != exitOK {
		t.Fatalf("got exit %d, want 0\n%s\n%s", code, out, errOut)
	}
	treetest.Same(t, before, treetest.Of(t, root))
	for _, want := range []string{
		"snapshot (0.0s) — dry run: baseline not written (home__chromium-1x1.png)",
		fmt.Sprintf("Dry run: 1 baseline would be written; nothing was written:\n  new    %9d bytes  %s\n", len(shot), dst),
	} {
		if !strings.Contains(out, want) {
			t.Errorf("stdout: got\n%s\nwant it to contain %q", out, want)
		}
	}

	// An existing baseline is an update; -o json lists it.
	if err := os.MkdirAll(baselines, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	before = treetest.Of(t, root)
	code, out, errOut = runCLI(t, append(args, "-o", "json")...)
	if code != exitOK {
		t.Fatalf("-o json: got exit %d, want 0\n%s", code, errOut)
	}
	treetest.Same(t, before, treetest.Of(t, root))
	var rep dryRunReport
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("-o json: %v in\n%s", err, out)
	}
	want := flowrun.Plan{Path: dst, Action: flowrun.PlanUpdate, Bytes: len(shot)}
	if len(rep.WouldWriteBaselines) != 1 || rep.WouldWriteBaselines[0] != want {
		t.Errorf("wouldWriteBaselines: got %+v, want [%+v]", rep.WouldWriteBaselines, want)
	}

	// A baseline outside the run's directory is refused as in a real run.
	writes = append(writes, clientFile(evil, shot))
	code, _, errOut = runCLI(t, args...)
	if code != exitFailed || !strings.Contains(errOut, "✗ baseline not written: "+evil+": ") {
		t.Errorf("refused: got exit %d\n%s\nwant 1 and the refusal", code, errOut)
	}
	if _, err := os.Stat(evil); !os.IsNotExist(err) {
		t.Errorf("evil.png: got %v, want nothing written", err)
	}
}
