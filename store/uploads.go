package store

import (
	"bufio"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"time"
)

// Errors callers branch on; the server maps them to 413, 507, 400 and 404.
var (
	ErrUploadTooLarge = errors.New("upload too large")
	ErrUploadSpace    = errors.New("too many pending upload bytes")
	ErrNotGzip        = errors.New("upload is not a gzip stream")
	ErrNoUpload       = errors.New("unknown upload")
	ErrEmptyUpload    = errors.New("empty upload")
)

// Upload is one received archive.
type Upload struct {
	ID     string
	Path   string
	Size   int64
	SHA256 string
}

type pending struct {
	u       Upload
	expires time.Time
}

// Uploads holds uploads until they are taken or expire.
type Uploads struct {
	dir        string
	maxUpload  int64
	maxPending int64
	ttl        time.Duration
	now        func() time.Time

	shared bool

	mu       sync.Mutex
	uploads  map[string]*pending
	reserved int64
}

// MaxUploadBytes is the tool-server's cap on one POST /upload archive.
const MaxUploadBytes = 64 << 20

// UploadConfig sets the limits of an Uploads store.
type UploadConfig struct {
	Dir        string        // where archives are kept
	MaxUpload  int64         // cap on one upload
	MaxPending int64         // cap on the bytes of all pending uploads
	TTL        time.Duration // an unused upload is removed after this
	Now        func() time.Time
	// Shared makes Dir a directory several tool-servers share (replicas
	// behind a load balancer on one volume): an upload is a file there
	// that any of them can take, once, so the upload and the call that
	// uses it may reach different replicas. Without it the uploads are
	// this process's own.
	Shared bool
}

// NewUploads returns a store; Dir is created if needed.
func NewUploads(cfg UploadConfig) (*Uploads, error) {
	if err := os.MkdirAll(cfg.Dir, 0o700); err != nil {
		return nil, fmt.Errorf("upload store: %w", err)
	}
	now := cfg.Now
	if now == nil {
		now = time.Now
	}
	return &Uploads{dir: cfg.Dir, maxUpload: cfg.MaxUpload, maxPending: cfg.MaxPending, ttl: cfg.TTL, now: now, uploads: map[string]*pending{}, shared: cfg.Shared}, nil
}

// MaxUpload returns the per-upload cap in bytes.
func (s *Uploads) MaxUpload() int64 { return s.maxUpload }

// reserve claims n more pending bytes, or fails with ErrUploadSpace;
// others are the bytes waiting in a shared directory (0 when it is not),
// which count too.
func (s *Uploads) reserve(n, others int64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.reserved+n+others > s.maxPending {
		return fmt.Errorf("%w: %d bytes are pending, the limit is %d", ErrUploadSpace, s.reserved, s.maxPending)
	}
	s.reserved += n
	return nil
}

func (s *Uploads) release(n int64) {
	s.mu.Lock()
	s.reserved -= n
	s.mu.Unlock()
}

// capWriter reserves pending bytes as they are written and enforces the
// per-upload cap.
type capWriter struct {
	s    *Uploads
	n    int64
	head []byte
	// others are the bytes of the shared directory when the upload
	// began, read once, not at every write.
	others int64
}

func (w *capWriter) Write(p []byte) (int, error) {
	if w.n+int64(len(p)) > w.s.maxUpload {
		return 0, fmt.Errorf("%w: over %d bytes", ErrUploadTooLarge, w.s.maxUpload)
	}
	if err := w.s.reserve(int64(len(p)), w.others); err != nil {
		return 0, err
	}
	if len(w.head) < 2 {
		w.head = append(w.head, p[:min(len(p), 2-len(w.head))]...)
		if len(w.head) == 2 && (w.head[0] != 0x1f || w.head[1] != 0x8b) {
			w.n += int64(len(p))
			return 0, ErrNotGzip
		}
	}
	w.n += int64(len(p))
	return len(p), nil
}

// Receive streams r to disk and returns the upload. On any error the
// partial file is removed and its bytes released.
func (s *Uploads) Receive(ctx context.Context, r io.Reader) (Upload, error) {
	var idb [16]byte
	if _, err := rand.Read(idb[:]); err != nil {
		return Upload{}, err
	}
	id := hex.EncodeToString(idb[:])
	f, err := os.CreateTemp(s.dir, "upload-*.tar.gz")
	if err != nil {
		return Upload{}, fmt.Errorf("upload: %w", err)
	}
	cw := &capWriter{s: s}
	if s.shared {
		cw.others = s.sharedBytes()
	}
	h := sha256.New()
	bw := bufio.NewWriterSize(f, 256<<10)
	// A client that goes away mid-upload ends the copy at its next read.
	read := readerFunc(func(p []byte) (int, error) {
		if err := ctx.Err(); err != nil {
			return 0, err
		}
		return r.Read(p)
	})
	_, err = io.Copy(io.MultiWriter(cw, h, bw), read)
	if err == nil {
		err = bw.Flush()
	}
	if err == nil && cw.n == 0 {
		err = ErrEmptyUpload
	}
	if err == nil && len(cw.head) < 2 {
		err = ErrNotGzip
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(f.Name())
		s.release(cw.n)
		return Upload{}, err
	}
	u := Upload{ID: id, Path: f.Name(), Size: cw.n, SHA256: hex.EncodeToString(h.Sum(nil))}
	if s.shared {
		// One rename makes it takeable by every replica: its name is its
		// id, its mtime its age.
		final := s.sharedPath(id)
		if err := os.Rename(f.Name(), final); err != nil {
			os.Remove(f.Name())
			s.release(cw.n)
			return Upload{}, fmt.Errorf("upload: %w", err)
		}
		s.release(cw.n) // counted from the directory now
		u.Path = final
	}
	s.mu.Lock()
	s.uploads[id] = &pending{u: u, expires: s.now().Add(s.ttl)}
	s.mu.Unlock()
	return u, nil
}

// readerFunc is a Read method as a function.
type readerFunc func(p []byte) (int, error)

func (f readerFunc) Read(p []byte) (int, error) { return f(p) }

// Take hands the upload id out once: it leaves the store, and the caller
// must call Remove when done with the file.
func (s *Uploads) Take(id string) (Upload, error) {
	if s.shared {
		return s.takeShared(id)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	p, ok := s.uploads[id]
	if !ok {
		return Upload{}, fmt.Errorf("%w %q (an uploadId is good for one call and expires unused)", ErrNoUpload, id)
	}
	delete(s.uploads, id)
	return p.u, nil
}

// Remove deletes a taken upload's file and releases its bytes.
func (s *Uploads) Remove(u Upload) {
	os.Remove(u.Path)
	if !s.shared {
		s.release(u.Size)
	}
}

// Sweep removes the uploads that expired by now and returns how many.
func (s *Uploads) Sweep() int {
	now := s.now()
	s.mu.Lock()
	var gone []Upload
	for id, p := range s.uploads {
		if !now.Before(p.expires) {
			delete(s.uploads, id)
			gone = append(gone, p.u)
		}
	}
	s.mu.Unlock()
	for _, u := range gone {
		s.Remove(u)
	}
	if s.shared {
		return len(gone) + s.sweepShared(now)
	}
	return len(gone)
}

// Run sweeps every interval until ctx ends, then removes every pending
// upload (Close). The caller runs it on a goroutine of its own and waits
// for it to return before it removes the store's directory.
func (s *Uploads) Run(ctx context.Context, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			s.Close()
			return
		case <-t.C:
			s.Sweep()
		}
	}
}

// Close removes every pending upload and releases its bytes (in a shared
// directory it leaves them to the other replicas). Uploads already taken
// stay their taker's to Remove.
func (s *Uploads) Close() error {
	if s.shared {
		// Another replica may still take them; the replicas' sweeps
		// remove them when they expire.
		return nil
	}
	s.mu.Lock()
	all := s.uploads
	s.uploads = map[string]*pending{}
	s.mu.Unlock()
	for _, p := range all {
		s.Remove(p.u)
	}
	return nil
}
