// Package control owns a run's life: it is the one package that writes a
// run. The Plane starts a run (checked before it exists, then driven in
// the background), resumes one no driver runs, abandons one, takes over
// the runs a fleet's other replicas lost, records every flow-execute call
// as a run (record.go), and stops them all as the process stops. It
// implements runs.Service over a store, for the /v1 surface (package
// server), MCP's run tools and the runs commands alike, so that none of
// them can disagree on what a start refuses or a resume does.
package control

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/toolserver/toolserver/fault"
	"github.com/toolserver/toolserver/flow"
	"github.com/toolserver/toolserver/internal/drain"
	"github.com/toolserver/toolserver/runs"
	"github.com/toolserver/toolserver/tool"
	"github.com/toolserver/toolserver/wire"
)

// Config is what a Plane works with.
type Config struct {
	Runs *runs.Store
	// Tools, when set, are the tools the plane drives runs with: New
	// wraps their flow-execute so that every call of it is recorded as a
	// run. Nil: a plane that reads and abandons, and drives nothing (the
	// runs commands over a store read directly).
	Tools   *tool.Registry
	TempDir string
	Log     *slog.Logger
	// TakeOver, for a store a fleet shares (its PostgreSQL), takes over
	// the runs the other replicas lost, every third of Lease, with
	// MaxAttempts attempts in all (serve over --store). Zero Lease and
	// MaxAttempts: runs.DefaultLease and DefaultMaxAttempts.
	TakeOver    bool
	Lease       time.Duration
	MaxAttempts int
}

// Plane starts, resumes and abandons the runs of a store, records the
// flow-execute calls of its tools, and stops them.
type Plane struct {
	cfg Config
	// base is the context the runs it drives live in; Stop cancels it.
	base   context.Context
	cancel context.CancelCauseFunc
	// wg counts the runs it drives and its take-over watch.
	wg    sync.WaitGroup
	drain drain.Counter
}

var _ runs.Service = (*Plane)(nil)

// errNoDriver is a start or a re-drive asked of a plane with no tools: it
// reads and abandons, and drives nothing.
var errNoDriver = errors.New("this process drives no runs")

// New returns the plane of cfg, with its flow-execute wrapped and, with
// TakeOver over a shared store, its take-over watch started.
func New(cfg Config) *Plane {
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	if cfg.MaxAttempts <= 0 {
		cfg.MaxAttempts = DefaultMaxAttempts
	}
	if cfg.Lease <= 0 {
		cfg.Lease = runs.DefaultLease
	}
	p := &Plane{cfg: cfg}
	p.base, p.cancel = context.WithCancelCause(context.Background())
	if cfg.Tools != nil && cfg.Runs != nil {
		cfg.Tools.Wrap(flow.ToolFlowExecute, p.record)
	}
	if cfg.TakeOver && cfg.Runs != nil && cfg.Runs.Shared() {
		p.wg.Add(1)
		go func() {
			defer p.wg.Done()
			p.WatchLapsed(p.base, cfg.Lease/3, cfg.MaxAttempts)
		}()
	}
	return p
}

// stopping is the refusal of a plane that is stopping.
func stopping(verb string) error {
	return runs.Refuse(runs.ErrUnavailable, "this tool-server is stopping and %s no run; send it to another replica", verb)
}

// List is a page of runs, newest first.
func (p *Plane) List(ctx context.Context, f runs.Filter) (runs.Page, error) {
	return p.cfg.Runs.ListPage(ctx, f)
}

// Run is a run as a list shows it, read without its log.
func (p *Plane) Run(ctx context.Context, id string) (runs.Run, error) {
	return p.cfg.Runs.Run(ctx, id)
}

// Get is a run with its steps and snapshots.
func (p *Plane) Get(ctx context.Context, id string) (*runs.Detail, error) {
	return p.cfg.Runs.Get(ctx, id)
}

// Events are a run's events from seq from on.
func (p *Plane) Events(ctx context.Context, id string, from int64) ([]runs.Event, error) {
	return p.cfg.Runs.Events(ctx, id, from)
}

// FollowEvents hands a run's events to each until it ends or no driver
// runs it (runs.Store.FollowEvents).
func (p *Plane) FollowEvents(ctx context.Context, id string, from int64, each func(runs.Event) error) (runs.EndFrame, error) {
	return p.cfg.Runs.FollowEvents(ctx, id, from, each)
}

// Replay is the pure fold of a run's log.
func (p *Plane) Replay(ctx context.Context, id string) (runs.Replay, error) {
	return p.cfg.Runs.Replay(ctx, id)
}

// Start checks a run request as the run would (its arguments' caps, its
// labels and id, the flow read and parsed), creates the run, and drives
// it in the background. A refused request creates no run.
func (p *Plane) Start(ctx context.Context, req runs.StartRequest) (runs.Started, error) {
	var args map[string]json.RawMessage
	if err := json.Unmarshal(req.ToolArgs, &args); err != nil || args == nil {
		return runs.Started{}, runs.Refuse(runs.ErrBadRequest, "tool_args must be an object: flow-execute's arguments")
	}
	if err := runs.CheckLabels(req.Labels); err != nil {
		return runs.Started{}, runs.Refuse(runs.ErrBadRequest, "labels: %v", err)
	}
	if req.RunID != "" && !runs.ValidID(req.RunID) {
		return runs.Started{}, runs.Refuse(runs.ErrBadRequest, "run_id %.64q is not a UUID", req.RunID)
	}
	a := wire.ReadExecute(args)
	if err := a.Check(); err != nil {
		return runs.Started{}, runs.Refuse(runs.ErrBadRequest, "tool_args: %v", err)
	}
	if p.cfg.Tools == nil {
		return runs.Started{}, errNoDriver
	}
	b := runs.Begin{Flow: a.FlowName(), Linked: a.SentMembers()}
	if err := p.cfg.Tools.Check(ctx, flow.ToolFlowExecute, req.ToolArgs, tool.Options{Linked: b.Linked, TempDir: p.cfg.TempDir}); err != nil {
		if fe := fault.AsError(err); !fe.Internal() {
			msg := fe.Error()
			if fe.Field != "" && !strings.HasPrefix(msg, fe.Field) {
				msg = fe.Field + ": " + msg
			}
			return runs.Started{}, runs.Refuse(runs.ErrBadRequest, "tool_args: %s", msg)
		}
		return runs.Started{}, err
	}
	b.ID, b.Labels, b.Source, b.Args = req.RunID, req.Labels, "v1", compact(req.ToolArgs)
	if !p.drain.Enter() {
		return runs.Started{}, stopping("starts")
	}
	rec, err := p.cfg.Runs.Start(ctx, b)
	if err != nil {
		p.drain.Leave()
		return runs.Started{}, err
	}
	p.drive(rec, b.Args, b.Linked)
	return runs.Started{Run: rec.ID(), Status: runs.Running}, nil
}

// compact is raw without insignificant space, as a run records it.
func compact(raw json.RawMessage) json.RawMessage {
	if b, err := json.Marshal(raw); err == nil {
		return b
	}
	return raw
}

// drive runs flow-execute with args into rec in the background, counted
// in flight (the caller entered), to the run's end: the recording
// wrapper (record.go) finds rec by the plane's own key.
func (p *Plane) drive(rec *runs.Recorder, args json.RawMessage, linked bool) {
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		defer p.drain.Leave()
		ctx := context.WithValue(p.base, drivenKey{}, rec)
		_, err := p.cfg.Tools.Invoke(ctx, flow.ToolFlowExecute, args, tool.Options{Linked: linked, TempDir: p.cfg.TempDir})
		// A call refused before the flow ran ends here; one that ran has
		// ended already, and End keeps its first end. The record shows an
		// internal fault as runs.InternalReason; its detail goes to the
		// log, by the run's id.
		switch {
		case rec.Lost():
			// Another replica took the run over (this one's lease lapsed:
			// it was paused, or cut off from the database), or it was
			// abandoned: the fence stopped this attempt.
			p.cfg.Log.Warn("lost a run to another replica or an abandonment: this replica stopped it and writes nothing more to it", "run", rec.ID())
		case err != nil && fault.AsError(err).Internal():
			p.cfg.Log.Error("internal error in a run", "run", rec.ID(), "err", err)
		}
		rec.End(nil, err, nil)
	}()
}

// Wait waits for the runs the plane drives to end.
func (p *Plane) Wait() { p.wg.Wait() }

// Resume re-drives a run no driver runs: a new attempt of its recorded
// arguments, from the flow's first step (outcome runs.ResumeDriving, as
// for a run driving already). For a finished run the answer reports its
// status, changing nothing.
func (p *Plane) Resume(ctx context.Context, id string) (runs.Resumed, error) {
	run, err := p.cfg.Runs.Run(ctx, id)
	if err != nil {
		return runs.Resumed{}, err
	}
	if runs.WouldResume(run).Verdict == runs.WouldLeave {
		return finished(run), nil
	}
	err = p.resume(ctx, run.ID)
	switch {
	case err == nil, errors.Is(err, runs.ErrAttached):
		return runs.Resumed{Run: run.ID, Outcome: runs.ResumeDriving, Status: json.RawMessage(`"running"`)}, nil
	case errors.Is(err, runs.ErrWrongState):
		// It may have ended between the read and the resume.
		if now, rerr := p.cfg.Runs.Run(ctx, run.ID); rerr == nil && runs.WouldResume(now).Verdict == runs.WouldLeave {
			return finished(now), nil
		}
	}
	return runs.Resumed{}, err
}

// finished is the resume answer of a terminal run.
func finished(run runs.Run) runs.Resumed {
	b, _ := json.Marshal(run.Status)
	return runs.Resumed{Run: run.ID, Outcome: run.Status.State, Status: b}
}

func (p *Plane) resume(ctx context.Context, id string) error {
	return p.redrive(ctx, id, p.cfg.Runs.Resume)
}

// redrive claims run id with claim (a resume, a take-over) and drives it.
func (p *Plane) redrive(ctx context.Context, id string, claim func(context.Context, string) (*runs.Recorder, json.RawMessage, error)) error {
	if p.cfg.Tools == nil {
		return errNoDriver
	}
	if !p.drain.Enter() {
		return stopping("resumes")
	}
	rec, args, err := claim(ctx, id)
	if err != nil {
		p.drain.Leave()
		return err
	}
	var m map[string]json.RawMessage
	json.Unmarshal(args, &m)
	a := wire.ReadExecute(m)
	p.drive(rec, args, a.Check() == nil && a.SentMembers())
	return nil
}

// ResumeInterrupted re-drives every run of the store that is running with
// no driver and can be re-driven (serve --resume-interrupted), and
// returns their ids.
func (p *Plane) ResumeInterrupted(ctx context.Context) ([]string, error) {
	var ids []string
	f := runs.Filter{Status: runs.Running, Limit: 500}
	for {
		page, err := p.cfg.Runs.ListPage(ctx, f)
		if err != nil {
			return ids, err
		}
		for _, run := range page.Runs {
			if runs.WouldResume(run).Verdict != runs.WouldRedrive {
				continue
			}
			if err := p.resume(ctx, run.ID); err != nil {
				if errors.Is(err, runs.ErrAttached) || errors.Is(err, runs.ErrWrongState) {
					continue
				}
				return ids, fmt.Errorf("resuming run %s: %w", run.ID, err)
			}
			ids = append(ids, run.ID)
		}
		if page.NextBefore == "" {
			return ids, nil
		}
		f.Before = page.NextBefore
	}
}

// Abandon retires a run that is not terminal (runs.Store.Abandon).
func (p *Plane) Abandon(ctx context.Context, id, reason string) (runs.Receipt, error) {
	return p.cfg.Runs.Abandon(ctx, id, reason)
}

// DefaultMaxAttempts is how many attempts a run of a fleet gets in all:
// its first, and its take-overs after the replica driving it was lost.
const DefaultMaxAttempts = 3

// TakeOver takes over, once, the runs of a shared store (a fleet's
// PostgreSQL) that nobody drives any more (the replica driving each was
// killed, or paused past its lease, or stopped under it): each is driven
// again here from its first step, as a new attempt, unless it had
// maxAttempts already: then it fails. It returns the runs taken over.
func (p *Plane) TakeOver(ctx context.Context, maxAttempts int) ([]string, error) {
	lapsed, err := p.cfg.Runs.Lapsed(ctx)
	if err != nil {
		return nil, err
	}
	var ids []string
	for _, run := range lapsed {
		switch runs.WouldResume(run).Verdict {
		case runs.WouldLeave, runs.WouldKeep:
			continue
		case runs.WouldRefuse:
			p.cfg.Runs.Fail(ctx, run.ID, "the tool-server driving the run was lost (its lease lapsed); a run of a /tools call cannot be re-driven (its client held its results), so it failed; its events up to then are kept")
			continue
		}
		if max(run.Attempt, 1) >= maxAttempts {
			p.cfg.Runs.Fail(ctx, run.ID, fmt.Sprintf("the run lost the tool-server driving it after %d attempts (its lease lapsed); it is not taken over again (serve --max-attempts)", max(run.Attempt, 1)))
			continue
		}
		switch err := p.redrive(ctx, run.ID, p.cfg.Runs.TakeOver); {
		case err == nil:
			p.cfg.Log.Info("took over a run whose driver was lost", "run", run.ID, "attempt", max(run.Attempt, 1)+1)
			ids = append(ids, run.ID)
		case errors.Is(err, runs.ErrAttached), errors.Is(err, runs.ErrWrongState):
			// Another replica was first, or it ended.
		default:
			return ids, fmt.Errorf("taking over run %s: %w", run.ID, err)
		}
	}
	return ids, nil
}

// WatchLapsed takes over the lapsed runs of a shared store every period
// until ctx ends (serve over --store).
func (p *Plane) WatchLapsed(ctx context.Context, every time.Duration, maxAttempts int) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		if _, err := p.TakeOver(ctx, maxAttempts); err != nil && ctx.Err() == nil {
			p.cfg.Log.Warn("taking over the runs that lost their driver", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
