package runs

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
	_ "modernc.org/sqlite" // the database/sql driver "sqlite"
)

// Open opens (creating it) the store in dir, keeping at most keep
// finished runs (0: DefaultKeep). Runs a previous process left running
// are marked interrupted. A database this process cannot write is refused
// here, not at the first run.
func Open(dir string, keep int) (*Store, error) {
	if keep <= 0 {
		keep = DefaultKeep
	}
	if err := checkDir(dir); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Join(dir, "files"), 0o700); err != nil {
		return nil, fmt.Errorf("run store: %w", err)
	}
	lock, err := os.OpenFile(filepath.Join(dir, "lock"), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, fmt.Errorf("run store: %w", err)
	}
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		lock.Close()
		return nil, fmt.Errorf("run store %s is in use by another toolserver process (one process per --state-dir): %w (%w)", dir, ErrHeld, err)
	}
	// The open-file-description lock says to readers in other processes
	// (and this one) that a holder is alive (Held).
	if err := holdLock(lock); err != nil {
		lock.Close()
		return nil, fmt.Errorf("run store %s: %w", dir, err)
	}
	path := filepath.Join(dir, "runs.db")
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)&_pragma=busy_timeout(10000)&_pragma=foreign_keys(ON)")
	if err != nil {
		lock.Close()
		return nil, fmt.Errorf("run store: %w", err)
	}
	// One writer connection: SQLite has one writer, and a single
	// connection keeps every write in order without SQLITE_BUSY.
	db.SetMaxOpenConns(1)
	d := &sqliteDB{dir: dir, lock: lock}
	s := newStore(db, d, keep)
	if err := s.probeWrite(); err != nil {
		s.Close()
		return nil, fmt.Errorf("run store %s: cannot write it: %w", path, err)
	}
	if err := s.migrate(d); err != nil {
		s.Close()
		return nil, fmt.Errorf("run store %s: %w", path, err)
	}
	if err := s.leftovers(); err != nil {
		s.Close()
		return nil, fmt.Errorf("run store %s: the runs a previous process left running: %w", dir, err)
	}
	if _, err := s.db.Exec(`INSERT INTO meta (key, value) VALUES ('holder', ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value`, s.token); err != nil {
		s.Close()
		return nil, fmt.Errorf("run store %s: %w", path, err)
	}
	// Opened after the schema exists and the database is in WAL mode,
	// which its connections then share.
	rdb, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(10000)&_pragma=query_only(1)")
	if err != nil {
		s.Close()
		return nil, fmt.Errorf("run store: %w", err)
	}
	rdb.SetMaxOpenConns(readConns)
	s.rdb = rdb
	return s, nil
}

// checkDir names a state directory, or the first of its parents that
// exists, that is a symbolic link to nothing: MkdirAll would only say
// "file exists" of it.
func checkDir(dir string) error {
	for p := filepath.Clean(dir); ; p = filepath.Dir(p) {
		fi, err := os.Lstat(p)
		if err == nil {
			if fi.Mode()&os.ModeSymlink == 0 {
				return nil
			}
			if _, err := os.Stat(p); errors.Is(err, os.ErrNotExist) {
				target, _ := os.Readlink(p)
				return fmt.Errorf("run store %s: %s is a symbolic link to %s, which does not exist", dir, p, target)
			}
			return nil
		}
		if p == filepath.Dir(p) {
			return nil
		}
	}
}

// probeWrite writes to the database and takes it back, so that a
// database this process may read but not write (a read-only file, a
// read-only mount) is found at start: SQLite opens such a file read-only
// without a word, and the schema's CREATE IF NOT EXISTS writes nothing.
func (s *Store) probeWrite() error {
	tx, err := s.db.Begin()
	if err != nil {
		return err
	}
	defer tx.Rollback()
	var v int64
	if err := tx.QueryRow(`PRAGMA user_version`).Scan(&v); err != nil {
		return err
	}
	_, err = tx.Exec(fmt.Sprintf(`PRAGMA user_version = %d`, v))
	return err
}

// leftovers are the runs a previous process left running (it was
// killed, or crashed): a run whose arguments were recorded stays running
// with no driver, for a resume to re-drive (POST /v1/runs/{id}/resume,
// serve --resume-interrupted); any other (a /tools call's, whose client
// held its results) cannot be re-driven and ends failed.
func (s *Store) leftovers() error {
	if _, err := s.db.Exec(`UPDATE runs SET owner = NULL WHERE status = ? AND args IS NOT NULL`, Running); err != nil {
		return err
	}
	rows, err := s.db.Query(`SELECT id, event_count FROM runs WHERE status = ? AND args IS NULL`, Running)
	if err != nil {
		return err
	}
	type left struct {
		id  string
		seq int64
	}
	var all []left
	for rows.Next() {
		var l left
		if err := rows.Scan(&l.id, &l.seq); err != nil {
			rows.Close()
			return err
		}
		all = append(all, l)
	}
	rows.Close()
	for _, l := range all {
		st := Status{State: Failed, Error: "the tool-server process ended while the run was going on (killed or crashed); a run of a /tools call cannot be re-driven (its client held its results), so it failed; its events up to then are kept"}
		if _, err := s.finish(context.Background(), l.id, st, ""); err != nil {
			return fmt.Errorf("run %s: %w", l.id, err)
		}
	}
	return nil
}

// ErrNoStore is the error of OpenReader for a directory that holds no run
// store.
var ErrNoStore = errors.New("no run store")

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

// sqliteDB is the embedded store of one process (Open): its lease on a
// run is the process's own hold of the directory (the lock file), its
// images are files beside the database.
type sqliteDB struct {
	dir string
	// reader is set for a store OpenReader opened beside the holder.
	reader bool
	// lock is the holder's lock file (Open), held until the store
	// closes; nil for a reader.
	lock *os.File
}

func (d *sqliteDB) rebind(q string) string { return q }

// labelMatch uses json_each rather than a JSON path: a key is a bound
// value, never part of a path that its characters could break.
func (d *sqliteDB) labelMatch() string {
	return "EXISTS (SELECT 1 FROM json_each(runs.labels) WHERE key = ? AND value = ?)"
}

// leaseUntil never lapses: the holder's lease is its lock on the
// directory, which ends with the process.
func (d *sqliteDB) leaseUntil(int64) int64 { return math.MaxInt64 }

// shared: one process writes the directory; a run it left running waits
// for a resume.
func (d *sqliteDB) shared() bool { return false }

// attached: the holder's runs, while a holder is alive (for a reader,
// the process that holds the directory now).
func (d *sqliteDB) attached(ctx context.Context, rdb *sql.DB, token string) func(string, int64) bool {
	holder := token
	if d.reader {
		holder = ""
		if Held(d.dir) {
			if err := rdb.QueryRowContext(ctx, `SELECT value FROM meta WHERE key = 'holder'`).Scan(&holder); err != nil {
				holder = ""
			}
		}
	}
	return func(owner string, _ int64) bool { return holder != "" && owner == holder }
}

// filesDir is where a run's images are kept.
func (d *sqliteDB) filesDir(id string) string { return filepath.Join(d.dir, "files", id) }

func (d *sqliteDB) putFile(_ context.Context, _ execFunc, id, name string, src io.Reader, max int64) error {
	dir := d.filesDir(id)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	out, err := os.OpenFile(filepath.Join(dir, name), os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	_, err = io.Copy(out, io.LimitReader(src, max))
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(filepath.Join(dir, name))
	}
	return err
}

// osFile is a kept image on disk.
type osFile struct {
	*os.File
	mod time.Time
}

func (f osFile) ModTime() time.Time { return f.mod }

func (d *sqliteDB) openFile(_ context.Context, _ *sql.DB, id, name string) (File, error) {
	f, err := os.Open(filepath.Join(d.filesDir(id), name))
	if errors.Is(err, os.ErrNotExist) {
		return nil, noFile(id, name)
	}
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	return osFile{f, fi.ModTime()}, nil
}

func (d *sqliteDB) removeFiles(_ context.Context, id string) error {
	return os.RemoveAll(d.filesDir(id))
}

func (d *sqliteDB) notify() string { return "" }

// retryable: SQLite waits for its lock itself (busy_timeout), and a
// local file does not go away and come back.
func (d *sqliteDB) retryable(error) bool { return false }

func (d *sqliteDB) describe() string {
	return fmt.Sprintf("the run store %s", filepath.Join(d.dir, "runs.db"))
}

func (d *sqliteDB) close() error { return nil }

// release lets go of the directory (its lock file) once the pools are
// closed, so the next holder finds the database at rest.
func (d *sqliteDB) release() {
	if d.lock != nil {
		d.lock.Close()
	}
}
