package store_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/toolserver/toolserver/store"
)

func newArtifacts(t *testing.T, maxCount int, maxBytes int64) (*store.Artifacts, string) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "artifacts")
	s, err := store.NewArtifacts(dir, maxCount, maxBytes)
	if err != nil {
		t.Fatal(err)
	}
	return s, dir
}

func put(t *testing.T, s *store.Artifacts, name string, data []byte) store.Artifact {
	t.Helper()
	h, err := s.Put(name, "image/png", data)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func TestArtifactPutGet(t *testing.T) {
	t.Parallel()
	s, dir := newArtifacts(t, 10, 1<<20)
	data := []byte("\x89PNG not really")
	h := put(t, s, "../../etc/shot one.png", data)
	// The name keeps only its base, with unsafe characters replaced.
	if !h.Artifact || h.ID == "" || h.Filename != "shot_one.png" || h.MimeType != "image/png" || h.Size != int64(len(data)) || h.MtimeMs <= 0 {
		t.Fatalf("got %+v, want an image/png handle named shot_one.png of %d bytes", h, len(data))
	}
	if filepath.Dir(filepath.Dir(h.HostPath)) != dir {
		t.Fatalf("got host path %s, want a file under %s", h.HostPath, dir)
	}
	got, path, err := s.Get(h.ID)
	if err != nil || got != h || path != h.HostPath {
		t.Fatalf("Get: got %+v, %q, %v; want %+v at %s", got, path, err, h, h.HostPath)
	}
	if b, err := os.ReadFile(path); err != nil || !bytes.Equal(b, data) {
		t.Fatalf("file: got %q, %v; want %q", b, err, data)
	}
	if _, _, err := s.Get("nope"); !errors.Is(err, store.ErrNoArtifact) {
		t.Fatalf("unknown id: got %v, want ErrNoArtifact", err)
	}
}

// TestArtifactEviction: past the count or the byte budget the oldest
// artifacts go, files and all.
func TestArtifactEviction(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		maxCount int
		maxBytes int64
	}{
		{"count", 2, 1 << 20},
		{"bytes", 10, 25},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s, dir := newArtifacts(t, tc.maxCount, tc.maxBytes)
			first := put(t, s, "a.png", bytes.Repeat([]byte("a"), 10))
			second := put(t, s, "b.png", bytes.Repeat([]byte("b"), 10))
			third := put(t, s, "c.png", bytes.Repeat([]byte("c"), 10))
			if _, _, err := s.Get(first.ID); !errors.Is(err, store.ErrNoArtifact) {
				t.Fatalf("oldest: got %v, want it evicted", err)
			}
			if _, err := os.Stat(filepath.Dir(first.HostPath)); !errors.Is(err, os.ErrNotExist) {
				t.Fatalf("oldest's directory: got %v, want it removed", err)
			}
			for _, h := range []store.Artifact{second, third} {
				if _, _, err := s.Get(h.ID); err != nil {
					t.Fatalf("%s: got %v, want it kept", h.Filename, err)
				}
			}
			entries, err := os.ReadDir(dir)
			if err != nil || len(entries) != 2 {
				t.Fatalf("got %d entries (%v) in the store, want 2", len(entries), err)
			}
		})
	}
}

// TestArtifactPutFailure: a Put that cannot write leaves nothing behind
// and counts nothing.
func TestArtifactPutFailure(t *testing.T) {
	t.Parallel()
	s, dir := newArtifacts(t, 2, 1<<20)
	kept := put(t, s, "kept.png", []byte("x"))
	// The store's directory gives way to a file: no artifact directory
	// can be made in it.
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dir, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Put("lost.png", "image/png", []byte("y")); err == nil {
		t.Fatal("Put into a store whose directory is a file: got nil error")
	}
	if err := os.Remove(dir); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	// The failed Put took no slot: with a cap of two, kept and next both
	// stay listed.
	next := put(t, s, "next.png", []byte("z"))
	if _, _, err := s.Get(kept.ID); err != nil {
		t.Fatalf("kept: got %v, want it still listed (the failed Put took no slot)", err)
	}
	if _, _, err := s.Get(next.ID); err != nil {
		t.Fatal(err)
	}
}

func TestArtifactClose(t *testing.T) {
	t.Parallel()
	s, dir := newArtifacts(t, 10, 1<<20)
	h := put(t, s, "a.png", []byte("a"))
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("after Close: got %v, want the directory removed", err)
	}
	if _, _, err := s.Get(h.ID); !errors.Is(err, store.ErrNoArtifact) {
		t.Fatalf("after Close: got %v, want ErrNoArtifact", err)
	}
}
