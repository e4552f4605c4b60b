package mcp

import (
	"context"
	"errors"
	"fmt"

	"github.com/toolserver/toolserver/control"
	"github.com/toolserver/toolserver/fault"
	"github.com/toolserver/toolserver/runs"
)

// Runs is what the run tools read and do: the run store and the control
// plane over it, in the shapes of /v1 (docs/control-plane.md). Its errors
// are the store's (runs.ErrUnknownRun, runs.ErrWrongState, …) and the
// plane's (*control.Error); the tools turn them into tool errors that
// name the /v1 code.
type Runs interface {
	// List is a page of runs, newest first (GET /v1/runs).
	List(ctx context.Context, f runs.Filter) (runs.Page, error)
	// Get is a run with its steps and snapshots (GET /v1/runs/{id}).
	Get(ctx context.Context, id string) (*runs.Detail, error)
	// Run is a run as a list shows it.
	Run(ctx context.Context, id string) (runs.Run, error)
	// Events are a run's events from seq from on, in order.
	Events(ctx context.Context, id string, from int64) ([]runs.Event, error)
	// Start checks a run request and starts its run (POST /v1/runs); a
	// request it refuses creates no run.
	Start(ctx context.Context, req runs.StartRequest) (runs.Started, error)
	// Abandon retires a run that is not terminal (POST
	// /v1/runs/{id}/abandon).
	Abandon(ctx context.Context, id, reason string) (runs.Receipt, error)
	// Resume re-drives a run no driver runs, or reports a finished one's
	// state (POST /v1/runs/{id}/resume).
	Resume(ctx context.Context, id string) (runs.Resumed, error)
}

// StoreRuns is Runs over a run store and the control plane that drives
// its runs: the store is read, the plane starts, abandons and resumes.
// The plane must be the one the process stops with (serve's: its drain
// then counts the runs an agent starts).
func StoreRuns(st *runs.Store, plane *control.Plane) Runs { return storeRuns{st, plane} }

type storeRuns struct {
	st    *runs.Store
	plane *control.Plane
}

func (s storeRuns) List(ctx context.Context, f runs.Filter) (runs.Page, error) {
	return s.st.ListPage(ctx, f)
}

func (s storeRuns) Get(ctx context.Context, id string) (*runs.Detail, error) {
	return s.st.Get(ctx, id)
}

func (s storeRuns) Run(ctx context.Context, id string) (runs.Run, error) {
	return s.st.Run(ctx, id)
}

func (s storeRuns) Events(ctx context.Context, id string, from int64) ([]runs.Event, error) {
	return s.st.Events(ctx, id, from)
}

func (s storeRuns) Start(ctx context.Context, req runs.StartRequest) (runs.Started, error) {
	return s.plane.Start(ctx, req)
}

func (s storeRuns) Abandon(ctx context.Context, id, reason string) (runs.Receipt, error) {
	return s.plane.Abandon(ctx, id, reason)
}

func (s storeRuns) Resume(ctx context.Context, id string) (runs.Resumed, error) {
	out, _, err := s.plane.Resume(ctx, id)
	return out, err
}

// The bounds of list_runs's limit: its default is GET /v1/runs's and
// runs list's (docs/control-plane.md, "Listing and reading runs").
const (
	DefaultRunsLimit = 50
	MaxRunsLimit     = 500
)

// The bounds of get_run_events's limit.
const (
	DefaultEventsLimit = 100
	MaxEventsLimit     = 1000
)

// EventPage is get_run_events's answer: a page of a run's events (their
// /v1 envelopes) from a cursor, the cursor of the next page, the run's
// status as it was before the events were read, and End when the run is
// terminal and the page holds its last event: nothing follows.
type EventPage struct {
	Events  []runs.Event `json:"events"`
	NextSeq int64        `json:"next_seq"`
	Status  runs.Status  `json:"status"`
	End     bool         `json:"end,omitempty"`
}

// eventPage reads up to limit events of the run id from seq from on. The
// status is read first: a run terminal then has all its events recorded,
// so a page that holds the rest of them is the end.
func eventPage(ctx context.Context, rs Runs, id string, from int64, limit int) (EventPage, error) {
	run, err := rs.Run(ctx, id)
	if err != nil {
		return EventPage{}, err
	}
	evs, err := rs.Events(ctx, run.ID, from)
	if err != nil {
		return EventPage{}, err
	}
	p := EventPage{Events: evs, NextSeq: from, Status: run.Status}
	if len(evs) > limit {
		p.Events = evs[:limit]
	}
	if n := len(p.Events); n > 0 {
		p.NextSeq = p.Events[n-1].Seq + 1
	}
	p.End = runs.Terminal(run.Status.State) && len(evs) <= limit
	return p, nil
}

// checkRunID is id canonical, or a bad request naming it: no run has an
// id that is not a UUID (docs/control-plane.md, "Run ids"), as /v1
// answers one in a path.
func checkRunID(id string) (string, error) {
	if !runs.ValidID(id) {
		return "", refusal(runs.CodeBadRequest, fmt.Sprintf("id %.64q is not a run id (a UUID)", id))
	}
	return runs.CanonicalID(id), nil
}

// listFilter is the filter of list_runs's arguments, checked as GET
// /v1/runs checks its query.
func listFilter(status, outcome string, labels []string, limit int, before string) (runs.Filter, error) {
	if limit == 0 {
		limit = DefaultRunsLimit
	}
	f, err := runs.ParseFilter(status, outcome, labels, limit, before)
	if err != nil {
		return f, refusal(runs.CodeBadRequest, err.Error())
	}
	return f, nil
}

// kindOf is the fault kind of each /v1 code a run tool may answer.
var kindOf = map[string]fault.Kind{
	runs.CodeBadRequest:  fault.Validation,
	runs.CodeUnknownRun:  fault.NotFound,
	runs.CodeRunExists:   fault.Conflict,
	runs.CodeWrongState:  fault.Conflict,
	runs.CodeUnavailable: fault.Unavailable,
}

// refusal is the tool error of a /v1 code: the agent reads the code
// first, then the reason, as a /v1 client reads the envelope.
func refusal(code, message string) error {
	kind, ok := kindOf[code]
	if !ok {
		kind = fault.Conflict
	}
	return &fault.Error{Kind: kind, Code: code, Message: code + ": " + message}
}

// runError is the tool error of an error of Runs: a refusal of the plane
// or of the store with its /v1 code, anything else as it is (an internal
// fault, logged, the agent told only where to look).
func runError(err error) error {
	if ce, ok := errors.AsType[*control.Error](err); ok {
		return refusal(ce.Code, ce.Message)
	}
	for _, c := range []struct {
		err  error
		code string
	}{
		{runs.ErrUnknownRun, runs.CodeUnknownRun},
		{runs.ErrRunExists, runs.CodeRunExists},
		{runs.ErrWrongState, runs.CodeWrongState},
		{runs.ErrAttached, runs.CodeWrongState},
		{runs.ErrBadCursor, runs.CodeBadRequest},
		{runs.ErrBadRequest, runs.CodeBadRequest},
	} {
		if errors.Is(err, c.err) {
			return refusal(c.code, err.Error())
		}
	}
	return err
}
