// Package runs owns the run store: every flow run a tool-server executes,
// with an append-only log of events per run, in an embedded SQLite
// database (modernc.org/sqlite: pure Go, so the binary stays
// CGO_ENABLED=0) in WAL mode, and the images of its snapshots beside it.
// A run's events are written before the run moves on, so a process killed
// mid-run loses none of them; the next process over the same directory
// lists that run as interrupted.
package runs

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"time"
	"unicode"
	"unicode/utf8"

	_ "modernc.org/sqlite" // the database/sql driver "sqlite"

	"github.com/toolserver/toolserver/fault"
)

// The statuses of a run.
const (
	Running     = "running"
	Passed      = "passed"
	Failed      = "failed"
	Errored     = "errored"
	Cancelled   = "cancelled"
	Interrupted = "interrupted"
)

// Terminal reports whether status is a run's final status.
func Terminal(status string) bool { return status != Running }

// Statuses are every status a run can have, for filters.
var Statuses = []string{Running, Passed, Failed, Errored, Cancelled, Interrupted}

// The bounds of a run's labels (docs/control-plane.md, "Labels").
const (
	MaxLabels     = 16
	MaxLabelKey   = 64
	MaxLabelValue = 256
)

// DefaultKeep is how many finished runs a store keeps by default.
const DefaultKeep = 500

// The errors of the store, for the API's codes.
var (
	ErrUnknownRun = errors.New("unknown run")
	ErrRunExists  = errors.New("run exists")
	ErrWrongState = errors.New("wrong state")
	// ErrBadCursor is a before cursor that is not a UUID or names no
	// run: a request to fix, not a run that is missing.
	ErrBadCursor = errors.New("bad cursor")
	// ErrCancelled is the cause of a run's context when it was cancelled.
	ErrCancelled = errors.New("the run was cancelled")
	// ErrStopping is the cause when the server stopped under the run.
	ErrStopping = errors.New("the tool-server stopped")
)

// Store is the run store of one state directory. One process at a time
// opens a directory (a lock file says which).
type Store struct {
	// db is the one writer connection; rdb the pool every read goes
	// through, so that a follower's read never queues ahead of a run's
	// next write (WAL: readers and the writer do not block each other).
	db, rdb *sql.DB
	dir     string
	keep    int
	lock    *os.File
	// closed is closed by Close: the run list's feed stops.
	closed    chan struct{}
	closeOnce sync.Once
	feed      feed

	mu sync.Mutex
	// live are the runs this process is running, by id.
	live map[string]*Recorder
	// changed is closed and replaced whenever any run changes (an event,
	// a status), waking the streams that wait on it.
	changed chan struct{}
}

// readConns is the size of the read pool: enough for the streams that
// catch up at once, few enough for two cores.
const readConns = 4

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
		return nil, fmt.Errorf("run store %s is in use by another toolserver process (one process per --state-dir): %w", dir, err)
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
	s := &Store{db: db, dir: dir, keep: keep, lock: lock, live: map[string]*Recorder{}, changed: make(chan struct{}), closed: make(chan struct{})}
	if err := s.probeWrite(); err != nil {
		s.Close()
		return nil, fmt.Errorf("run store %s: cannot write it: %w", path, err)
	}
	if err := s.migrate(); err != nil {
		s.Close()
		return nil, fmt.Errorf("run store %s: %w", path, err)
	}
	if err := s.interruptLeftovers(); err != nil {
		s.Close()
		return nil, fmt.Errorf("run store %s: ending the runs a previous process left running: %w", s.dir, err)
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

const schema = `
CREATE TABLE IF NOT EXISTS runs (
	n INTEGER PRIMARY KEY AUTOINCREMENT,
	id TEXT NOT NULL UNIQUE,
	flow TEXT NOT NULL,
	device TEXT NOT NULL DEFAULT '',
	linked INTEGER NOT NULL DEFAULT 0,
	source TEXT NOT NULL,
	status TEXT NOT NULL,
	labels TEXT,
	started_at INTEGER NOT NULL,
	ended_at INTEGER,
	summary TEXT,
	event_count INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS events (
	run_id TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
	seq INTEGER NOT NULL,
	recorded_at INTEGER NOT NULL,
	kind TEXT NOT NULL,
	payload TEXT NOT NULL,
	PRIMARY KEY (run_id, seq)
);
CREATE INDEX IF NOT EXISTS runs_status ON runs(status, n);
`

func (s *Store) migrate() error {
	if _, err := s.db.Exec(schema); err != nil {
		return err
	}
	return s.lowerIDs()
}

// lowerIDs gives the runs a store recorded under an id with upper-case
// letters (before ids were kept lower-case, docs/control-plane.md, "Run
// ids") their canonical id, with their events and kept images, so a
// lookup finds them. A run whose lower-case id another run already holds
// (the same UUID started twice in two cases) keeps its id.
func (s *Store) lowerIDs() error {
	ids, err := s.ids(`SELECT id FROM runs WHERE id != lower(id) AND lower(id) NOT IN (SELECT id FROM runs)`)
	if err != nil {
		return err
	}
	for _, id := range ids {
		low := CanonicalID(id)
		tx, err := s.db.Begin()
		if err != nil {
			return err
		}
		// The events refer to the run's id; the check waits for the commit.
		_, err = tx.Exec(`PRAGMA defer_foreign_keys = ON`)
		if err == nil {
			_, err = tx.Exec(`UPDATE runs SET id = ? WHERE id = ?`, low, id)
		}
		if err == nil {
			_, err = tx.Exec(`UPDATE events SET run_id = ? WHERE run_id = ?`, low, id)
		}
		if err == nil {
			err = tx.Commit()
		}
		if err != nil {
			tx.Rollback()
			return fmt.Errorf("run %s: keeping it under %s: %w", id, low, err)
		}
		if err := os.Rename(s.filesDir(id), s.filesDir(low)); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("run %s: moving its images: %w", id, err)
		}
	}
	return nil
}

// interruptLeftovers ends the runs a previous process left running: they
// are interrupted, their events kept, and an end event says so.
func (s *Store) interruptLeftovers() error {
	rows, err := s.db.Query(`SELECT id, event_count FROM runs WHERE status = ?`, Running)
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
		sum := Summary{Reason: "the tool-server process ended while the run was going on (killed or crashed); its events up to then are kept"}
		if _, err := s.finish(l.id, l.seq, Interrupted, sum); err != nil {
			return fmt.Errorf("run %s: %w", l.id, err)
		}
	}
	return nil
}

// Close closes the store: runs still going on are left to their owners'
// contexts.
func (s *Store) Close() error {
	s.closeOnce.Do(func() { close(s.closed) })
	s.feed.wait()
	if s.rdb != nil && s.rdb != s.db {
		s.rdb.Close()
	}
	err := s.db.Close()
	if s.lock != nil {
		s.lock.Close()
	}
	return err
}

// notify wakes everything waiting for a change.
func (s *Store) notify() {
	s.mu.Lock()
	close(s.changed)
	s.changed = make(chan struct{})
	s.mu.Unlock()
}

// Changed returns a channel closed at the next change of any run: take it
// before reading, wait on it after, and nothing is missed.
func (s *Store) Changed() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.changed
}

// uuidRE is compiled on first use, not before main: every command starts
// the binary, few read the run store (docs/performance.md, "Start-up").
var uuidRE = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)
})

// ValidID reports whether id is a UUID, the only run id the store takes.
func ValidID(id string) bool { return uuidRE().MatchString(id) }

// CanonicalID is id as the store keeps it: a UUID in lower case, so the
// same UUID in two cases names one run (docs/control-plane.md, "Run
// ids"). Every lookup of the store goes through it.
func CanonicalID(id string) string { return strings.ToLower(id) }

// CheckLabels checks labels against the bounds; the error names the
// label at fault.
func CheckLabels(labels map[string]string) error {
	if len(labels) > MaxLabels {
		return fmt.Errorf("%d labels; a run has at most %d", len(labels), MaxLabels)
	}
	for k, v := range labels {
		if err := CheckLabelKey(k); err != nil {
			return err
		}
		if len(v) > MaxLabelValue {
			return fmt.Errorf("label %q has a value of %d bytes; a value has at most %d", k, len(v), MaxLabelValue)
		}
	}
	return nil
}

// CheckLabelKey checks a label's key, a run's or a filter's: a key no
// run can have is refused in a filter too, by the same words.
func CheckLabelKey(k string) error {
	switch {
	case k == "":
		return errors.New("a label has an empty key")
	case len(k) > MaxLabelKey:
		return fmt.Errorf("label key %.20q… is %d bytes; a key has at most %d", k, len(k), MaxLabelKey)
	case strings.ContainsRune(k, ':'):
		return fmt.Errorf("label key %q has a colon, which a label filter (key:value) cannot name", k)
	case !utf8.ValidString(k):
		return fmt.Errorf("label key %q is not UTF-8", k)
	case strings.ContainsFunc(k, unicode.IsControl):
		return fmt.Errorf("label key %q has a control character", k)
	}
	return nil
}

// ParseLabels reads labels written KEY:VALUE (a run's labels, or a list
// filter); nil when there are none. The error quotes the one that is not.
func ParseLabels(list []string) (map[string]string, error) {
	var labels map[string]string
	for _, l := range list {
		k, v, ok := strings.Cut(l, ":")
		if !ok || k == "" {
			return nil, fmt.Errorf("%q: want KEY:VALUE", l)
		}
		if labels == nil {
			labels = map[string]string{}
		}
		labels[k] = v
	}
	return labels, nil
}

// Begin is what a run starts with, and the payload of its run_started
// event (absent fields omitted, docs/control-plane.md, "What we adopt").
type Begin struct {
	// ID is the run's id, a UUID; empty mints one.
	ID   string `json:"-"`
	Flow string `json:"flow"`
	// Device is the device the run uses when it is known at the start;
	// else empty, and SetDevice records it once the run has one.
	Device string            `json:"device,omitempty"`
	Linked bool              `json:"linked"`
	Labels map[string]string `json:"labels,omitempty"`
	// Source is how it started: "tools" (a flow-execute call) or "v1"
	// (POST /v1/runs).
	Source string `json:"source"`
}

// Start records a new run, running, and returns its recorder. The run's
// first event (run_started) is written before it returns.
func (s *Store) Start(ctx context.Context, b Begin) (*Recorder, error) {
	if b.ID == "" {
		b.ID = newUUID()
	}
	if !ValidID(b.ID) {
		return nil, fmt.Errorf("run id %.64q is not a UUID", b.ID)
	}
	b.ID = CanonicalID(b.ID)
	if err := CheckLabels(b.Labels); err != nil {
		return nil, err
	}
	b.Flow, b.Device = fault.Clip(b.Flow, MaxNameBytes), fault.Clip(b.Device, MaxNameBytes)
	var labels any
	if len(b.Labels) > 0 {
		lb, _ := json.Marshal(b.Labels)
		labels = string(lb)
	}
	now := time.Now()
	res, err := s.db.ExecContext(ctx, `INSERT INTO runs (id, flow, device, linked, source, status, labels, started_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT(id) DO NOTHING`,
		b.ID, b.Flow, b.Device, b.Linked, b.Source, Running, labels, now.UnixMilli())
	if err != nil {
		return nil, err
	}
	if n, err := res.RowsAffected(); err != nil || n == 0 {
		return nil, fmt.Errorf("%w: run %s has history already", ErrRunExists, b.ID)
	}
	r := &Recorder{s: s, id: b.ID}
	s.mu.Lock()
	s.live[b.ID] = r
	s.mu.Unlock()
	if err := r.Append("run_started", b); err != nil {
		return nil, err
	}
	return r, nil
}

// Cancel cancels a run this process is running.
func (s *Store) Cancel(ctx context.Context, id string) error {
	id = CanonicalID(id)
	s.mu.Lock()
	r := s.live[id]
	s.mu.Unlock()
	if r != nil && r.cancelRun() {
		return nil
	}
	run, err := s.Get(ctx, id)
	if err != nil {
		return err
	}
	return fmt.Errorf("%w: run %s is %s, not running", ErrWrongState, id, run.Status)
}

// Stopping cancels every run this process is running, as the server
// stops: they end interrupted.
func (s *Store) Stopping() {
	s.mu.Lock()
	live := make([]*Recorder, 0, len(s.live))
	for _, r := range s.live {
		live = append(live, r)
	}
	s.mu.Unlock()
	for _, r := range live {
		r.mu.Lock()
		c := r.cancel
		r.mu.Unlock()
		if c != nil {
			c(ErrStopping)
		}
	}
}

// finish ends a run with its status and summary, the final event at seq,
// and returns that event as recorded.
func (s *Store) finish(id string, seq int64, status string, sum Summary) (Event, error) {
	payload, _ := json.Marshal(map[string]any{"status": status, "summary": sum})
	sb, _ := json.Marshal(sum)
	now := time.Now().UnixMilli()
	tx, err := s.db.Begin()
	if err != nil {
		return Event{}, err
	}
	defer tx.Rollback()
	if _, err := tx.Exec(`INSERT INTO events (run_id, seq, recorded_at, kind, payload) VALUES (?, ?, ?, ?, ?)`, id, seq, now, "run_ended", string(payload)); err != nil {
		return Event{}, err
	}
	if _, err := tx.Exec(`UPDATE runs SET status = ?, ended_at = ?, summary = ?, event_count = ? WHERE id = ?`, status, now, string(sb), seq+1, id); err != nil {
		return Event{}, err
	}
	if err := tx.Commit(); err != nil {
		return Event{}, err
	}
	return recorded(id, seq, now, "run_ended", payload), nil
}

// prune removes the oldest finished runs beyond the store's keep, with
// their files.
func (s *Store) prune() error {
	ids, err := s.ids(`SELECT id FROM runs WHERE status != ? ORDER BY n DESC LIMIT -1 OFFSET ?`, Running, s.keep)
	if err != nil {
		return err
	}
	for _, id := range ids {
		if _, err := s.db.Exec(`DELETE FROM runs WHERE id = ?`, id); err != nil {
			return err
		}
		if err := os.RemoveAll(s.filesDir(id)); err != nil {
			return err
		}
	}
	return nil
}

// ids runs a query of run ids on the writer connection and returns them.
func (s *Store) ids(query string, args ...any) ([]string, error) {
	rows, err := s.db.Query(query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		ids = append(ids, id)
	}
	return ids, rows.Err()
}

// filesDir is where a run's images are kept.
func (s *Store) filesDir(id string) string { return filepath.Join(s.dir, "files", id) }
