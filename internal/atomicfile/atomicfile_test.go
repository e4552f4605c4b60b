package atomicfile

import (
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
