package runs

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/toolserver/toolserver/flow"
)

// Run is a run as the store lists it, in the shape of docs/control-plane.md
// (docs/control-plane.md, "The run"): absent fields are omitted, never
// null or empty.
type Run struct {
	ID              string            `json:"run"`
	Status          Status            `json:"status"`
	EventCount      int64             `json:"event_count"`
	FirstRecordedAt time.Time         `json:"first_recorded_at"`
	LastRecordedAt  time.Time         `json:"last_recorded_at"`
	StepCount       int64             `json:"step_count"`
	Labels          map[string]string `json:"labels,omitempty"`
	// Driver is attached or none for a run that is running, and absent
	// for a terminal one.
	Driver string `json:"driver,omitempty"`
	// Ours: the flow, its device once known, whether the call was linked,
	// how the run started, a completed run's outcome, and its attempts
	// when it was resumed.
	Flow    string `json:"flow"`
	Device  string `json:"device,omitempty"`
	Linked  bool   `json:"linked"`
	Source  string `json:"source"`
	Outcome string `json:"outcome,omitempty"`
	Attempt int    `json:"attempt,omitempty"`
	// Resumable says a run with no driver can be re-driven (its
	// arguments are recorded); absent otherwise.
	Resumable bool `json:"resumable,omitempty"`

	owner      string
	leaseUntil int64
}

// End is the end frame of the run's event stream as it stands: its
// status, and detached when it is running with no driver.
func (r Run) End() EndFrame {
	return EndFrame{Status: r.Status, Detached: !Terminal(r.Status.State) && r.Driver != DriverAttached}
}

// Detail is a run with its steps and snapshots, folded from its events
// (of its last attempt, when it was resumed).
type Detail struct {
	Run
	Steps     []flow.StepReport `json:"steps"`
	Snapshots []Snapshot        `json:"snapshots"`
}

// Event is one event of a run's log, the pinned envelope the API, the
// stream and runs events -o json send.
type Event struct {
	RunID         string    `json:"run_id"`
	Seq           int64     `json:"seq"`
	SchemaVersion int       `json:"schema_version"`
	RecordedAt    time.Time `json:"recorded_at"`
	Event         Body      `json:"event"`
}

// Body is an event's kind and payload.
type Body struct {
	Kind    string          `json:"kind"`
	Payload json.RawMessage `json:"payload"`
}

// Filter selects runs for List.
type Filter struct {
	// Status is one state, or empty for all.
	Status string
	// Outcome is one outcome (of completed runs), or empty for all.
	Outcome string
	// Labels must all match (key:value).
	Labels map[string]string
	// Limit caps the page (default 50, at most 500).
	Limit int
	// Before is a run id: the page starts after it (older runs).
	Before string
}

// MaxListLimit is the most runs a page of a list holds.
const MaxListLimit = 500

// ParseFilter reads a list's filter as /v1, MCP and the CLI take it: a
// state, an outcome, labels written KEY:VALUE, a limit (0: the default)
// and a before cursor. The error names the field at fault; a filter no
// run could match is refused rather than answered with no runs.
func ParseFilter(status, outcome string, labels []string, limit int, before string) (Filter, error) {
	f := Filter{Status: status, Outcome: outcome, Limit: limit, Before: before}
	if f.Status != "" && !slices.Contains(States, f.Status) {
		return f, fmt.Errorf("status %.64q: want one of %s", f.Status, strings.Join(States, ", "))
	}
	if f.Outcome != "" && !slices.Contains(Outcomes, f.Outcome) {
		return f, fmt.Errorf("outcome %.64q: want one of %s", f.Outcome, strings.Join(Outcomes, ", "))
	}
	if f.Limit < 0 || f.Limit > MaxListLimit {
		return f, fmt.Errorf("limit %d: want a number from 1 to %d", f.Limit, MaxListLimit)
	}
	m, err := ParseLabels(labels)
	if err != nil {
		return f, fmt.Errorf("label %w", err)
	}
	for k, v := range m {
		if err := CheckLabelKey(k); err != nil {
			return f, fmt.Errorf("label %.80q: %w", k+":"+v, err)
		}
	}
	f.Labels = m
	return f, nil
}

const runColumns = `id, flow, device, linked, source, status, labels, started_at, coalesce(last_at, ended_at, started_at), summary, event_count, coalesce(outcome, ''), step_count, attempt, args IS NOT NULL, coalesce(owner, ''), coalesce(lease_until, 0)`

func scanRun(sc interface{ Scan(...any) error }) (Run, error) {
	var r Run
	var labels, summary sql.NullString
	var started, last int64
	if err := sc.Scan(&r.ID, &r.Flow, &r.Device, &r.Linked, &r.Source, &r.Status.State, &labels, &started, &last, &summary, &r.EventCount, &r.Outcome, &r.StepCount, &r.Attempt, &r.Resumable, &r.owner, &r.leaseUntil); err != nil {
		return r, err
	}
	r.FirstRecordedAt = time.UnixMilli(started).UTC()
	r.LastRecordedAt = time.UnixMilli(last).UTC()
	if labels.Valid {
		json.Unmarshal([]byte(labels.String), &r.Labels)
		if len(r.Labels) == 0 {
			r.Labels = nil
		}
	}
	if summary.Valid && Terminal(r.Status.State) {
		var st Status
		if json.Unmarshal([]byte(summary.String), &st) == nil && st.State == r.Status.State {
			r.Status = st
		}
	}
	if r.Attempt <= 1 {
		r.Attempt = 0
	}
	return r, nil
}

// drive sets the driver of runs by the store's rule (attached): a
// terminal run has none, a running one is attached or none.
func drive(attached func(string, int64) bool, rs []Run) {
	for i := range rs {
		r := &rs[i]
		switch {
		case Terminal(r.Status.State):
			r.Driver, r.Resumable = "", false
		case attached(r.owner, r.leaseUntil):
			r.Driver, r.Resumable = DriverAttached, false
		default:
			r.Driver = DriverNone
		}
	}
}

// Page is one page of a list of runs.
type Page struct {
	Runs []Run `json:"runs"`
	// NextBefore is the before cursor of the next page: the page's last
	// run, set only when older runs match (docs/control-plane.md,
	// "Listing and reading runs").
	NextBefore string `json:"next_before,omitempty"`
}

// List returns runs newest first.
func (s *Store) List(ctx context.Context, f Filter) ([]Run, error) {
	p, err := s.ListPage(ctx, f)
	return p.Runs, err
}

// ListPage returns a page of runs newest first, and the cursor of the
// next page when there is one. It reads one run past the page to know.
func (s *Store) ListPage(ctx context.Context, f Filter) (Page, error) {
	if f.Limit <= 0 {
		f.Limit = 50
	}
	f.Limit = min(f.Limit, MaxListLimit)
	var where []string
	var args []any
	if f.Status != "" {
		where = append(where, "status = ?")
		args = append(args, f.Status)
	}
	if f.Outcome != "" {
		where = append(where, "outcome = ?")
		args = append(args, f.Outcome)
	}
	for k, v := range f.Labels {
		where = append(where, s.sql.labelMatch())
		args = append(args, k, v)
	}
	if f.Before != "" {
		if !ValidID(f.Before) {
			return Page{}, fmt.Errorf("%w: before=%.64q is not a run id (a UUID)", ErrBadCursor, f.Before)
		}
		var n int64
		if err := s.row(ctx, `SELECT n FROM runs WHERE id = ?`, CanonicalID(f.Before)).Scan(&n); err != nil {
			if errors.Is(err, sql.ErrNoRows) {
				return Page{}, fmt.Errorf("%w: before=%s names no run in this store", ErrBadCursor, f.Before)
			}
			return Page{}, err
		}
		where = append(where, "n < ?")
		args = append(args, n)
	}
	q := `SELECT ` + runColumns + ` FROM runs`
	if len(where) > 0 {
		q += " WHERE " + strings.Join(where, " AND ")
	}
	q += " ORDER BY n DESC LIMIT ?"
	args = append(args, f.Limit+1)
	rows, err := s.rows(ctx, q, args...)
	if err != nil {
		return Page{}, err
	}
	defer rows.Close()
	p := Page{Runs: []Run{}}
	for rows.Next() {
		r, err := scanRun(rows)
		if err != nil {
			return Page{}, err
		}
		p.Runs = append(p.Runs, r)
	}
	if err := rows.Err(); err != nil {
		return Page{}, err
	}
	if len(p.Runs) > f.Limit {
		p.Runs = p.Runs[:f.Limit]
		p.NextBefore = p.Runs[f.Limit-1].ID
	}
	drive(s.sql.attached(ctx, s.rdb, s.token), p.Runs)
	return p, nil
}

// Run returns a run as a list shows it.
func (s *Store) Run(ctx context.Context, id string) (Run, error) {
	id = CanonicalID(id)
	r, err := scanRun(s.row(ctx, `SELECT `+runColumns+` FROM runs WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return Run{}, fmt.Errorf("%w: no run %s in this store", ErrUnknownRun, id)
	}
	if err != nil {
		return Run{}, err
	}
	rs := []Run{r}
	drive(s.sql.attached(ctx, s.rdb, s.token), rs)
	return rs[0], nil
}

// Get returns a run with the steps and snapshots of its last attempt.
func (s *Store) Get(ctx context.Context, id string) (*Detail, error) {
	r, err := s.Run(ctx, id)
	if err != nil {
		return nil, err
	}
	d := &Detail{Run: r, Steps: []flow.StepReport{}, Snapshots: []Snapshot{}}
	evs, err := s.Events(ctx, r.ID, 0)
	if err != nil {
		return nil, err
	}
	for _, e := range evs {
		switch e.Event.Kind {
		case KindRunResumed:
			d.Steps, d.Snapshots = d.Steps[:0], d.Snapshots[:0]
		case KindStepCompleted:
			var st flow.StepReport
			if json.Unmarshal(e.Event.Payload, &st) == nil {
				d.Steps = append(d.Steps, st)
			}
		case KindSnapshotCompared:
			var sn Snapshot
			if json.Unmarshal(e.Event.Payload, &sn) == nil {
				d.Snapshots = append(d.Snapshots, sn)
			}
		}
	}
	return d, nil
}

// Replay folds a run's log (Fold), executing nothing.
func (s *Store) Replay(ctx context.Context, id string) (Replay, error) {
	r, err := s.Run(ctx, id)
	if err != nil {
		return Replay{}, err
	}
	evs, err := s.Events(ctx, r.ID, 0)
	if err != nil {
		return Replay{}, err
	}
	return Fold(evs), nil
}

// Events returns a run's events from seq from on, in order.
func (s *Store) Events(ctx context.Context, id string, from int64) ([]Event, error) {
	id = CanonicalID(id)
	rows, err := s.rows(ctx, `SELECT seq, recorded_at, kind, payload FROM events WHERE run_id = ? AND seq >= ? ORDER BY seq`, id, from)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []Event{}
	for rows.Next() {
		e := Event{RunID: id, SchemaVersion: SchemaVersion}
		var at int64
		var payload string
		if err := rows.Scan(&e.Seq, &at, &e.Event.Kind, &payload); err != nil {
			return nil, err
		}
		e.RecordedAt = time.UnixMilli(at).UTC()
		e.Event.Payload = json.RawMessage(payload)
		if e.Event.Kind == KindSnapshotCompared {
			e.Event.Payload = withOutcome(e.Event.Payload)
		}
		out = append(out, e)
	}
	return out, rows.Err()
}

// fileName is every name keepFile gives an image, and nothing the file
// system would refuse (a NUL, a name over 255 bytes) or resolve (a path).
// Compiled on first use: its 255 repetitions are the heaviest init of the
// binary otherwise (docs/performance.md, "Start-up").
var fileName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9._-]{1,255}$`) })

// File opens an image a run kept (a name from a snapshot event's files).
func (s *Store) File(ctx context.Context, id, name string) (File, error) {
	id = CanonicalID(id)
	if !ValidID(id) || !fileName().MatchString(name) || name == "." || name == ".." {
		return nil, noFile(id, name)
	}
	return s.sql.openFile(ctx, s.rdb, id, name)
}

// noFile says a run has no file of that name, quoting at most 64
// characters of it.
func noFile(id, name string) error {
	return fmt.Errorf("%w: no file %.64q of run %.64q", ErrUnknownRun, name, id)
}
