package summary

import (
	"os"
	"path/filepath"
	"testing"
)

// TestAppendFile: a summary starts a block of its own after what the
// file holds, whatever its last line's end.
func TestAppendFile(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct{ old, want string }{
		{"", "## run\n"},
		{"step one", "step one\n\n## run\n"},
		{"step one\n", "step one\n\n## run\n"},
		{"step one\n\n", "step one\n\n## run\n"},
		{"\n", "\n## run\n"},
	} {
		p := filepath.Join(dir, "summary.md")
		if err := os.WriteFile(p, []byte(c.old), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := AppendFile(p, []byte("## run\n")); err != nil {
			t.Fatal(err)
		}
		if got, _ := os.ReadFile(p); string(got) != c.want {
			t.Errorf("after %q: got %q, want %q", c.old, got, c.want)
		}
	}
	if err := AppendFile(filepath.Join(dir, "new.md"), []byte("x")); err != nil {
		t.Errorf("a new file: %v", err)
	}
}

// TestWriteFile: the file is replaced, its directory made.
func TestWriteFile(t *testing.T) {
	p := filepath.Join(t.TempDir(), "out", "summary.md")
	for _, md := range []string{"first", "second"} {
		if err := WriteFile(p, []byte(md)); err != nil {
			t.Fatal(err)
		}
		if got, _ := os.ReadFile(p); string(got) != md {
			t.Errorf("got %q, want %q", got, md)
		}
	}
}
