package store

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"
)

// A shared upload directory (UploadConfig.Shared) holds each upload as
// <id>.upload, written under a temporary name and renamed into place, so
// a replica sees an upload whole or not at all. Taking one renames it to
// <id>.taken-<random>: of several replicas that try, one rename wins and
// the others find nothing. Sweeping removes <id>.upload files older than
// the TTL by their mtime, and leftovers of a process that died (temporary
// and taken files) after an hour; several replicas sweeping at once only
// remove the same files twice.

// sharedSuffix ends a takeable upload's name.
const sharedSuffix = ".upload"

// leftoverAge is when a temporary or taken file nobody finished with is
// a leftover of a process that died.
const leftoverAge = time.Hour

var uploadIDRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[0-9a-f]{32}$`) })

func (s *Uploads) sharedPath(id string) string { return filepath.Join(s.dir, id+sharedSuffix) }

// takeShared claims the upload id in the shared directory.
func (s *Uploads) takeShared(id string) (Upload, error) {
	if !uploadIDRE().MatchString(id) {
		return Upload{}, fmt.Errorf("%w %q (an uploadId is good for one call and expires unused)", ErrNoUpload, id)
	}
	var rb [8]byte
	rand.Read(rb[:])
	taken := filepath.Join(s.dir, id+".taken-"+hex.EncodeToString(rb[:]))
	if err := os.Rename(s.sharedPath(id), taken); err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return Upload{}, fmt.Errorf("%w %q (an uploadId is good for one call and expires unused)", ErrNoUpload, id)
		}
		return Upload{}, err
	}
	s.mu.Lock()
	delete(s.uploads, id)
	s.mu.Unlock()
	f, err := os.Open(taken)
	if err != nil {
		os.Remove(taken)
		return Upload{}, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err == nil && !s.now().Before(st.ModTime().Add(s.ttl)) {
		os.Remove(taken)
		return Upload{}, fmt.Errorf("%w %q: it expired unused (an uploadId is good for one call and expires unused)", ErrNoUpload, id)
	}
	h := sha256.New()
	n, err := io.Copy(h, f)
	if err != nil {
		os.Remove(taken)
		return Upload{}, err
	}
	return Upload{ID: id, Path: taken, Size: n, SHA256: hex.EncodeToString(h.Sum(nil))}, nil
}

// sharedBytes is the size of the uploads waiting in the shared
// directory.
func (s *Uploads) sharedBytes() int64 {
	ents, err := os.ReadDir(s.dir)
	if err != nil {
		return 0
	}
	var n int64
	for _, e := range ents {
		if !strings.HasSuffix(e.Name(), sharedSuffix) {
			continue
		}
		if fi, err := e.Info(); err == nil {
			n += fi.Size()
		}
	}
	return n
}

// sweepShared removes the expired uploads of the shared directory and
// the leftovers of processes that died; it returns how many uploads
// expired.
func (s *Uploads) sweepShared(now time.Time) int {
	ents, err := os.ReadDir(s.dir)
	if err != nil {
		return 0
	}
	n := 0
	for _, e := range ents {
		fi, err := e.Info()
		if err != nil || !fi.Mode().IsRegular() {
			continue
		}
		name, age := e.Name(), now.Sub(fi.ModTime())
		switch {
		case strings.HasSuffix(name, sharedSuffix) && age >= s.ttl:
			if os.Remove(filepath.Join(s.dir, name)) == nil {
				n++
			}
		case (strings.Contains(name, ".taken-") || strings.HasPrefix(name, "upload-")) && age >= leftoverAge:
			os.Remove(filepath.Join(s.dir, name))
		}
	}
	return n
}
