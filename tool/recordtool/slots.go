package recordtool

// The recordings in progress: one slot per flow file, its lock, and the
// least-recently-used bound on how many a server keeps.

import (
	"context"
	"fmt"
	"slices"
	"sync"
)

// MaxRecordings bounds the recordings a server keeps at once (Argent's LRU
// cap); starting one more evicts the least recently used.
const MaxRecordings = 32

// Recordings holds the recordings in progress, one per flow file, keyed by
// the real path of <project_root>/.argent/flows/<name>.yaml so that two
// spellings of one project share one recording (Argent's session map).
type Recordings struct {
	mu    sync.Mutex
	slots map[string]*slot
	clock uint64 // ticks on every use, for the LRU order
}

// NewRecordings returns a Recordings with no recordings in progress.
func NewRecordings() *Recordings { return &Recordings{slots: map[string]*slot{}} }

// slot is the place of one flow file in the recorder. Its lock serializes
// start, the appends and finish of that file; a call does its work only
// while it holds the lock of the slot that is still current for its key,
// so a restart, a finish or an eviction that came first is always seen.
type slot struct {
	key  string
	lock chan struct{} // a one-token mutex that a waiting call can give up on
	// rc is the recording; nil before the first start succeeds and after
	// finish. Guarded by lock.
	rc *recording
	// used is the LRU stamp; info what the "Active recordings" list of
	// FLOW_NO_ACTIVE_RECORDING shows; gen counts the takes started (0
	// while the first start is under way); ended says why the slot left
	// the recorder. All guarded by Recordings.mu.
	used  uint64
	info  recInfo
	gen   uint64
	ended string
}

// recInfo is what the recorder's bookkeeping needs without the slot lock.
type recInfo struct {
	name, rootKey string
}

// acquire takes the slot's lock, or gives up when ctx ends.
func (s *slot) acquire(ctx context.Context) error {
	select {
	case s.lock <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (s *slot) release() { <-s.lock }

// current reports whether s is still the slot of its key (not finished
// away or evicted), and stamps it as used.
func (r *Recordings) current(s *slot) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.slots[s.key] != s {
		return false
	}
	r.clock++
	s.used = r.clock
	return true
}

// still tells why the take gen of s is over — finished, evicted, or
// restarted by another flow-start-recording while the caller waited for
// the lock — or "" when it is still the current take, which it then
// stamps as used.
func (r *Recordings) still(s *slot, gen uint64) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	switch {
	case s.ended != "":
		return s.ended
	case s.gen != gen:
		return "another flow-start-recording restarted it"
	}
	r.clock++
	s.used = r.clock
	return ""
}

// slotFor returns the slot of key and its take, creating the slot when
// create is set.
func (r *Recordings) slotFor(key string, create bool) (*slot, uint64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := r.slots[key]
	if s == nil && create {
		s = &slot{key: key, lock: make(chan struct{}, 1)}
		r.slots[key] = s
	}
	if s == nil {
		return nil, 0
	}
	return s, s.gen
}

// publish records rc's identity for the bookkeeping and evicts the least
// recently used recordings beyond MaxRecordings.
func (r *Recordings) publish(s *slot, rc *recording, rootKey string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	s.info = recInfo{name: rc.name, rootKey: rootKey}
	s.gen++
	r.clock++
	s.used = r.clock
	for len(r.slots) > MaxRecordings {
		var lru *slot
		for _, o := range r.slots {
			// A slot without a name is a start still under way: it is
			// about to be the most recent, not the least.
			if o != s && o.info.name != "" && (lru == nil || o.used < lru.used) {
				lru = o
			}
		}
		if lru == nil {
			return
		}
		lru.ended = fmt.Sprintf("it was evicted: more than %d recordings were in progress and it was the least recently used", MaxRecordings)
		delete(r.slots, lru.key)
	}
}

// drop removes s from the recorder if it is still current; why is what a
// call that waited on its lock is told.
func (r *Recordings) drop(s *slot, why string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.slots[s.key] == s {
		s.ended = why
		delete(r.slots, s.key)
	}
}

// active returns the names recorded in the project rootKey, sorted, and
// how many recordings are in other projects.
func (r *Recordings) active(rootKey string) (names []string, others int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, s := range r.slots {
		switch {
		case s.info.name == "":
			// a start in progress
		case s.info.rootKey == rootKey:
			names = append(names, s.info.name)
		default:
			others++
		}
	}
	slices.Sort(names)
	return names, others
}

// claim takes the lock of the slot of key, creating the slot. A slot that
// was finished or evicted while the caller waited is left for the new one.
func (r *Recordings) claim(ctx context.Context, key string) (*slot, error) {
	for {
		s, _ := r.slotFor(key, true)
		if err := s.acquire(ctx); err != nil {
			return nil, err
		}
		if r.current(s) {
			return s, nil
		}
		s.release()
	}
}
