package main

import (
	"encoding/json"
	"encoding/xml"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// storybookBuild is the static build of testdata/storybook that
// scripts/build-storybook.sh makes (make test runs it first).
const storybookBuild = "../../.cache/storybook/static"

// The rig's stories (testdata/storybook/stories/Widgets.stories.js) and
// what toolserver storybook does with each.
var (
	// snapped get a baseline and pass on a rerun.
	snapped = []string{"widgets--card", "widgets--clock", "widgets--fetched", "widgets--primary", "widgets--secondary"}
	// widgets--hidden is tagged !test, widgets--skipped sets
	// parameters.toolserver.skip: neither runs. widgets--broken throws.
	notRun = []string{"widgets--hidden", "widgets--skipped"}
)

// storybookCopy copies the rig's static build into a directory of the
// test's own, which the test may change (public/label.json, which the
// Fetched story renders), and returns it.
func storybookCopy(t *testing.T) string {
	t.Helper()
	if _, err := os.Stat(filepath.Join(storybookBuild, "index.json")); err != nil {
		t.Fatalf("no Storybook build at %s: run ./scripts/build-storybook.sh (make test runs it): %v", storybookBuild, err)
	}
	dst := filepath.Join(t.TempDir(), "storybook-static")
	err := filepath.WalkDir(storybookBuild, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(storybookBuild, p)
		to := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(to, 0o755)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(to, data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}

// storyReports runs toolserver storybook with -o json and returns the
// exit code, each story's report by id, and stderr.
func storyReports(t *testing.T, e env, args ...string) (int, map[string]storyReport, string) {
	t.Helper()
	code, stdout, stderr := runCLIEnv(t, e, append([]string{"storybook", "-o", "json"}, args...)...)
	var reps []storyReport
	if err := json.Unmarshal([]byte(stdout), &reps); err != nil {
		t.Fatalf("storybook -o json: %v\nstdout: %s\nstderr: %s", err, stdout, stderr)
	}
	by := map[string]storyReport{}
	for _, r := range reps {
		by[r.Flow] = r
	}
	return code, by, stderr
}

type storyReport struct {
	Flow    string `json:"flow"`
	Device  string `json:"device"`
	OK      bool   `json:"ok"`
	Failed  int    `json:"failed"`
	Errored int    `json:"errored"`
	Steps   []struct {
		Kind   string `json:"kind"`
		Status string `json:"status"`
		Reason string `json:"reason"`
	} `json:"steps"`
}

// checkStories checks the stories of a run of the rig: each of snapped
// ran and passed unless it is in failing (then its snapshot failed), the
// broken story errored with its error, and the stories of notRun did
// not run.
func checkStories(t *testing.T, by map[string]storyReport, failing ...string) {
	t.Helper()
	for _, id := range snapped {
		r, ok := by[id]
		switch {
		case !ok:
			t.Errorf("story %s: no report", id)
		case slices.Contains(failing, id):
			if r.OK || r.Failed != 1 {
				t.Errorf("story %s: ok %v, failed %d; want its snapshot to fail", id, r.OK, r.Failed)
			}
		case !r.OK:
			t.Errorf("story %s: not ok: %+v", id, r.Steps)
		}
	}
	b, ok := by["widgets--broken"]
	if !ok || b.Errored != 1 || len(b.Steps) < 2 || !strings.Contains(b.Steps[1].Reason, "story widgets--broken threw: the Broken story fails on purpose") {
		t.Errorf("story widgets--broken: got %+v, want step 2 errored with the story's error", b)
	}
	for _, id := range notRun {
		if _, ok := by[id]; ok {
			t.Errorf("story %s ran; want it skipped", id)
		}
	}
	if len(by) != len(snapped)+1 {
		t.Errorf("got %d reports, want %d", len(by), len(snapped)+1)
	}
}

// storyTimeout is how long the tests let a story take to render.
const storyTimeout = "60s"

// TestStorybook snapshots a real Storybook 10 build on real Chromium:
// --update-baselines captures one baseline per story, a rerun passes,
// a story whose content changed (its public/label.json) fails while the
// others pass, a !test story and one whose parameters skip it do not run,
// and a story that throws is an error naming it, the others going on.
func TestStorybook(t *testing.T) {
	static := storybookCopy(t)
	dev := sharedDevice(t, "chromium-cdp-640x360")
	project := t.TempDir()
	// A minute for each story to render, not the default 15 s: on a
	// loaded CI machine the preview's boot alone once took longer.
	args := []string{static, "--project", project, "--device", dev, "--timeout", storyTimeout}

	code, stdout, stderr := runCLIEnv(t, nil, append([]string{"storybook", "--update-baselines"}, args...)...)
	if code != 1 {
		t.Fatalf("storybook --update-baselines: exit %d, want 1 (the broken story)\nstdout: %s\nstderr: %s", code, stdout, stderr)
	}
	for _, want := range []string{"widgets--hidden (tagged !test", "widgets--skipped (parameters.toolserver.skip)"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr: no %q in\n%s", want, stderr)
		}
	}
	if !strings.Contains(stdout, "story widgets--broken threw: the Broken story fails on purpose") {
		t.Errorf("stdout: the broken story's error is missing:\n%s", stdout)
	}
	dir := filepath.Join(project, "__baselines__", "storybook")
	var want []string
	for _, id := range snapped {
		want = append(want, id+"__chromium-640x360.png")
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range ents {
		got = append(got, e.Name())
	}
	if !slices.Equal(got, want) {
		t.Fatalf("baselines in %s: got %v, want %v", dir, got, want)
	}

	junit := filepath.Join(t.TempDir(), "junit.xml")
	code, by, stderr := storyReports(t, nil, append(args, "--junit", junit)...)
	if code != 1 {
		t.Errorf("rerun: exit %d, want 1 (the broken story)\nstderr: %s", code, stderr)
	}
	checkStories(t, by)
	data, err := os.ReadFile(junit)
	if err != nil {
		t.Fatal(err)
	}
	var suites struct {
		Suites []struct {
			Name string `xml:"name,attr"`
		} `xml:"testsuite"`
	}
	if err := xml.Unmarshal(data, &suites); err != nil {
		t.Fatalf("junit: %v", err)
	}
	var names []string
	for _, s := range suites.Suites {
		names = append(names, s.Name)
	}
	if !slices.Contains(names, "widgets--fetched") || !slices.Contains(names, "widgets--broken") {
		t.Errorf("junit suites: got %v, want the story ids", names)
	}

	// The Fetched story renders public/label.json: a change there is a
	// change of that story's markup, without a rebuild.
	if err := os.WriteFile(filepath.Join(static, "label.json"), []byte(`{ "label": "Changed label", "color": "#cf222e" }`), 0o644); err != nil {
		t.Fatal(err)
	}
	summary := filepath.Join(t.TempDir(), "summary.md")
	code, by, stderr = storyReports(t, nil, append(args, "--summary", summary)...)
	if code != 1 {
		t.Errorf("changed: exit %d, want 1\nstderr: %s", code, stderr)
	}
	checkStories(t, by, "widgets--fetched")
	// The summary names the command, counts stories and lists the story
	// whose snapshot failed.
	md, err := os.ReadFile(summary)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"toolserver storybook", "stories", "widgets--fetched"} {
		if !strings.Contains(string(md), want) {
			t.Errorf("--summary: no %q in\n%s", want, md)
		}
	}
	if strings.Contains(string(md), " flows") {
		t.Errorf("--summary of a storybook run counts flows:\n%s", md)
	}
}

// TestStorybookLinked runs the rig's build on a tool-server over a link:
// the directory this command serves on 127.0.0.1 reaches the server's
// browser through the run's tunnel (--expose-only: through nothing
// else), and the baselines land in this project under the same names.
func TestStorybookLinked(t *testing.T) {
	static := storybookCopy(t)
	dev := sharedDevice(t, "chromium-cdp-641x360")
	e := env{}
	u := startServe(t, e, false)
	project := t.TempDir()
	args := []string{static, "--project", project, "--device", dev, "--link", u, "--expose-only", "--timeout", storyTimeout}

	code, _, stderr := storyReports(t, e, append(args, "--update-baselines")...)
	if code != 1 {
		t.Fatalf("linked --update-baselines: exit %d, want 1 (the broken story)\nstderr: %s", code, stderr)
	}
	for _, id := range snapped {
		if _, err := os.Stat(filepath.Join(project, "__baselines__", "storybook", id+"__chromium-641x360.png")); err != nil {
			t.Errorf("story %s: %v", id, err)
		}
	}
	code, by, stderr := storyReports(t, e, args...)
	if code != 1 {
		t.Errorf("linked rerun: exit %d, want 1\nstderr: %s", code, stderr)
	}
	checkStories(t, by)
}
