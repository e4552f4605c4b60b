// Package runs owns the run store: every flow run a tool-server executes,
// with an append-only log of events per run, and the images of its
// snapshots. A run's events are written before the run moves on, so a
// process killed mid-run loses none of them; the next process over the
// same directory lists a run of POST /v1/runs as running with no driver,
// for a resume to re-drive, and ends any other failed.
//
// One engine (store.go, query.go, recorder.go, follow.go, lease.go) runs
// every query, written once, over a dialect (sqldb.go) of one of two
// databases, and asks neither which it is: the embedded SQLite of one
// process's state directory (sqlite.go, its schema and upgrades in
// sqlite_migrate.go; modernc.org/sqlite, pure Go, so the binary stays
// CGO_ENABLED=0, in WAL mode, the images as files beside it), or the
// PostgreSQL a fleet shares (postgres.go). OpenStore chooses by the
// address.
package runs

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/toolserver/toolserver/fault"
)

// The bounds of a run's labels (docs/control-plane.md, "Labels").
const (
	MaxLabels     = 16
	MaxLabelKey   = 64
	MaxLabelValue = 256
)

// DefaultKeep is how many finished runs a store keeps by default.
const DefaultKeep = 500

// Store is the run store of one state directory. One process at a time
// opens a directory (a lock file says which).
type Store struct {
	// db is the one writer connection; rdb the pool every read goes
	// through, so that a follower's read never queues ahead of a run's
	// next write (WAL: readers and the writer do not block each other).
	db, rdb *sql.DB
	// sql is what its database does its own way.
	sql  dialect
	keep int
	// retryFor bounds a write's wait for a database that went away
	// (RetryFor).
	retryFor time.Duration
	// token names this process: the owner of the runs it drives.
	token string
	// verbs orders abandon and resume, which read a run's state and
	// write after it.
	verbs sync.Mutex
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

// newStore is a store over db (the writer pool; the read pool is set
// apart by the caller, else it is db) and its dialect.
func newStore(db *sql.DB, d dialect, keep int) *Store {
	if keep <= 0 {
		keep = DefaultKeep
	}
	return &Store{db: db, rdb: db, sql: d, keep: keep, retryFor: RetryFor, token: newUUID(), live: map[string]*Recorder{}, changed: make(chan struct{}), closed: make(chan struct{})}
}

// Close closes the store: runs still going on are left to their owners'
// contexts.
func (s *Store) Close() error {
	s.closeOnce.Do(func() { close(s.closed) })
	s.feed.wait()
	s.sql.close()
	if s.rdb != nil && s.rdb != s.db {
		s.rdb.Close()
	}
	err := s.db.Close()
	s.sql.release()
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
	// Args are the run's flow-execute arguments, recorded (not in the
	// event) for a resume to re-drive; nil for a run that cannot be
	// re-driven.
	Args json.RawMessage `json:"-"`
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
	var args any
	if b.Args != nil {
		args = string(b.Args)
	}
	now := time.Now()
	res, err := s.exec(ctx, `INSERT INTO runs (id, flow, device, linked, source, status, labels, started_at, last_at, args, owner, lease_until) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT(id) DO NOTHING`,
		b.ID, b.Flow, b.Device, b.Linked, b.Source, Running, labels, now.UnixMilli(), now.UnixMilli(), args, s.token, s.sql.leaseUntil(now.UnixMilli()))
	if err != nil {
		return nil, err
	}
	if n, err := res.RowsAffected(); err != nil || n == 0 {
		return nil, fmt.Errorf("%w: run %s has history already", ErrRunExists, b.ID)
	}
	r := &Recorder{s: s, id: b.ID, resumable: b.Args != nil}
	s.mu.Lock()
	s.live[b.ID] = r
	s.mu.Unlock()
	// The first event's time is the run's first_recorded_at.
	if err := r.appendAt(now.UnixMilli(), KindRunStarted, b); err != nil {
		return nil, err
	}
	return r, nil
}

// Receipt is the receipt of an abandonment: the seq of the terminal
// RunAbandoned event and the status it gives the run.
type Receipt struct {
	Run         string `json:"run"`
	Abandoned   bool   `json:"abandoned"`
	AppendedSeq int64  `json:"appended_seq"`
	Status      Status `json:"status"`
}

// Abandon retires a run that is not terminal: one RunAbandoned event ends
// it, with reason when one is given. A run this process drives is
// stopped (its context's cause is ErrAbandoned) after the event is
// recorded, so nothing it does later reaches its log. A terminal run is
// ErrWrongState.
func (s *Store) Abandon(ctx context.Context, id, reason string) (Receipt, error) {
	id = CanonicalID(id)
	if len(reason) > MaxReasonBytes {
		return Receipt{}, fmt.Errorf("%w: a reason of %d bytes; a reason has at most %d", ErrBadRequest, len(reason), MaxReasonBytes)
	}
	st := Status{State: Abandoned, Reason: reason}
	s.verbs.Lock()
	defer s.verbs.Unlock()
	s.mu.Lock()
	r := s.live[id]
	s.mu.Unlock()
	var ev Event
	var err error
	if r != nil {
		ev, err = r.abandon(st)
	} else {
		ev, err = s.abandonIdle(ctx, id, st)
	}
	if err != nil {
		return Receipt{}, err
	}
	s.notify()
	if err := s.prune(); err != nil {
		return Receipt{}, err
	}
	return Receipt{Run: id, Abandoned: true, AppendedSeq: ev.Seq, Status: st}, nil
}

// abandonIdle abandons a run no recorder of this process holds: its
// driver is gone. s.verbs is held.
func (s *Store) abandonIdle(ctx context.Context, id string, st Status) (Event, error) {
	ev, err := s.finish(ctx, id, st, "")
	if !errors.Is(err, errNotRunning) {
		return ev, err
	}
	var state string
	err = s.row(ctx, `SELECT status FROM runs WHERE id = ?`, id).Scan(&state)
	if errors.Is(err, sql.ErrNoRows) {
		return Event{}, fmt.Errorf("%w: no run %s in this store", ErrUnknownRun, id)
	}
	if err != nil {
		return Event{}, err
	}
	// Terminal (WouldAbandon's refusal, in its words), or running again,
	// or still: only a resume in between could do it.
	return Event{}, fmt.Errorf("%w: run %s is %s; there is nothing left to abandon", ErrWrongState, id, state)
}

// Resume starts a new attempt of a run that is running with no driver
// (its process was killed, or stopped under it): a RunResumed event opens
// it, and the caller drives the run again from the returned arguments,
// from the flow's first step. ErrAttached: a driver runs it already;
// ErrWrongState: it is terminal, or was not started with recorded
// arguments (a /tools call's).
func (s *Store) Resume(ctx context.Context, id string) (*Recorder, json.RawMessage, error) {
	return s.resume(ctx, id, false)
}

// TakeOver is Resume by a replica of a fleet of a run whose driver was
// lost (its lease lapsed): the RunResumed event says it was a take-over.
func (s *Store) TakeOver(ctx context.Context, id string) (*Recorder, json.RawMessage, error) {
	return s.resume(ctx, id, true)
}

// Fail ends a run that is running with the reason, as failed, whoever
// drove it (a run out of attempts).
func (s *Store) Fail(ctx context.Context, id, reason string) error {
	_, err := s.finish(ctx, CanonicalID(id), Status{State: Failed, Error: fault.Clip(reason, MaxReasonBytes)}, "")
	if err == nil {
		s.notify()
	}
	return err
}

func (s *Store) resume(ctx context.Context, id string, takeover bool) (*Recorder, json.RawMessage, error) {
	id = CanonicalID(id)
	s.verbs.Lock()
	defer s.verbs.Unlock()
	s.mu.Lock()
	live := s.live[id] != nil
	s.mu.Unlock()
	if live {
		return nil, nil, fmt.Errorf("%w: run %s is running, driven by this tool-server", ErrAttached, id)
	}
	var seq int64
	var attempt int
	var args string
	now := time.Now().UnixMilli()
	err := s.inTx(ctx, func(t txn) error {
		err := t.row(`UPDATE runs SET owner = ?, lease_until = ?, attempt = attempt + 1, step_count = 0
			WHERE id = ? AND status = ? AND args IS NOT NULL AND (owner IS NULL OR lease_until < ?)
			RETURNING event_count, attempt, args`, s.token, s.sql.leaseUntil(now), id, Running, now).Scan(&seq, &attempt, &args)
		if err != nil {
			return err
		}
		return t.changed(id)
	})
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil, s.whyNotResumed(ctx, id)
	}
	if err != nil {
		return nil, nil, err
	}
	r := &Recorder{s: s, id: id, seq: seq, resumable: true}
	s.mu.Lock()
	s.live[id] = r
	s.mu.Unlock()
	resumed := map[string]any{"attempt": attempt}
	if takeover {
		resumed["takeover"] = true
	}
	if err := r.Append(KindRunResumed, resumed); err != nil {
		s.forget(id)
		return nil, nil, err
	}
	return r, json.RawMessage(args), nil
}

// whyNotResumed says why run id could not be claimed for a resume, by
// the rule of WouldResume over the run as it reads now: held by a driver
// whose lease holds, or not (the claim's own condition).
func (s *Store) whyNotResumed(ctx context.Context, id string) error {
	var state, owner string
	var args bool
	var lease int64
	err := s.row(ctx, `SELECT status, args IS NOT NULL, coalesce(owner, ''), coalesce(lease_until, 0) FROM runs WHERE id = ?`, id).Scan(&state, &args, &owner, &lease)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return fmt.Errorf("%w: no run %s in this store", ErrUnknownRun, id)
	case err != nil:
		return err
	}
	run := Run{ID: id, Status: Status{State: state}, Resumable: args, Driver: DriverNone}
	if owner != "" && lease >= time.Now().UnixMilli() {
		run.Driver = DriverAttached
	}
	switch WouldResume(run).Verdict {
	case WouldLeave:
		return fmt.Errorf("%w: run %s is %s", ErrWrongState, id, state)
	case WouldRefuse:
		return fmt.Errorf("%w: run %s was started by a /tools call, whose arguments are not recorded, so it cannot be re-driven; abandon it", ErrWrongState, id)
	}
	// Held, or claimed by another just now.
	return fmt.Errorf("%w: run %s is running, driven by a tool-server whose lease on it holds", ErrAttached, id)
}

// forget drops a run from the ones this process drives.
func (s *Store) forget(id string) {
	s.mu.Lock()
	delete(s.live, id)
	s.mu.Unlock()
}

// driving is the recorders of the runs this process drives now.
func (s *Store) driving() []*Recorder {
	s.mu.Lock()
	defer s.mu.Unlock()
	live := make([]*Recorder, 0, len(s.live))
	for _, r := range s.live {
		live = append(live, r)
	}
	return live
}

// Stopping cancels every run this process is running, as the server
// stops: a run a resume can re-drive stays running with no driver (a
// RunInterrupted event says so), any other ends failed.
func (s *Store) Stopping() {
	for _, r := range s.driving() {
		r.mu.Lock()
		c := r.cancel
		r.mu.Unlock()
		if c != nil {
			c(ErrStopping)
		}
	}
}

// errNotRunning is a finish of a run that is no longer running (or, for
// its owner, no longer its own).
var errNotRunning = errors.New("the run is not running")

// finish ends a run with its status: the terminal event (its payload the
// status object) at the log's next seq, returned as recorded. With owner
// set, only while owner drives it (its lease holds): else errNotRunning,
// as for a run that is not running.
func (s *Store) finish(ctx context.Context, id string, st Status, owner string) (Event, error) {
	payload, _ := json.Marshal(st)
	kind := terminalKind(st.State)
	var outcome any
	if o := st.Outcome(); o != "" {
		outcome = o
	}
	// Only a running run ends; with owner, only while owner drives it.
	cond := "status = ? AND (? = '' OR owner = ?)"
	var seq, now int64
	err := s.inTx(ctx, func(t txn) error {
		now = time.Now().UnixMilli()
		args := []any{st.State, outcome, now, now, string(payload), id, Running, owner, owner}
		err := t.row(`UPDATE runs SET status = ?, outcome = ?, ended_at = ?, last_at = ?, summary = ?, event_count = event_count + 1, owner = NULL, lease_until = NULL
			WHERE id = ? AND `+cond+` RETURNING event_count - 1`, args...).Scan(&seq)
		if errors.Is(err, sql.ErrNoRows) {
			return errNotRunning
		}
		if err != nil {
			return err
		}
		if _, err := t.exec(`INSERT INTO events (run_id, seq, recorded_at, kind, payload) VALUES (?, ?, ?, ?, ?)`, id, seq, now, kind, string(payload)); err != nil {
			return err
		}
		return t.changed(id)
	})
	if err != nil {
		return Event{}, err
	}
	return recorded(id, seq, now, kind, payload), nil
}

// prune removes the oldest finished runs beyond the store's keep, with
// their files.
func (s *Store) prune() error {
	ids, err := s.ids(`SELECT id FROM runs WHERE status != ? AND n <= (SELECT n FROM runs WHERE status != ? ORDER BY n DESC LIMIT 1 OFFSET ?)`, Running, Running, s.keep)
	if err != nil {
		return err
	}
	for _, id := range ids {
		if _, err := s.exec(context.Background(), `DELETE FROM runs WHERE id = ?`, id); err != nil {
			return err
		}
		if err := s.sql.removeFiles(context.Background(), id); err != nil {
			return err
		}
	}
	return nil
}

// ids runs a query of run ids on the writer pool and returns them.
func (s *Store) ids(query string, args ...any) ([]string, error) {
	rows, err := s.db.Query(s.sql.rebind(query), args...)
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
