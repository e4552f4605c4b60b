package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolserver/toolserver/report"
)

// TestBaselinesUnused: the report of a run of every flow (-r over the
// flows directory) ends with the baselines no flow reads; baselines list
// --unused lists them (-o json too), prune --dry-run lists them and
// deletes nothing, prune deletes them and leaves the used ones.
func TestBaselinesUnused(t *testing.T) {
	t.Parallel()
	dev := "--device=" + sharedDevice(t, "chromium-cdp-709x509")
	root := writeProject(t, map[string]string{
		"page.yaml": "steps:\n  - launch: \"{{URL}}/app.html\"\n  - snapshot: same\n",
		"__baselines__/page/gone__chromium-1x1.png":   "old",
		"__baselines__/deleted/top__chromium-1x1.png": "old",
	})
	flows := filepath.Join(root, ".argent", "flows")
	used := ".argent/flows/__baselines__/page/same__chromium-709x509.png"
	unused := []string{".argent/flows/__baselines__/deleted/top__chromium-1x1.png", ".argent/flows/__baselines__/page/gone__chromium-1x1.png"}
	dir := filepath.Join(t.TempDir(), "report")
	code, out, errOut := runCLI(t, "flow", "run", flows, "-r", "--project", root, dev, "--update-baselines", "--report", dir)
	if code != exitOK || !strings.Contains(errOut, "2 baselines no flow reads") {
		t.Fatalf("flow run -r: exit %d\n%s\n%s\nwant 0 and the unused baselines counted", code, out, errOut)
	}
	rep, err := report.Read(dir)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(rep.UnusedBaselines, " ") != strings.Join(unused, " ") {
		t.Errorf("the report's unused baselines: %q, want %q", rep.UnusedBaselines, unused)
	}
	// The page ends with them.
	viewer := writeProject(t, map[string]string{
		"look.yaml": "steps:\n  - launch: \"file://" + filepath.Join(dir, "index.html") + "\"\n" +
			"  - assert: { text: { in: { id: unused-baselines }, contains: \"2 baselines no flow reads\" } }\n" +
			"  - assert: { text: { in: { id: unused-baselines }, contains: \"" + unused[1] + "\" } }\n",
	})
	if code, out, errOut := runCLI(t, "flow", "run", "look", "--project", viewer, dev); code != exitOK {
		t.Errorf("the report's page: exit %d\n%s\n%s\nwant the unused baselines at its end", code, out, errOut)
	}
	// A run of one flow has not read the others: it lists none.
	code, _, errOut = runCLI(t, "flow", "run", "page", "--project", root, dev, "--report", dir)
	if rep, _ := report.Read(dir); code != exitOK || rep == nil || rep.UnusedBaselines != nil || strings.Contains(errOut, "no flow reads") {
		t.Errorf("a run of one flow: exit %d, unused %v\n%s\nwant none listed", code, rep, errOut)
	}

	code, out, _ = runCLI(t, "baselines", "list", "--unused", "--project", root)
	if code != exitOK || !strings.Contains(out, "unused") || !strings.Contains(out, unused[0]) || !strings.Contains(out, unused[1]) || strings.Contains(out, used) {
		t.Errorf("list --unused: exit %d\n%s", code, out)
	}
	code, out, _ = runCLI(t, "baselines", "list", "--project", root, "-o", "json")
	var listed struct {
		Baselines []struct {
			Path string
			Used bool
		}
	}
	if err := json.Unmarshal([]byte(out), &listed); code != exitOK || err != nil || len(listed.Baselines) != 3 {
		t.Fatalf("list -o json: exit %d, %v\n%s", code, err, out)
	}
	for _, b := range listed.Baselines {
		if b.Used != (b.Path == used) {
			t.Errorf("list -o json: %s used %v", b.Path, b.Used)
		}
	}

	code, out, _ = runCLI(t, "baselines", "prune", "--dry-run", "--project", root)
	if code != exitOK || !strings.Contains(out, "· would delete "+unused[0]) || !strings.Contains(out, "Dry run: 2 baselines would be deleted; nothing was deleted") {
		t.Errorf("prune --dry-run: exit %d\n%s", code, out)
	}
	for _, p := range unused {
		if _, err := os.Stat(filepath.Join(root, p)); err != nil {
			t.Errorf("prune --dry-run deleted %s: %v", p, err)
		}
	}
	code, out, _ = runCLI(t, "baselines", "prune", "--project", root)
	if code != exitOK || !strings.Contains(out, "✓ deleted "+unused[1]) {
		t.Errorf("prune: exit %d\n%s", code, out)
	}
	for _, p := range unused {
		if _, err := os.Stat(filepath.Join(root, p)); !os.IsNotExist(err) {
			t.Errorf("prune left %s: %v", p, err)
		}
	}
	if _, err := os.Stat(filepath.Join(root, used)); err != nil {
		t.Errorf("prune deleted the used baseline: %v", err)
	}
	if code, out, _ := runCLI(t, "baselines", "prune", "--project", root); code != exitOK || !strings.Contains(out, "Nothing to prune") {
		t.Errorf("prune again: exit %d\n%s", code, out)
	}
}
