package runs

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sync"
	"time"

	"github.com/toolserver/toolserver/fault"
	"github.com/toolserver/toolserver/flow"
)

// Recorder writes the events of one running run, in order, each before
// the run moves on. Its methods are safe for concurrent use.
type Recorder struct {
	s  *Store
	id string

	// resumable is set for a run whose arguments are recorded: a driver
	// that stops under it leaves it running, for a resume.
	resumable bool

	mu     sync.Mutex
	seq    int64
	ended  bool
	cancel context.CancelCauseFunc
	// abandoned tells an abandonment that came before the run bound its
	// context: Bind cancels at once.
	abandoned bool
	// storeLost is the error of an append that waited RetryFor for the
	// store: the run stopped for it.
	storeLost error
	// files counts the images kept, for their names; fileBytes their
	// size.
	files     int
	fileBytes int64
	// tails are the followers of the run's live events; untailed once the
	// run's end went to them.
	tails    map[*Tail]struct{}
	untailed bool
	// gone is set once the run was lost to another process (lost).
	gone bool
}

// ID is the run's id.
func (r *Recorder) ID() string { return r.id }

// Bind gives the run a context that Store.Abandon cancels (cause
// ErrAbandoned) and Store.Stopping too (ErrStopping).
func (r *Recorder) Bind(ctx context.Context) (context.Context, context.CancelCauseFunc) {
	ctx, cancel := context.WithCancelCause(ctx)
	r.mu.Lock()
	r.cancel = cancel
	if r.abandoned {
		cancel(ErrAbandoned)
	}
	r.mu.Unlock()
	return ctx, cancel
}

// abandon ends the run with its RunAbandoned event, then stops it: what
// it does after reaches no log. A run that has ended is ErrWrongState.
func (r *Recorder) abandon(st Status) (Event, error) {
	r.mu.Lock()
	if r.ended {
		r.mu.Unlock()
		return Event{}, fmt.Errorf("%w: run %s has ended; there is nothing left to abandon", ErrWrongState, r.id)
	}
	ev, err := r.s.finish(context.Background(), r.id, st, r.s.token)
	if errors.Is(err, errNotRunning) {
		// Taken from this process (another replica took it over, or
		// abandoned it): it is no longer this recorder's.
		r.mu.Unlock()
		r.lost()
		return r.s.abandonIdle(context.Background(), r.id, st)
	}
	if err != nil {
		r.mu.Unlock()
		return Event{}, err
	}
	r.ended, r.abandoned = true, true
	r.untailLocked(&ev, &EndFrame{Status: st})
	if r.cancel != nil {
		r.cancel(ErrAbandoned)
	}
	r.mu.Unlock()
	r.s.forget(r.id)
	return ev, nil
}

// Append writes an event of kind with payload (any JSON value) as the
// run's next event.
func (r *Recorder) Append(kind string, payload any) error {
	return r.appendAt(time.Now().UnixMilli(), kind, payload)
}

// appendAt appends the event as recorded at ms (Unix milliseconds).
func (r *Recorder) appendAt(ms int64, kind string, payload any) error {
	b, err := json.Marshal(payload)
	if err != nil {
		return err
	}
	r.mu.Lock()
	if r.ended {
		r.mu.Unlock()
		return fmt.Errorf("run %s has ended", r.id)
	}
	step := 0
	if kind == KindStepCompleted {
		step = 1
	}
	var seq int64
	err = r.s.inTx(context.Background(), func(t txn) error {
		// The append is fenced by the run's owner: a process that lost
		// the run (its lease lapsed and another took it over, or it was
		// abandoned) writes nothing more to it.
		err := t.row(`UPDATE runs SET event_count = event_count + 1, last_at = ?, step_count = step_count + ? WHERE id = ? AND owner = ? AND status = ? RETURNING event_count - 1`,
			ms, step, r.id, r.s.token, Running).Scan(&seq)
		if errors.Is(err, sql.ErrNoRows) {
			return ErrLostRun
		}
		if err != nil {
			return err
		}
		if _, err := t.exec(`INSERT INTO events (run_id, seq, recorded_at, kind, payload) VALUES (?, ?, ?, ?, ?)`, r.id, seq, ms, kind, string(b)); err != nil {
			return err
		}
		return t.changed(r.id)
	})
	if err != nil {
		if errors.Is(err, ErrStoreLost) && r.storeLost == nil {
			// The store stayed away past its bound: the run stops here
			// and ends failed, saying why, once the store answers.
			r.storeLost = err
			if r.cancel != nil {
				r.cancel(err)
			}
		}
		r.mu.Unlock()
		if errors.Is(err, ErrLostRun) {
			r.lost()
		}
		return err
	}
	r.publish(recorded(r.id, seq, ms, kind, b))
	r.seq = seq + 1
	r.mu.Unlock()
	r.s.notify()
	return nil
}

// ErrLostRun is an append of a run this process no longer drives:
// another process took it over, or it was abandoned.
var ErrLostRun = errors.New("the run is no longer driven by this process")

// lost ends the recorder of a run this process no longer drives: the run
// stops (its context's cause is ErrLostRun), its followers go to the
// store for what comes next, and nothing more is written.
func (r *Recorder) lost() {
	r.mu.Lock()
	if r.ended {
		r.mu.Unlock()
		return
	}
	r.ended, r.gone = true, true
	if r.cancel != nil {
		r.cancel(ErrLostRun)
	}
	r.untailLocked(nil, nil)
	r.mu.Unlock()
	r.s.forget(r.id)
	r.s.notify()
}

// Lost reports whether the run was lost to another process (another
// replica took it over after this one's lease lapsed, or it was
// abandoned): this process stopped it and wrote nothing more to it.
func (r *Recorder) Lost() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.gone
}

// SetDevice records the device the run got, once it has one.
func (r *Recorder) SetDevice(device string) error {
	_, err := r.s.exec(context.Background(), `UPDATE runs SET device = ? WHERE id = ?`, fault.Clip(device, MaxNameBytes), r.id)
	return err
}

// SetFlow records the flow's name, once the call named it.
func (r *Recorder) SetFlow(name string) error {
	_, err := r.s.exec(context.Background(), `UPDATE runs SET flow = ? WHERE id = ?`, fault.Clip(name, MaxNameBytes), r.id)
	return err
}

// Snapshot is the event a snapshot step adds beside its step event: its
// outcome and the images the run keeps, by role, as names of the run's
// files (GET /v1/runs/{id}/files/{name}).
type Snapshot struct {
	Step   int    `json:"step"`
	Flow   string `json:"flow"`
	Key    string `json:"key"`
	Status string `json:"status"`
	// Outcome is the snapshot's outcome (flow.SnapshotOutcome), recorded
	// so that no reader derives it again; a snapshot recorded before
	// snapshots carried it gets it as it is read (withOutcome).
	Outcome  string                 `json:"outcome"`
	Baseline *flow.SnapshotBaseline `json:"baseline,omitempty"`
	Files    map[string]string      `json:"files,omitempty"`
	// Artifacts are the artifact ids of the images in the tool-server's
	// artifact store, while it keeps them.
	Artifacts map[string]string `json:"artifacts,omitempty"`
}

// MaxFileBytes caps an image a run keeps; MaxRunFileBytes all of a
// run's images together (the images past it are not kept; the steps and
// their outcomes are).
const (
	MaxFileBytes    = 64 << 20
	MaxRunFileBytes = 512 << 20
)

// Step records a finished step: its report, and for a snapshot step its
// outcome and images (copied into the store from the artifacts' files on
// this machine).
func (r *Recorder) Step(s flow.StepReport) error {
	if err := r.Append(KindStepCompleted, s); err != nil {
		return err
	}
	if s.SnapshotKey == "" {
		return nil
	}
	snap := Snapshot{Step: s.Index, Flow: s.Flow, Key: s.SnapshotKey, Status: s.Status, Outcome: flow.SnapshotOutcome(s), Baseline: s.Baseline}
	for role, a := range s.Artifacts {
		if a.Handle == nil {
			continue
		}
		if snap.Artifacts == nil {
			snap.Artifacts, snap.Files = map[string]string{}, map[string]string{}
		}
		snap.Artifacts[role] = a.Handle.ID
		if a.Handle.HostPath == "" {
			continue
		}
		if name, err := r.keepFile(role, s.SnapshotKey, a.Handle.HostPath); err == nil {
			snap.Files[role] = name
		}
	}
	return r.Append(KindSnapshotCompared, snap)
}

// unsafe is the runs of bytes keepFile replaces in a file's name;
// compiled on first use (docs/performance.md, "Start-up").
var unsafe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`[^A-Za-z0-9._-]+`) })

// keepFile copies an image into the run's files and returns its name.
func (r *Recorder) keepFile(role, key, src string) (string, error) {
	r.mu.Lock()
	r.files++
	n := r.files
	r.mu.Unlock()
	name := fmt.Sprintf("%03d-%s-%s", n, role, unsafe().ReplaceAllString(filepath.Base(key), "_"))
	in, err := os.Open(src)
	if err != nil {
		return "", err
	}
	defer in.Close()
	fi, err := in.Stat()
	if err != nil {
		return "", err
	}
	size := min(fi.Size(), MaxFileBytes)
	r.mu.Lock()
	over := r.fileBytes+size > MaxRunFileBytes
	if !over {
		r.fileBytes += size
	}
	r.mu.Unlock()
	if over {
		return "", fmt.Errorf("run %s keeps at most %d bytes of images", r.id, MaxRunFileBytes)
	}
	if err := r.s.sql.putFile(context.Background(), r.s.exec, r.id, name, in, MaxFileBytes); err != nil {
		return "", err
	}
	return name, nil
}

// outputOf is the output of a flow's report.
func outputOf(rep *flow.Report) *Output {
	o := &Output{OK: rep.OK, Passed: rep.Passed, Failed: rep.Failed, Errored: rep.Errored, Skipped: rep.Skipped, DurationMs: rep.DurationMs}
	for _, st := range rep.Steps {
		if st.SnapshotKey == "" {
			continue
		}
		if len(o.Snapshots) == MaxOutputSnapshots {
			o.MoreSnapshots++
			continue
		}
		o.Snapshots = append(o.Snapshots, SnapshotOutcome{Step: st.Index, Flow: fault.Clip(st.Flow, MaxNameBytes), Key: fault.Clip(st.SnapshotKey, MaxNameBytes), Status: st.Status, Outcome: flow.SnapshotOutcome(st)})
	}
	return o
}

// End ends the run with the flow's report, or the error that kept it
// from one; cause is the run context's cause (context.Cause), which tells
// an abandoned run and a stopped server from a failure. A flow that ran
// to its end completes, its checks passed or not; one that could not run
// (Chromium died, the flow was refused) fails with the reason. An
// internal fault (fault.Error.Internal) is recorded as InternalReason:
// the caller logs it. A run a resume can re-drive that the server stopped
// under stays running, with a RunInterrupted event. It is idempotent: the
// first end stands. Then the oldest runs beyond the store's keep go.
func (r *Recorder) End(rep *flow.Report, err, cause error) error {
	r.mu.Lock()
	if r.ended {
		r.mu.Unlock()
		return nil
	}
	r.ended = true
	r.mu.Unlock()
	defer r.s.forget(r.id)
	if errors.Is(cause, ErrStopping) && r.resumable {
		return r.detach()
	}
	st := Status{State: Failed}
	r.mu.Lock()
	storeLost := r.storeLost
	r.mu.Unlock()
	switch {
	case errors.Is(cause, ErrStopping):
		st.Error = "the tool-server stopped while the run was going on"
	case storeLost != nil:
		st.Error = fault.Clip(storeLost.Error(), MaxReasonBytes)
	case rep != nil && rep.InfrastructureError() != nil:
		st.Error = fault.Clip(rep.InfrastructureError().Error(), MaxReasonBytes)
	case rep != nil:
		st = Status{State: Completed, Output: outputOf(rep)}
	case err != nil:
		st.Error = reasonOf(err)
	default:
		st.Error = "the run ended with no report"
	}
	end, ferr := r.s.finish(context.Background(), r.id, st, r.s.token)
	if ferr != nil {
		// Not recorded: lost to another process, or the store away for
		// good; the followers look in the store.
		r.untail(nil, nil)
		if errors.Is(ferr, errNotRunning) {
			return nil
		}
		return ferr
	}
	r.untail(&end, &EndFrame{Status: st})
	r.s.notify()
	return r.s.prune()
}

// detach records that the server stopped under the run and leaves it
// running with no driver, for a resume.
func (r *Recorder) detach() error {
	reason := "the tool-server stopped while the run was going on; resume it (POST /v1/runs/{id}/resume, or serve --resume-interrupted) to run it again"
	b, _ := json.Marshal(map[string]string{"reason": reason})
	var seq, now int64
	err := r.s.inTx(context.Background(), func(t txn) error {
		now = time.Now().UnixMilli()
		err := t.row(`UPDATE runs SET event_count = event_count + 1, last_at = ?, owner = NULL, lease_until = NULL WHERE id = ? AND owner = ? AND status = ? RETURNING event_count - 1`,
			now, r.id, r.s.token, Running).Scan(&seq)
		if err != nil {
			return err
		}
		if _, err := t.exec(`INSERT INTO events (run_id, seq, recorded_at, kind, payload) VALUES (?, ?, ?, ?, ?)`, r.id, seq, now, KindRunInterrupted, string(b)); err != nil {
			return err
		}
		return t.changed(r.id)
	})
	if err != nil {
		r.untail(nil, nil)
		if errors.Is(err, sql.ErrNoRows) {
			return nil // no longer this process's run
		}
		return err
	}
	ev := recorded(r.id, seq, now, KindRunInterrupted, b)
	r.untail(&ev, &EndFrame{Status: Status{State: Running}, Detached: true})
	r.s.notify()
	return nil
}

// newUUID is a random (version 4) UUID.
func newUUID() string {
	var b [16]byte
	rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}
