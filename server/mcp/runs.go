package mcp

import (
	"context"

	"github.com/toolserver/toolserver/fault"
	"github.com/toolserver/toolserver/runs"
)

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
func eventPage(ctx context.Context, rs runs.Service, id string, from int64, limit int) (EventPage, error) {
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
		return "", runError(runs.Refuse(runs.ErrBadRequest, "id %.64q is not a run id (a UUID)", id))
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
		return f, runError(runs.Refuse(runs.ErrBadRequest, "%s", err.Error()))
	}
	return f, nil
}

// runError is the tool error of an error of the runs: a run error (its
// row of runs.Errors) with its kind and its /v1 code, named first, as a
// /v1 client reads the envelope; anything else as it is (an internal
// fault, logged, the agent told only where to look).
func runError(err error) error {
	row, ok := runs.ErrorOf(err)
	if !ok {
		return err
	}
	return &fault.Error{Kind: row.Err.Kind, Code: row.Wire, Message: row.Wire + ": " + err.Error()}
}
