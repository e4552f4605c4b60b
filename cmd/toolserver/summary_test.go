package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// summaryProject is a project whose flow "page" has a baseline of the
// input id=name, then types into it so that it differs and adds a snapshot
// "fresh" that has none. It returns the project.
func summaryProject(t *testing.T, dev string) string {
	t.Helper()
	root := writeProject(t, map[string]string{
		"page.yaml": "steps:\n  - launch: \"{{URL}}/app.html\"\n  - snapshot: { name: out, cropOn: { id: name } }\n",
	})
	if code, out, errOut := runCLI(t, "flow", "run", "page", "--project", root, dev, "--update-baselines"); code != exitOK {
		t.Fatalf("--update-baselines: exit %d\n%s\n%s", code, out, errOut)
	}
	p := filepath.Join(root, ".argent", "flows", "page.yaml")
	crop := "  - snapshot: { name: out, cropOn: { id: name } }\n"
	if err := os.WriteFile(p, []byte(strings.Replace(string(mustRead(t, p)), crop, "  - type: { into: { id: name }, text: changed, submit: false }\n"+crop+"  - snapshot: fresh\n", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	return root
}

// TestFlowRunSummary: --summary FILE writes the run's Markdown (the
// failed cropOn snapshot with its element, mismatch and diff, the new
// baseline, where the report is); $GITHUB_STEP_SUMMARY is appended to
// when --summary is not given, and --no-summary leaves it alone; over
// --link the summary says the same; a bad --summary is a usage error
// before anything runs.
func TestFlowRunSummary(t *testing.T) {
	t.Parallel()
	dev := "--device=" + sharedDevice(t, "chromium-cdp-613x411")
	root := summaryProject(t, dev)
	tmp := t.TempDir()
	arts := filepath.Join(tmp, "arts")
	file := filepath.Join(tmp, "ci", "summary.md") // a directory that does not exist yet
	code, out, errOut := runCLI(t, "flow", "run", "page", "--project", root, dev, "--update-baselines=missing", "--artifacts", arts, "--summary", file)
	if code != exitFailed {
		t.Fatalf("exit %d, want %d\n%s\n%s", code, exitFailed, out, errOut)
	}
	baselines := filepath.Join(root, ".argent", "flows", "__baselines__", "page")
	md := string(mustRead(t, file))
	for _, want := range []string{
		"### ❌ toolserver flow run: 1 of 1 flow failed\n\n",
		"- Flows: 1 — 0 passed, 1 failed, 0 errored\n",
		"- Snapshots: 1 compared — 1 failed, 1 new, 0 updated\n",
		"#### To review (2)\n\n",
		"- ❌ **Failed:** snapshot `out` — flow `page`, step 3 (line 4)\n  - element: `cropOn id=\"name\"`\n  - ",
		" 0 px allowed (default on chromium); the largest change is ",
		"  - diff: `" + filepath.ToSlash(filepath.Join(arts, "page")) + "/out__chromium-613x411-crop-",
		"-diff.png`\n",
		"- 🆕 **New baseline:** snapshot `fresh` — flow `page`, step 4 (line 5)\n  - baseline written: `" + filepath.ToSlash(filepath.Join(baselines, "fresh__chromium-613x411.png")) + "`\n",
		"\nNo HTML report: run with `--report DIR` for one with every image.\n",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("--summary: want %q in\n%s", want, md)
		}
	}

	// $GITHUB_STEP_SUMMARY, which an earlier step wrote to: appended to.
	step := filepath.Join(tmp, "step_summary")
	earlier := "## Build\n\nall good\n"
	if err := os.WriteFile(step, []byte(earlier), 0o644); err != nil {
		t.Fatal(err)
	}
	report := filepath.Join(tmp, "report")
	e := env{envStepSummary: step}
	code, out, errOut = runCLIEnv(t, e, "flow", "run", "page", "--project", root, dev, "--report", report)
	if code != exitFailed {
		t.Fatalf("$%s: exit %d, want %d\n%s\n%s", envStepSummary, code, exitFailed, out, errOut)
	}
	md = string(mustRead(t, step))
	for _, want := range []string{
		earlier + "\n### ❌ toolserver flow run: 1 of 1 flow failed\n",
		"- Snapshots: 2 compared — 1 failed, 0 new, 0 updated\n",
		"#### To review (1)\n",
		"  - diff: `" + filepath.ToSlash(filepath.Join(report, "images", "page")) + "/out__chromium-613x411-crop-",
		"\nReport: `" + filepath.ToSlash(filepath.Join(report, "index.html")) + "` (`toolserver report serve " + filepath.ToSlash(report) + "` to review and approve).\n",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("$%s: want %q in\n%s", envStepSummary, want, md)
		}
	}
	if strings.Contains(md[len(earlier):], "## Build") {
		t.Errorf("$%s: the earlier step's summary twice:\n%s", envStepSummary, md)
	}
	before := md
	if code, out, errOut := runCLIEnv(t, e, "flow", "run", "page", "--project", root, dev, "--no-summary"); code != exitFailed {
		t.Fatalf("--no-summary: exit %d\n%s\n%s", code, out, errOut)
	}
	if got := string(mustRead(t, step)); got != before {
		t.Errorf("--no-summary: $%s changed:\n%s", envStepSummary, got)
	}

	// A dry run says it wrote nothing.
	dry := filepath.Join(tmp, "dry.md")
	if code, out, errOut := runCLI(t, "flow", "run", "page", "--project", root, dev, "--update-baselines", "--dry-run", "--summary", dry); code != exitOK {
		t.Fatalf("--dry-run: exit %d\n%s\n%s", code, out, errOut)
	}
	md = string(mustRead(t, dry))
	for _, want := range []string{"### ✅ toolserver flow run: 1 flow passed\n", "- Dry run: no baseline written.\n", "- 🔄 **Updated baseline:** snapshot `out`", "  - baseline not written (dry run): `"} {
		if !strings.Contains(md, want) {
			t.Errorf("--dry-run: want %q in\n%s", want, md)
		}
	}

	// Over a link: the same report, the same summary.
	u := startServe(t, nil, false)
	linked := filepath.Join(tmp, "linked.md")
	code, out, errOut = runCLI(t, "flow", "run", "page", "--project", root, dev, "--link", u, "--artifacts", filepath.Join(tmp, "linked-arts"), "--summary", linked)
	if code != exitFailed {
		t.Fatalf("--link: exit %d, want %d\n%s\n%s", code, exitFailed, out, errOut)
	}
	md = string(mustRead(t, linked))
	for _, want := range []string{
		"- ❌ **Failed:** snapshot `out` — flow `page`, step 3 (line 4)\n  - element: `cropOn id=\"name\"`\n",
		"  - diff: `" + filepath.ToSlash(filepath.Join(tmp, "linked-arts")),
	} {
		if !strings.Contains(md, want) {
			t.Errorf("--link: want %q in\n%s", want, md)
		}
	}

	// Bad --summary values, refused before the run.
	for _, args := range [][]string{
		{"--summary", ""},
		{"--summary", tmp},
		{"--summary", file, "--no-summary"},
	} {
		code, out, errOut := runCLI(t, append([]string{"flow", "run", "page", "--project", root, dev}, args...)...)
		if code != exitUsage || !strings.Contains(errOut, "--summary") || strings.Contains(out, "Flow ") {
			t.Errorf("%q: exit %d, want %d and an error naming --summary before any flow\n%s\n%s", args, code, exitUsage, out, errOut)
		}
	}
	// A file that cannot be made: an error naming --summary after the run.
	blocker := filepath.Join(tmp, "blocker")
	os.WriteFile(blocker, nil, 0o644)
	code, _, errOut = runCLI(t, "flow", "run", "page", "--project", root, dev, "--summary", filepath.Join(blocker, "s.md"))
	if code == exitOK || !strings.Contains(errOut, "--summary "+filepath.Join(blocker, "s.md")) {
		t.Errorf("--summary under a file: exit %d\n%s", code, errOut)
	}
}
