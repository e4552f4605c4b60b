package run_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/toolserver/toolserver/flow"
	"github.com/toolserver/toolserver/flow/run"
)

// dirSink keeps artifacts as files in a directory and reports their paths.
type dirSink struct{ dir string }

func (s dirSink) Put(fl, name, mime string, data []byte) (flow.Artifact, error) {
	p := filepath.Join(s.dir, fl, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return flow.Artifact{}, err
	}
	return flow.Artifact{Path: p}, os.WriteFile(p, data, 0o644)
}

func (p *project) runWith(t *testing.T, dev run.Device, name string, update bool, sink run.ArtifactSink) *flow.Report {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	f, _ := run.Disk{}.Open(p.flows(), name+".yaml")
	rep, err := run.Execute(ctx, run.Options{Device: dev, Source: run.Disk{}, UpdateBaselines: update, Artifacts: sink}, run.Entry{File: f, Name: name, StemFallback: name})
	if err != nil {
		t.Fatalf("run %s: %v", name, err)
	}
	return rep
}

func TestSnapshotLifecycle(t *testing.T) {
	t.Parallel()
	p := newProject(t)
	dev := device(t, "chromium-cdp-640x400")
	p.write(".argent/flows/home.yaml", `steps:
  - launch: "{{URL}}/app.html"
  - snapshot: start
  - tap: Go now
  - snapshot: { name: button, cropOn: { id: top } }
`)
	base := filepath.Join(p.flows(), "__baselines__", "home")
	full := filepath.Join(base, "start__chromium-640x400.png")

	// Compare with no baseline: fails, writes nothing.
	rep := p.run(t, dev, "home", false)
	if s := rep.Steps[1]; s.Status != "fail" || !strings.HasPrefix(s.Reason, `no baseline for "start" on this device class — expected `+full) {
		t.Fatalf("missing baseline: %s %q", s.Status, s.Reason)
	}
	if _, err := os.Stat(base); !os.IsNotExist(err) {
		t.Fatalf("a compare run wrote into %s", base)
	}

	// Update: writes both; again: says updated.
	rep = p.run(t, dev, "home", true)
	if !rep.OK || rep.Steps[1].Reason != "baseline written (start__chromium-640x400.png)" {
		t.Fatalf("update: %s\n%s", lines(rep), dump(rep))
	}
	crop := rep.Steps[3].SnapshotKey
	if !strings.HasPrefix(crop, "button__chromium-640x400-crop-") || !strings.HasSuffix(crop, ".png") {
		t.Fatalf("crop key: %q", crop)
	}
	if _, err := os.Stat(filepath.Join(base, crop)); err != nil {
		t.Fatalf("cropped baseline not written: %v", err)
	}
	// Again on the same screen: the same bytes, so nothing is written
	// and the file keeps its time.
	past := time.Now().Add(-time.Hour).Truncate(time.Second)
	if err := os.Chtimes(full, past, past); err != nil {
		t.Fatal(err)
	}
	rep = p.run(t, dev, "home", true)
	if s := rep.Steps[1]; s.Reason != "baseline unchanged (start__chromium-640x400.png)" || s.Baseline == nil || s.Baseline.State != flow.BaselineCompared {
		t.Fatalf("update on the same screen: %q %+v", s.Reason, s.Baseline)
	}
	if st, err := os.Stat(full); err != nil || !st.ModTime().Equal(past) {
		t.Fatalf("an unchanged baseline was written: %v %v, want mtime %v", err, st.ModTime(), past)
	}
	// Over a different file: updated.
	if err := os.WriteFile(full, []byte("an older baseline"), 0o644); err != nil {
		t.Fatal(err)
	}
	rep = p.run(t, dev, "home", true)
	if s := rep.Steps[1]; s.Reason != "baseline updated (start__chromium-640x400.png)" || s.Baseline.State != flow.BaselineUpdated {
		t.Fatalf("update over another file: %q", s.Reason)
	}
	if ents, _ := os.ReadDir(base); len(ents) != 2 {
		t.Fatalf("baseline dir holds %d files, want 2 (no temp files left)", len(ents))
	}

	// Compare: passes on the same screens.
	rep = p.run(t, dev, "home", false)
	if !rep.OK || rep.Steps[1].Reason != "0 pixels differ, 0 px allowed (default on chromium) (start__chromium-640x400.png)" {
		t.Fatalf("compare: %s\n%s", lines(rep), dump(rep))
	}

	// A changed screen fails with baseline, current and diff artifacts
	// and says where it changed.
	p.write(".argent/flows/home.yaml", `steps:
  - launch: "{{URL}}/app.html"
  - tap: Go now
  - tap: Go now
  - snapshot: { name: start, maxMismatch: 0.01 }
`)
	out := t.TempDir()
	rep = p.runWith(t, dev, "home", false, dirSink{out})
	s := rep.Steps[3]
	if s.Status != "fail" || !strings.HasPrefix(s.Reason, "diff ") || !strings.Contains(s.Reason, "> 0.01% (start__chromium-640x400.png)") || !strings.Contains(s.Reason, "largest changed area") {
		t.Fatalf("changed screen: %s %q", s.Status, s.Reason)
	}
	for _, role := range []string{"baseline", "current", "diff"} {
		p := s.Artifacts[role].Path
		if _, err := os.Stat(p); err != nil {
			t.Errorf("artifact %s: %v", role, err)
		}
	}
	if s.Mismatch == nil || s.Mismatch.Pixels == 0 {
		t.Fatalf("no mismatch detail: %+v", s.Mismatch)
	}

	// Within an explicit tolerance the step passes, and still says that
	// pixels differ and where.
	p.write(".argent/flows/home.yaml", `steps:
  - launch: "{{URL}}/app.html"
  - tap: Go now
  - snapshot: { name: start, maxMismatch: 0.5 }
`)
	rep = p.run(t, dev, "home", false)
	if s := rep.Steps[2]; s.Status != "pass" || !strings.Contains(s.Reason, "differ within the tolerance, largest area") {
		t.Fatalf("small change: %s %q", s.Status, s.Reason)
	}
}

func TestNestedFlowExecute(t *testing.T) {
	t.Parallel()
	p := newProject(t)
	dev := device(t, "chromium-cdp-641x400")
	p.write(".argent/flows/child.yaml", `steps:
  - launch: "{{URL}}/app.html"
  - snapshot: page
`)
	p.write(".argent/flows/parent.yaml", `steps:
  - echo: before
  - tool: flow-execute
    args: { name: child, project_root: "{{ROOT}}" }
  - echo: after
`)
	rep := p.run(t, dev, "parent", true)
	want := "echo:pass tool:pass launch:pass:child@1 snapshot:pass:child@1 echo:pass"
	if got := lines(rep); got != want || !rep.OK {
		t.Fatalf("got %s, want %s\n%s", got, want, dump(rep))
	}
	// The nested run keeps its baselines beside its own file, under its
	// name, and inherited updateBaselines from the call.
	if _, err := os.Stat(filepath.Join(p.flows(), "__baselines__", "child", "page__chromium-641x400.png")); err != nil {
		t.Fatal(err)
	}
	p.write(".argent/flows/parent2.yaml", `steps:
  - tool: flow-execute
    args: { name: nope, project_root: "{{ROOT}}" }
`)
	rep = p.run(t, dev, "parent2", false)
	if s := rep.Steps[0]; s.Status != "error" || s.Reason != "ENOENT: no such file or directory, open '"+filepath.Join(p.flows(), "nope.yaml")+"'" {
		t.Fatalf("missing nested: %s %q", s.Status, s.Reason)
	}
}
