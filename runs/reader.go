package runs

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"golang.org/x/sys/unix"
)

// ErrNoStore is the error of OpenReader for a directory that holds no run
// store.
var ErrNoStore = errors.New("no run store")

// readerPoll is how often a reader of a store another process writes
// looks for a run's new events: it has no in-process wake-up.
const readerPoll = 200 * time.Millisecond

// OpenReader opens the store in dir to read it only, beside the process
// that may hold it (docs/control-plane.md, "The command line"): it takes
// no lock, creates and migrates nothing, and every write through it
// fails. SQLite in WAL mode lets it read while the holder writes.
func OpenReader(dir string) (*Store, error) {
	path := filepath.Join(dir, "runs.db")
	if _, err := os.Stat(path); err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("%w in %s (serve --state-dir %s keeps one there)", ErrNoStore, dir, dir)
		}
		return nil, fmt.Errorf("run store %s: %w", path, err)
	}
	rdb, err := sql.Open("sqlite", "file:"+path+"?mode=ro&_pragma=busy_timeout(10000)&_pragma=query_only(1)")
	if err != nil {
		return nil, fmt.Errorf("run store %s: %w", path, err)
	}
	rdb.SetMaxOpenConns(readConns)
	if err := rdb.Ping(); err != nil {
		rdb.Close()
		return nil, fmt.Errorf("run store %s: %w", path, err)
	}
	// db is the same read-only pool: a write through a reader is an
	// error of SQLite's, never a write.
	st := newStore(rdb, &sqliteDB{dir: dir, reader: true}, 0)
	st.token = ""
	return st, nil
}

// FollowEvents hands each of a run's events from seq from on to each, in
// order, until the run has ended or no driver runs it, and returns its
// end frame. Written by this process, the run's events arrive as they
// are recorded; written by another (a reader), they are looked for every
// readerPoll.
func (s *Store) FollowEvents(ctx context.Context, id string, from int64, each func(Event) error) (EndFrame, error) {
	for {
		changed := s.Changed()
		run, err := s.Run(ctx, id)
		if err != nil {
			return EndFrame{}, err
		}
		evs, err := s.Events(ctx, id, from)
		if err != nil {
			return EndFrame{}, err
		}
		for _, e := range evs {
			if err := each(e); err != nil {
				return EndFrame{}, err
			}
			from = e.Seq + 1
		}
		if Terminal(run.Status.State) || (s.Stalled(run) && from >= run.EventCount) {
			return run.End(), nil
		}
		t := time.NewTimer(readerPoll)
		select {
		case <-ctx.Done():
			t.Stop()
			return EndFrame{}, ctx.Err()
		case <-changed:
		case <-t.C:
		}
		t.Stop()
	}
}

// holdLock takes an open-file-description write lock on the store's lock
// file, beside its flock: a reader tests it (Held) without taking
// anything, so a reader never keeps a serve from starting.
func holdLock(f *os.File) error {
	lk := unix.Flock_t{Type: unix.F_WRLCK}
	if err := unix.FcntlFlock(f.Fd(), unix.F_OFD_SETLK, &lk); err != nil {
		return fmt.Errorf("locking %s: %w", f.Name(), err)
	}
	return nil
}

// Held reports whether a process holds the store in dir now, taking
// nothing.
func Held(dir string) bool {
	f, err := os.Open(filepath.Join(dir, "lock"))
	if err != nil {
		return false
	}
	defer f.Close()
	lk := unix.Flock_t{Type: unix.F_WRLCK}
	if err := unix.FcntlFlock(f.Fd(), unix.F_OFD_GETLK, &lk); err != nil {
		return false
	}
	return lk.Type != unix.F_UNLCK
}

// Stalled reports whether a running run waits for a resume by hand: no
// driver runs it, and nothing will by itself. A fleet's store (Shared)
// has none: another replica takes over a run whose driver was lost, or
// fails it, so its followers wait for that.
func (s *Store) Stalled(r Run) bool {
	return !Terminal(r.Status.State) && r.Driver == DriverNone && !s.Shared()
}
