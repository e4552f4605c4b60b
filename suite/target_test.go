package suite

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// tree writes files (path → content) under a new directory.
func tree(t *testing.T, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	for p, data := range files {
		p = filepath.Join(root, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

const (
	e2e      = "steps:\n  - launch: https://example.com\n"
	fragment = "steps:\n  - tap: Buy\n"
)

func names(ts []Target) []string {
	var out []string
	for _, t := range ts {
		out = append(out, t.Name)
	}
	return out
}

// TestResolveDir: a directory's flows in path order, fragments skipped
// with a note, subdirectories only with recursive, __baselines__ and
// hidden directories never.
func TestResolveDir(t *testing.T) {
	root := tree(t, map[string]string{
		"flows/b.yaml":                      e2e,
		"flows/a.yaml":                      e2e,
		"flows/part.yaml":                   fragment,
		"flows/notes.txt":                   "x",
		"flows/sub/c.yaml":                  e2e,
		"flows/__baselines__/x/d.yaml":      e2e,
		"flows/.hidden/e.yaml":              e2e,
		"flows/broken.yaml":                 "steps: [",
		"flows/sub/deeper/part2.yaml":       fragment,
		"flows/sub/deeper/__baselines__.md": "",
	})
	dir := filepath.Join(root, "flows")
	var notes []string
	note := func(s string) { notes = append(notes, s) }
	got, err := Resolve(root, dir, false, note)
	if err != nil {
		t.Fatal(err)
	}
	// A file that does not parse is run, to report its error.
	if want := []string{"a", "b", "broken"}; !slices.Equal(names(got), want) {
		t.Errorf("flat: got %v, want %v", names(got), want)
	}
	if want := []string{"skipping part.yaml: a fragment (it does not start with launch:), run by the flows that use it"}; !slices.Equal(notes, want) {
		t.Errorf("notes: got %q, want %q", notes, want)
	}
	notes = nil
	got, err = Resolve(root, dir, true, note)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"a", "b", "broken", "sub/c"}; !slices.Equal(names(got), want) {
		t.Errorf("recursive: got %v, want %v", names(got), want)
	}
	if len(notes) != 2 || !strings.HasPrefix(notes[1], "skipping "+filepath.Join("sub", "deeper", "part2.yaml")) {
		t.Errorf("notes: got %q", notes)
	}
	for _, g := range got {
		if !filepath.IsAbs(g.Path) {
			t.Errorf("%s: path %s is not absolute", g.Name, g.Path)
		}
	}
}

// TestResolveArgument: a name resolves in the project's flows, a .yaml
// file is itself; what names nothing is a TargetError.
func TestResolveArgument(t *testing.T) {
	root := tree(t, map[string]string{"only/part.yaml": fragment, "x.yaml": e2e})
	got, err := Resolve("proj", "checkout", false, nil)
	if err != nil || len(got) != 1 || got[0].Name != "checkout" || got[0].Path != filepath.Join("proj", ".argent", "flows", "checkout.yaml") {
		t.Errorf("a name: got %+v, %v", got, err)
	}
	got, err = Resolve("proj", filepath.Join(root, "x.yaml"), false, nil)
	if err != nil || len(got) != 1 || got[0].Name != "x" || got[0].Path != filepath.Join(root, "x.yaml") {
		t.Errorf("a file: got %+v, %v", got, err)
	}
	for _, c := range []struct{ arg, want string }{
		{"../x.yaml", `"../x.yaml" has a ".." segment; give the flow's path without one (or run from its project with --project)`},
		{"no such/thing", `"no such/thing" is neither a flow name (letters, digits, _ and -), a .yaml file nor a directory`},
		{filepath.Join(root, "only"), "no runnable flows in " + filepath.Join(root, "only") + " (add -r to look in subdirectories)"},
	} {
		_, err := Resolve("proj", c.arg, false, func(string) {})
		var te *TargetError
		if !errors.As(err, &te) || err.Error() != c.want {
			t.Errorf("%s: got %v, want the TargetError %q", c.arg, err, c.want)
		}
	}
}

// TestTargetOpen: a target's bytes in memory stand for its file.
func TestTargetOpen(t *testing.T) {
	root := tree(t, map[string]string{"a.yaml": e2e})
	f, err := Target{Path: filepath.Join(root, "a.yaml")}.Open()
	if err != nil || string(f.Data) != e2e {
		t.Errorf("from disk: got %v, %v", f, err)
	}
	f, err = Target{Path: "/nowhere/story.yaml", Data: []byte(fragment)}.Open()
	if err != nil || string(f.Data) != fragment || f.Path != "/nowhere/story.yaml" {
		t.Errorf("in memory: got %v, %v", f, err)
	}
	if got := (Target{Device: "d1"}).DeviceOr("d0"); got != "d1" {
		t.Errorf("DeviceOr: got %s", got)
	}
	if got := (Target{}).DeviceOr("d0"); got != "d0" {
		t.Errorf("DeviceOr: got %s", got)
	}
}

// TestList: each .yaml file directly in the directory, in name order,
// with its kind; one that does not parse says why on one line.
func TestList(t *testing.T) {
	root := tree(t, map[string]string{
		"b.yaml":     e2e,
		"a.yaml":     fragment,
		"bad.yaml":   "steps:\n  - nosuch: x\n",
		"sub/c.yaml": e2e,
		"notes.md":   "",
	})
	got, err := List(root)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"a", "b", "bad"}; !slices.Equal(listedNames(got), want) {
		t.Fatalf("got %v, want %v", listedNames(got), want)
	}
	if got[0].Kind != KindFragment || got[1].Kind != KindFlow || got[1].Steps != 1 || got[2].Kind != KindInvalid || got[2].Error == "" || strings.Contains(got[2].Error, "\n") {
		t.Errorf("got %+v", got)
	}
	if _, err := List(filepath.Join(root, "none")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("no directory: got %v", err)
	}
}

func listedNames(ls []Listed) []string {
	var out []string
	for _, l := range ls {
		out = append(out, l.Name)
	}
	return out
}
