package store

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"sync"
	"time"
)

// ErrNoArtifact is returned for an unknown or evicted artifact id.
var ErrNoArtifact = errors.New("artifact not found")

// Artifact is the artifact handle a result carries; the Argent client fetches
// GET /artifacts/{id} for it, or uses HostPath when it is on the same machine.
type Artifact struct {
	Artifact bool    `json:"__argentArtifact"`
	ID       string  `json:"id"`
	Filename string  `json:"filename"`
	MimeType string  `json:"mimeType"`
	Size     int64   `json:"size"`
	HostPath string  `json:"hostPath,omitempty"`
	MtimeMs  float64 `json:"mtimeMs"`
}

type entry struct {
	h       Artifact
	path    string
	created time.Time
}

// Artifacts keeps artifacts on disk.
type Artifacts struct {
	dir      string
	maxCount int
	maxBytes int64

	mu    sync.Mutex
	items map[string]*entry
	bytes int64
}

// NewArtifacts returns a store in dir (created if needed) keeping at most maxCount
// artifacts and maxBytes bytes; the oldest go first.
func NewArtifacts(dir string, maxCount int, maxBytes int64) (*Artifacts, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("artifact store: %w", err)
	}
	return &Artifacts{dir: dir, maxCount: maxCount, maxBytes: maxBytes, items: map[string]*entry{}}, nil
}

var safeName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`[^A-Za-z0-9._-]+`) })

// Put stores data as a new artifact named filename.
func (s *Artifacts) Put(filename, mimeType string, data []byte) (Artifact, error) {
	var idb [12]byte
	if _, err := rand.Read(idb[:]); err != nil {
		return Artifact{}, err
	}
	id := hex.EncodeToString(idb[:])
	name := safeName().ReplaceAllString(filepath.Base(filename), "_")
	dir := filepath.Join(s.dir, id)
	if err := os.Mkdir(dir, 0o700); err != nil {
		return Artifact{}, fmt.Errorf("artifact %s: %w", name, err)
	}
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, data, 0o600); err != nil {
		os.RemoveAll(dir)
		return Artifact{}, fmt.Errorf("artifact %s: %w", name, err)
	}
	st, err := os.Stat(path)
	if err != nil {
		os.RemoveAll(dir)
		return Artifact{}, fmt.Errorf("artifact %s: %w", name, err)
	}
	h := Artifact{Artifact: true, ID: id, Filename: name, MimeType: mimeType, Size: st.Size(), HostPath: path,
		MtimeMs: float64(st.ModTime().UnixNano()) / 1e6}
	s.mu.Lock()
	s.items[id] = &entry{h: h, path: path, created: time.Now()}
	s.bytes += h.Size
	victims := s.evictLocked()
	s.mu.Unlock()
	for _, v := range victims {
		os.RemoveAll(filepath.Dir(v))
	}
	return h, nil
}

func (s *Artifacts) evictLocked() []string {
	if len(s.items) <= s.maxCount && s.bytes <= s.maxBytes {
		return nil
	}
	all := make([]*entry, 0, len(s.items))
	for _, e := range s.items {
		all = append(all, e)
	}
	sort.Slice(all, func(i, j int) bool { return all[i].created.Before(all[j].created) })
	var out []string
	for _, e := range all {
		if len(s.items) <= s.maxCount && s.bytes <= s.maxBytes {
			break
		}
		delete(s.items, e.h.ID)
		s.bytes -= e.h.Size
		out = append(out, e.path)
	}
	return out
}

// Get returns the handle and the file path of an artifact.
func (s *Artifacts) Get(id string) (Artifact, string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e, ok := s.items[id]
	if !ok {
		return Artifact{}, "", fmt.Errorf("%w: %q", ErrNoArtifact, id)
	}
	return e.h, e.path, nil
}

// Close removes every artifact.
func (s *Artifacts) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.items = map[string]*entry{}
	return os.RemoveAll(s.dir)
}
