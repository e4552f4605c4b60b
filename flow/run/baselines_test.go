package run_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/toolserver/toolserver/flow"
	"github.com/toolserver/toolserver/flow/run"
)

// TestProjectBaselines: a baseline is used when a snapshot step of a
// run reads it: through a run: fragment, in a nested flow-execute flow,
// in the form of the step (viewport, fullPage, the cropOn hash), at any
// size; a baseline of another name, form or crop, one of a flow that is
// gone and one directly in __baselines__ are unused; a flow that does not
// parse keeps its run's baselines with a warning; a symbolic link to a
// directory outside is not followed. Prune deletes only what it is given
// under __baselines__, a link and not what it points to.
func TestProjectBaselines(t *testing.T) {
	t.Parallel()
	p := newProject(t)
	p.write(".argent/flows/home.yaml", `steps:
  - launch: https://example.com/
  - snapshot: top
  - run: parts/footer
  - snapshot: { name: long, fullPage: true }
  - snapshot: { name: logo, cropOn: { id: logo } }
  - tool: flow-execute
    args: { name: child, project_root: "{{ROOT}}" }
`)
	p.write(".argent/flows/parts/footer.yaml", "steps:\n  - snapshot: footer\n")
	p.write(".argent/flows/child.yaml", "steps:\n  - snapshot: inner\n")
	p.write(".argent/flows/broken.yaml", "steps:\n  - snapshot: [\n")
	fl, err := flow.Parse("x.yaml", []byte("steps:\n  - snapshot: { name: logo, cropOn: { id: logo } }\n"))
	if err != nil {
		t.Fatal(err)
	}
	var hash string
	for s := range fl.All() {
		hash = s.Directive.(*flow.Snapshot).CropOn.CropHash()
	}
	b := ".argent/flows/__baselines__/"
	used := []string{
		b + "home/top__chromium-1280x800.png",
		b + "home/top__chromium-390x844.png",
		b + "home/footer__chromium-1280x800.png",
		b + "home/long__chromium-1280x800-full.png",
		b + "home/logo__chromium-1280x800-crop-" + hash + ".png",
		b + "home/top__ios-iphone15.png",
		b + "child/inner__chromium-1280x800.png",
		b + "broken/anything__chromium-1280x800.png",
	}
	unused := []string{
		b + "home/gone__chromium-1280x800.png",
		b + "home/top__chromium-1280x800-full.png",
		b + "home/long__chromium-1280x800.png",
		b + "home/logo__chromium-1280x800-crop-00000000.png",
		b + "old/top__chromium-1280x800.png",
		b + "stray.png",
		b + "parts/footer/footer__chromium-1280x800.png",
	}
	for _, f := range append(slices.Clone(used), unused...) {
		p.write(f, "png")
	}
	p.write(b+"home/notes.txt", "not a baseline")
	outside := t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, "x__chromium-1x1.png"), []byte("png"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(p.flows(), "__baselines__", "linked")); err != nil {
		t.Fatal(err)
	}

	// A link to a file outside, named as no snapshot reads it: unused,
	// and prune removes the link alone.
	link := b + "home/ln__chromium-1x1.png"
	if err := os.Symlink(filepath.Join(outside, "x__chromium-1x1.png"), filepath.Join(p.root, link)); err != nil {
		t.Fatal(err)
	}
	unused = append(unused, link)

	use, err := run.ProjectBaselines(p.root)
	if err != nil {
		t.Fatal(err)
	}
	var gotUsed, gotUnused []string
	for _, bl := range use.Baselines {
		if bl.Used {
			gotUsed = append(gotUsed, bl.Path)
		} else {
			gotUnused = append(gotUnused, bl.Path)
		}
		if bl.Bytes != 3 && bl.Path != link {
			t.Errorf("%s: %d bytes, want 3", bl.Path, bl.Bytes)
		}
	}
	slices.Sort(used)
	slices.Sort(unused)
	if !slices.Equal(gotUsed, used) {
		t.Errorf("used:\n got %q\nwant %q", gotUsed, used)
	}
	if !slices.Equal(gotUnused, unused) || !slices.Equal(use.Unused(), unused) {
		t.Errorf("unused:\n got %q\nwant %q", gotUnused, unused)
	}
	if len(use.Warnings) != 1 || !strings.Contains(use.Warnings[0], "broken.yaml") || !strings.Contains(use.Warnings[0], "counted as used") {
		t.Errorf("warnings: %q, want one for broken.yaml", use.Warnings)
	}

	// Prune: the unused go; a path out of __baselines__ or through the
	// link is refused; the link's target stays.
	deleted, refused, err := run.Prune(p.root, append(slices.Clone(unused), ".argent/flows/home.yaml", "../x.png", b+"linked/x__chromium-1x1.png"))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(deleted, unused) {
		t.Errorf("deleted %q, want %q", deleted, unused)
	}
	if len(refused) != 3 {
		t.Errorf("refused %v, want the flow file, ../x.png and the path through the link", refused)
	}
	for _, f := range unused {
		if _, err := os.Lstat(filepath.Join(p.root, f)); !os.IsNotExist(err) {
			t.Errorf("%s: not deleted (%v)", f, err)
		}
	}
	for _, f := range used {
		if _, err := os.Stat(filepath.Join(p.root, f)); err != nil {
			t.Errorf("%s: %v, want it kept", f, err)
		}
	}
	if _, err := os.Stat(filepath.Join(outside, "x__chromium-1x1.png")); err != nil {
		t.Errorf("the file outside, behind the link: %v", err)
	}
}
