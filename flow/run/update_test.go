package run_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/toolserver/toolserver/flow"
	"github.com/toolserver/toolserver/flow/run"
)

// runUpdate runs <name> with the update u, in a dry run when dry, and
// returns its report and the baselines a dry run would write.
func (p *project) runUpdate(t *testing.T, dev run.Device, name string, u run.Update, dry bool, sink run.ArtifactSink) (*flow.Report, []run.Plan) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 90*time.Second)
	defer cancel()
	f, err := run.Disk{}.Open(p.flows(), name+".yaml")
	if err != nil {
		t.Fatal(err)
	}
	prep, err := run.Prepare(run.Entry{File: f, Name: name, StemFallback: name})
	if err != nil {
		t.Fatal(err)
	}
	rep, plans, err := run.Run(ctx, run.Options{Device: dev, Source: run.Disk{}, Update: u, DryRun: dry, Artifacts: sink}, prep)
	if err != nil {
		t.Fatalf("run %s: %v", name, err)
	}
	return rep, plans
}

// planned is the plans as "action file" lines.
func planned(plans []run.Plan) []string {
	var out []string
	for _, pl := range plans {
		out = append(out, pl.Action+" "+filepath.Base(pl.Path))
	}
	slices.Sort(out)
	return out
}

// TestUpdateChangedAndMissing: --update-baselines=missing writes only
// the baseline that is not there and leaves a failed comparison failed;
// =changed also rewrites the one that failed, keeping its baseline,
// current and diff images and saying it had failed; both leave a baseline
// that still matches untouched; a dry run of each lists what it would
// write.
func TestUpdateChangedAndMissing(t *testing.T) {
	t.Parallel()
	p := newProject(t)
	dev := device(t, "chromium-cdp-644x400")
	p.write(".argent/flows/home.yaml", `steps:
  - launch: "{{URL}}/app.html"
  - snapshot: same
  - snapshot: moved
`)
	if rep := p.run(t, dev, "home", true); !rep.OK {
		t.Fatalf("adopting: %s\n%s", lines(rep), dump(rep))
	}
	base := filepath.Join(p.flows(), "__baselines__", "home")
	same, moved := filepath.Join(base, "same__chromium-644x400.png"), filepath.Join(base, "moved__chromium-644x400.png")
	fresh := filepath.Join(base, "fresh__chromium-644x400.png")
	past := time.Now().Add(-time.Hour).Truncate(time.Second)
	for _, f := range []string{same, moved} {
		if err := os.Chtimes(f, past, past); err != nil {
			t.Fatal(err)
		}
	}
	oldMoved, err := os.ReadFile(moved)
	if err != nil {
		t.Fatal(err)
	}
	// Now "moved" changes and "fresh" has no baseline.
	p.write(".argent/flows/home.yaml", `steps:
  - launch: "{{URL}}/app.html"
  - snapshot: same
  - snapshot: fresh
  - tap: Go now
  - tap: Go now
  - snapshot: { name: moved, maxMismatch: 0.01 }
`)

	_, plans := p.runUpdate(t, dev, "home", run.UpdateMissing, true, nil)
	if got, want := planned(plans), []string{"new fresh__chromium-644x400.png"}; !slices.Equal(got, want) {
		t.Fatalf("missing, dry run: would write %q, want %q", got, want)
	}
	rep, plans := p.runUpdate(t, dev, "home", run.UpdateChanged, true, nil)
	if s := rep.Steps[5]; !strings.HasPrefix(s.Reason, "dry run: baseline not written (moved__chromium-644x400.png); it had failed: diff ") {
		t.Fatalf("changed, dry run: the changed snapshot: %q", s.Reason)
	}
	if got, want := planned(plans), []string{"new fresh__chromium-644x400.png", "update moved__chromium-644x400.png"}; !slices.Equal(got, want) {
		t.Fatalf("changed, dry run: would write %q, want %q", got, want)
	}
	if _, err := os.Stat(fresh); !os.IsNotExist(err) {
		t.Fatalf("a dry run wrote %s: %v", fresh, err)
	}

	rep, _ = p.runUpdate(t, dev, "home", run.UpdateMissing, false, nil)
	if s := rep.Steps[1]; s.Status != "pass" || !strings.HasPrefix(s.Reason, "0 pixels differ") || s.Baseline.State != flow.BaselineCompared {
		t.Fatalf("missing: the matching snapshot: %s %q", s.Status, s.Reason)
	}
	if s := rep.Steps[2]; s.Status != "pass" || s.Reason != "baseline written (fresh__chromium-644x400.png)" {
		t.Fatalf("missing: the new snapshot: %s %q", s.Status, s.Reason)
	}
	if s := rep.Steps[5]; s.Status != "fail" || !strings.Contains(s.Reason, "> 0.01% (moved__chromium-644x400.png)") {
		t.Fatalf("missing: the changed snapshot: %s %q", s.Status, s.Reason)
	}
	if b, _ := os.ReadFile(moved); string(b) != string(oldMoved) {
		t.Fatal("missing rewrote the baseline that failed")
	}

	if err := os.Remove(fresh); err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	rep, _ = p.runUpdate(t, dev, "home", run.UpdateChanged, false, dirSink{out})
	if !rep.OK {
		t.Fatalf("changed: %s\n%s", lines(rep), dump(rep))
	}
	if s := rep.Steps[1]; !strings.HasPrefix(s.Reason, "0 pixels differ") || s.Baseline.State != flow.BaselineCompared {
		t.Fatalf("changed: the matching snapshot: %q", s.Reason)
	}
	if s := rep.Steps[2]; s.Reason != "baseline written (fresh__chromium-644x400.png)" || s.Baseline.State != flow.BaselineWritten {
		t.Fatalf("changed: the new snapshot: %q", s.Reason)
	}
	s := rep.Steps[5]
	if !strings.HasPrefix(s.Reason, "baseline updated (moved__chromium-644x400.png); it had failed: diff ") || s.Baseline.State != flow.BaselineUpdated || s.Mismatch == nil {
		t.Fatalf("changed: the changed snapshot: %q %+v", s.Reason, s.Baseline)
	}
	for _, role := range []string{"baseline", "current", "diff"} {
		if _, err := os.Stat(s.Artifacts[role].Path); err != nil {
			t.Errorf("changed: the %s image of what changed: %v", role, err)
		}
	}
	if b, _ := os.ReadFile(moved); string(b) == string(oldMoved) {
		t.Fatal("changed left the baseline that failed")
	}
	if st, err := os.Stat(same); err != nil || !st.ModTime().Equal(past) {
		t.Fatalf("changed wrote the baseline that matched: %v", err)
	}
	// What it wrote is what the screens are now.
	if rep := p.run(t, dev, "home", false); !rep.OK {
		t.Fatalf("compare after changed: %s\n%s", lines(rep), dump(rep))
	}
}
