package atomicfile

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestWriteFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "home__chromium-4x4.png")
	for _, content := range []string{"first version", "second"} {
		if err := WriteFile(path, []byte(content)); err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(path)
		if err != nil || string(got) != content {
			t.Fatalf("got %q, %v, want %q", got, err, content)
		}
	}
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().Perm() != 0o644 {
		t.Fatalf("got mode %v, %v, want 0644", fi.Mode().Perm(), err)
	}
	assertOnly(t, dir, "home__chromium-4x4.png")

	// Failure at the rename (the target is a non-empty directory): the old
	// state stays and no temporary file is left.
	target := filepath.Join(dir, "taken")
	if err := os.MkdirAll(filepath.Join(target, "inside"), 0o755); err != nil {
		t.Fatal(err)
	}
	err = WriteFile(target, []byte("x"))
	if err == nil || !strings.Contains(err.Error(), target) {
		t.Fatalf("got %v, want an error naming %s", err, target)
	}
	assertOnly(t, dir, "home__chromium-4x4.png", "taken")

	// Failure at the start (no such directory).
	if err := WriteFile(filepath.Join(dir, "missing", "x.png"), []byte("x")); err == nil {
		t.Fatal("missing directory: got no error")
	}
	assertOnly(t, dir, "home__chromium-4x4.png", "taken")
}

// assertOnly fails unless dir holds exactly the named entries.
func assertOnly(t *testing.T, dir string, names ...string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range entries {
		got = append(got, e.Name())
	}
	if strings.Join(got, ",") != strings.Join(names, ",") {
		t.Fatalf("directory holds %v, want %v", got, names)
	}
}

// TestCreateIn: a new file is written with its mode past the umask; an
// existing one (or a link, even a dangling one) is left, with an error
// matching fs.ErrExist; no temporary file is left either way; a name
// that climbs out of the root is refused.
func TestCreateIn(t *testing.T) {
	dir := t.TempDir()
	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	if err := CreateIn(root, "a.yaml", []byte("new"), 0o600); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(filepath.Join(dir, "a.yaml"))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("got mode %v, %v, want 0600", fi.Mode().Perm(), err)
	}
	if err := CreateIn(root, "a.yaml", []byte("other"), 0o644); !errors.Is(err, fs.ErrExist) {
		t.Errorf("an existing file: got %v, want fs.ErrExist", err)
	}
	if got, _ := os.ReadFile(filepath.Join(dir, "a.yaml")); string(got) != "new" {
		t.Errorf("an existing file: got %q, want it left", got)
	}
	if err := os.Symlink("nowhere", filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	if err := CreateIn(root, "link", []byte("x"), 0o644); !errors.Is(err, fs.ErrExist) {
		t.Errorf("a dangling link: got %v, want fs.ErrExist", err)
	}
	if err := CreateIn(root, "../out.yaml", []byte("x"), 0o644); err == nil {
		t.Error("a name out of the root: got no error")
	}
	assertOnly(t, dir, "a.yaml", "link")
}

// TestReplaceIn: the file is replaced whole with the mode given, past the
// umask; WriteFileIn's is 0644 under it, its errors naming the file.
func TestReplaceIn(t *testing.T) {
	dir := t.TempDir()
	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	if err := os.WriteFile(filepath.Join(dir, ".gitignore"), []byte("old\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := ReplaceIn(root, ".gitignore", []byte("old\nnew\n"), 0o640); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(filepath.Join(dir, ".gitignore"))
	fi, _ := os.Stat(filepath.Join(dir, ".gitignore"))
	if string(got) != "old\nnew\n" || fi.Mode().Perm() != 0o640 {
		t.Errorf("got %q mode %v, want the new content, 0640", got, fi.Mode().Perm())
	}
	if err := WriteFileIn(root, "b.png", []byte("png")); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "taken", "inside"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := WriteFileIn(root, "taken", []byte("x")); err == nil || !strings.HasPrefix(err.Error(), "write taken: ") {
		t.Errorf("a rename that fails: got %v, want write taken: …", err)
	}
	if err := ReplaceIn(root, "taken", []byte("x"), 0o644); err == nil {
		t.Error("ReplaceIn over a directory: got no error")
	}
	assertOnly(t, dir, ".gitignore", "b.png", "taken")
}
