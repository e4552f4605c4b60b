package store

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// TestKeepArtifacts: a handle at any depth becomes the absolute path of
// its copy in dir; a handle whose file is gone becomes null; the rest of
// the result is as it was.
func TestKeepArtifacts(t *testing.T) {
	src := filepath.Join(t.TempDir(), "x-diff.png")
	if err := os.WriteFile(src, []byte("png"), 0o644); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "kept")
	res := map[string]any{
		"ok":    true,
		"steps": []any{map[string]any{"diff": Artifact{Artifact: true, ID: "a1", Filename: "sub/x-diff.png", HostPath: src}}},
		"gone":  Artifact{Artifact: true, ID: "a2", Filename: "y.png", HostPath: filepath.Join(dir, "none.png")},
	}
	got := KeepArtifacts(res, dir)
	want := map[string]any{
		"ok":    true,
		"steps": []any{map[string]any{"diff": filepath.Join(dir, "x-diff.png")}},
		"gone":  nil,
	}
	if !filepath.IsAbs(dir) {
		t.Fatalf("dir %s is not absolute", dir)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "x-diff.png")); err != nil || string(b) != "png" {
		t.Errorf("the copy: got %q, %v, want png", b, err)
	}
}
