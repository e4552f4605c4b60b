package runs

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"time"
)

// sqliteDB is the embedded store of one process (Open): its lease on a
// run is the process's own hold of the directory (the lock file), its
// images are files beside the database.
type sqliteDB struct {
	dir string
	// reader is set for a store OpenReader opened beside the holder.
	reader bool
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

// attached: the holder's runs, while a holder is alive (for a reader,
// the process that holds the directory now).
func (d *sqliteDB) attached(ctx context.Context, s *Store) func(string, int64) bool {
	holder := s.token
	if d.reader {
		holder = ""
		if Held(d.dir) {
			if err := s.row(ctx, `SELECT value FROM meta WHERE key = 'holder'`).Scan(&holder); err != nil {
				holder = ""
			}
		}
	}
	return func(owner string, _ int64) bool { return holder != "" && owner == holder }
}

// filesDir is where a run's images are kept.
func (d *sqliteDB) filesDir(id string) string { return filepath.Join(d.dir, "files", id) }

func (d *sqliteDB) putFile(_ context.Context, _ *Store, id, name string, src io.Reader, max int64) error {
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

func (d *sqliteDB) openFile(_ context.Context, _ *Store, id, name string) (File, error) {
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

func (d *sqliteDB) removeFiles(_ context.Context, _ *Store, id string) error {
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
