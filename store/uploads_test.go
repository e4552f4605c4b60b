package store_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"testing/iotest"
	"time"

	"go.uber.org/goleak"

	"github.com/toolserver/toolserver/store"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// clock is a settable Now for an Uploads store.
type clock struct {
	mu  sync.Mutex
	now time.Time
	// read, when set, is told of each reading of the clock that a test is
	// waiting for (a send nobody receives is dropped).
	read chan struct{}
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	select {
	case c.read <- struct{}{}:
	default:
	}
	return c.now
}

// waitReads waits for n readings of the clock made from now on, or fails.
func (c *clock) waitReads(t *testing.T, n int) {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for range n {
		select {
		case <-c.read:
		case <-deadline:
			t.Fatalf("got fewer than %d readings of the clock in 10 s, want %d", n, n)
		}
	}
}

func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// newUploads returns a store in a fresh directory: uploads of at most 1 KiB,
// 1.5 KiB pending, kept a minute.
func newUploads(t *testing.T) (*store.Uploads, string, *clock) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "uploads")
	c := &clock{now: time.Unix(1_700_000_000, 0)}
	s, err := store.NewUploads(store.UploadConfig{Dir: dir, MaxUpload: 1 << 10, MaxPending: 3 << 9, TTL: time.Minute, Now: c.Now})
	if err != nil {
		t.Fatal(err)
	}
	return s, dir, c
}

// gz returns a gzip stream of n bytes that compresses to about n bytes
// (the content is not repetitive), so the caps count what is sent.
func gz(t *testing.T, n int) []byte {
	t.Helper()
	raw := make([]byte, n)
	for i := range raw {
		raw[i] = byte(i*7919 ^ i>>3)
	}
	var b bytes.Buffer
	zw, err := gzip.NewWriterLevel(&b, gzip.NoCompression)
	if err != nil {
		t.Fatal(err)
	}
	zw.Write(raw)
	zw.Close()
	return b.Bytes()
}

// files lists the names in dir.
func files(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

func receive(t *testing.T, s *store.Uploads, data []byte) (store.Upload, error) {
	t.Helper()
	return s.Receive(t.Context(), bytes.NewReader(data))
}

func TestUploadReceiveTakeRemove(t *testing.T) {
	t.Parallel()
	s, dir, _ := newUploads(t)
	data := gz(t, 600)
	u, err := receive(t, s, data)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(data)
	if u.ID == "" || u.Size != int64(len(data)) || u.SHA256 != hex.EncodeToString(sum[:]) || filepath.Dir(u.Path) != dir {
		t.Fatalf("got %+v, want id, size %d, sha256 %x, a file in %s", u, len(data), sum, dir)
	}
	if got, err := os.ReadFile(u.Path); err != nil || !bytes.Equal(got, data) {
		t.Fatalf("stored file: %v, equal %v; want the bytes sent", err, bytes.Equal(got, data))
	}
	taken, err := s.Take(u.ID)
	if err != nil || taken != u {
		t.Fatalf("take: got %+v, %v; want %+v", taken, err, u)
	}
	// An uploadId is good once.
	if _, err := s.Take(u.ID); !errors.Is(err, store.ErrNoUpload) {
		t.Fatalf("second take: got %v, want ErrNoUpload", err)
	}
	// A taken upload keeps its file and its bytes until Remove.
	if _, err := os.Stat(u.Path); err != nil {
		t.Fatalf("taken upload's file: %v", err)
	}
	if _, err := receive(t, s, gz(t, 950)); !errors.Is(err, store.ErrUploadSpace) {
		t.Fatalf("over the pending cap while the taken upload holds its bytes: got %v, want ErrUploadSpace", err)
	}
	s.Remove(taken)
	if _, err := os.Stat(u.Path); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("after Remove: got %v, want the file gone", err)
	}
	if _, err := receive(t, s, gz(t, 950)); err != nil {
		t.Fatalf("after Remove released the bytes: got %v, want room", err)
	}
	if _, err := s.Take("0123456789abcdef"); !errors.Is(err, store.ErrNoUpload) || !strings.Contains(err.Error(), "0123456789abcdef") {
		t.Fatalf("unknown id: got %v, want ErrNoUpload naming the id", err)
	}
}

// TestUploadRefusals: every refused upload leaves no file behind and
// releases the bytes it had reserved.
func TestUploadRefusals(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		gone bool // the client went away before the first byte
		r    func(t *testing.T) io.Reader
		want error
	}{
		{"over the per-upload cap", false, func(t *testing.T) io.Reader { return bytes.NewReader(gz(t, 2000)) }, store.ErrUploadTooLarge},
		{"not gzip", false, func(*testing.T) io.Reader { return strings.NewReader("plain text, not gzip") }, store.ErrNotGzip},
		{"one byte", false, func(*testing.T) io.Reader { return bytes.NewReader([]byte{0x1f}) }, store.ErrNotGzip},
		{"empty", false, func(*testing.T) io.Reader { return strings.NewReader("") }, store.ErrEmptyUpload},
		{"client gone", true, func(t *testing.T) io.Reader { return bytes.NewReader(gz(t, 100)) }, context.Canceled},
		{"read error", false, func(t *testing.T) io.Reader {
			return io.MultiReader(bytes.NewReader(gz(t, 500)[:200]), iotest.ErrReader(io.ErrUnexpectedEOF))
		}, io.ErrUnexpectedEOF},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s, dir, _ := newUploads(t)
			ctx, cancel := context.WithCancel(t.Context())
			if tc.gone {
				cancel()
			}
			defer cancel()
			_, err := s.Receive(ctx, tc.r(t))
			if !errors.Is(err, tc.want) {
				t.Fatalf("got %v, want %v", err, tc.want)
			}
			if got := files(t, dir); len(got) != 0 {
				t.Fatalf("got files %v left behind, want none", got)
			}
			// Every reserved byte came back: the full pending budget
			// takes one more upload at the per-upload cap.
			if _, err := receive(t, s, gz(t, 950)); err != nil {
				t.Fatalf("after the refusal: got %v, want room for a full upload", err)
			}
		})
	}
}

func TestUploadPendingCap(t *testing.T) {
	t.Parallel()
	s, dir, _ := newUploads(t)
	first, err := receive(t, s, gz(t, 950))
	if err != nil {
		t.Fatal(err)
	}
	_, err = receive(t, s, gz(t, 950))
	if !errors.Is(err, store.ErrUploadSpace) {
		t.Fatalf("second upload: got %v, want ErrUploadSpace", err)
	}
	if got := files(t, dir); len(got) != 1 || got[0] != filepath.Base(first.Path) {
		t.Fatalf("got files %v, want only the first upload's", got)
	}
}

func TestUploadExpiry(t *testing.T) {
	t.Parallel()
	s, dir, c := newUploads(t)
	u, err := receive(t, s, gz(t, 900))
	if err != nil {
		t.Fatal(err)
	}
	c.Add(time.Minute - time.Second)
	if n := s.Sweep(); n != 0 {
		t.Fatalf("before the TTL: swept %d, want 0", n)
	}
	c.Add(time.Second)
	if n := s.Sweep(); n != 1 {
		t.Fatalf("at the TTL: swept %d, want 1", n)
	}
	if _, err := s.Take(u.ID); !errors.Is(err, store.ErrNoUpload) {
		t.Fatalf("take of an expired upload: got %v, want ErrNoUpload", err)
	}
	if got := files(t, dir); len(got) != 0 {
		t.Fatalf("got files %v after expiry, want none", got)
	}
	if _, err := receive(t, s, gz(t, 950)); err != nil {
		t.Fatalf("after expiry released the bytes: got %v, want room", err)
	}
}

// TestUploadRunSweepsThenCloses: Run sweeps on its ticker, and when its
// context ends it removes what is pending and returns.
func TestUploadRunSweepsThenCloses(t *testing.T) {
	t.Parallel()
	s, dir, c := newUploads(t)
	c.read = make(chan struct{})
	ctx, stop := context.WithCancel(t.Context())
	var wg sync.WaitGroup
	wg.Go(func() { s.Run(ctx, time.Millisecond) })
	defer wg.Wait()
	defer stop()

	if _, err := receive(t, s, gz(t, 100)); err != nil {
		t.Fatal(err)
	}
	c.Add(time.Minute)
	// The first sweep that reads the clock after the minute has passed
	// removes the upload; a second reading means that sweep is done.
	c.waitReads(t, 2)
	if got := files(t, dir); len(got) != 0 {
		t.Fatalf("got files %v after a sweep past their expiry, want none", got)
	}
	kept, err := receive(t, s, gz(t, 100))
	if err != nil {
		t.Fatal(err)
	}
	stop()
	wg.Wait()
	if got := files(t, dir); len(got) != 0 {
		t.Fatalf("got files %v after Run returned, want none (%s was pending)", got, filepath.Base(kept.Path))
	}
}

func TestUploadClose(t *testing.T) {
	t.Parallel()
	s, dir, _ := newUploads(t)
	pending, err := receive(t, s, gz(t, 100))
	if err != nil {
		t.Fatal(err)
	}
	taken, err := receive(t, s, gz(t, 100))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Take(taken.ID); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(pending.Path); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("pending upload after Close: got %v, want it removed", err)
	}
	// A taken upload is its taker's to remove.
	if got := files(t, dir); len(got) != 1 || got[0] != filepath.Base(taken.Path) {
		t.Fatalf("got files %v after Close, want only the taken upload's", got)
	}
	s.Remove(taken)
	if got := files(t, dir); len(got) != 0 {
		t.Fatalf("got files %v, want none", got)
	}
}

// TestUploadSharedDirectory: two replicas on one directory take each
// other's uploads, each once; an expired one goes in either's sweep; a
// replica that closes leaves the others' uploads alone.
func TestUploadSharedDirectory(t *testing.T) {
	dir := t.TempDir()
	now := time.Now()
	clock := func() time.Time { return now }
	replica := func() *store.Uploads {
		s, err := store.NewUploads(store.UploadConfig{Dir: dir, MaxUpload: 1 << 20, MaxPending: 3 << 19, TTL: time.Minute, Now: clock, Shared: true})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	a, b := replica(), replica()
	data := gz(t, 4096)
	u, err := receive(t, a, data)
	if err != nil {
		t.Fatal(err)
	}
	got, err := b.Take(u.ID)
	if err != nil || got.SHA256 != u.SHA256 || got.Size != u.Size {
		t.Fatalf("the other replica's take: %+v %v, want %+v", got, err, u)
	}
	if _, err := a.Take(u.ID); !errors.Is(err, store.ErrNoUpload) {
		t.Errorf("a second take: %v, want ErrNoUpload", err)
	}
	b.Remove(got)
	if names := files(t, dir); len(names) != 0 {
		t.Errorf("after the take and remove: %v", names)
	}
	// The pending cap counts every replica's uploads in the directory.
	if _, err := receive(t, a, gz(t, 800<<10)); err != nil {
		t.Fatal(err)
	}
	if _, err := receive(t, b, gz(t, 800<<10)); !errors.Is(err, store.ErrUploadSpace) {
		t.Errorf("over the shared pending cap: %v, want ErrUploadSpace", err)
	}
	// Expired: either replica's sweep removes it; closing removes nothing.
	old, _ := receive(t, a, data)
	a.Close()
	if _, err := os.Stat(old.Path); err != nil {
		t.Errorf("a replica's close removed an upload the others may take: %v", err)
	}
	now = now.Add(2 * time.Minute)
	if n := b.Sweep(); n < 1 {
		t.Errorf("the sweep removed %d uploads, want the expired ones", n)
	}
	if _, err := b.Take(old.ID); !errors.Is(err, store.ErrNoUpload) {
		t.Errorf("an expired upload: %v", err)
	}
	if _, err := a.Take("../../etc"); !errors.Is(err, store.ErrNoUpload) {
		t.Errorf("an id that is a path: %v", err)
	}
}
