package runs

import (
	"context"
	"fmt"
)

// Service is the runs as every front end reads and drives them: the /v1
// routes (package server), MCP's run tools (server/mcp) and the runs
// commands take one, over a store here (control.Plane) or over a
// tool-server's /v1 (runs/v1's Client). Its errors are the table's
// (errors.go), so a caller branches alike on a local store and a remote
// one.
type Service interface {
	// List is a page of runs, newest first (GET /v1/runs).
	List(ctx context.Context, f Filter) (Page, error)
	// Run is a run as a list shows it, without its steps: what a verb's
	// dry run or a page of events needs, read without the run's log.
	Run(ctx context.Context, id string) (Run, error)
	// Get is a run with its steps and snapshots (GET /v1/runs/{id}).
	Get(ctx context.Context, id string) (*Detail, error)
	// Events are a run's events from seq from on, as recorded when it
	// is asked, in order.
	Events(ctx context.Context, id string, from int64) ([]Event, error)
	// FollowEvents hands each of a run's events from seq from on to
	// each, in order, until the run has ended or no driver runs it, and
	// returns its end frame (GET /v1/runs/{id}/events).
	FollowEvents(ctx context.Context, id string, from int64, each func(Event) error) (EndFrame, error)
	// Replay is the pure fold of a run's log (GET /v1/runs/{id}/replay).
	Replay(ctx context.Context, id string) (Replay, error)
	// Start checks a run request and starts its run (POST /v1/runs); a
	// request it refuses creates no run.
	Start(ctx context.Context, req StartRequest) (Started, error)
	// Abandon retires a run that is not terminal (POST
	// /v1/runs/{id}/abandon).
	Abandon(ctx context.Context, id, reason string) (Receipt, error)
	// Resume re-drives a run no driver runs (outcome ResumeDriving), or
	// reports a finished one's state (POST /v1/runs/{id}/resume).
	Resume(ctx context.Context, id string) (Resumed, error)
}

// The verdicts of WouldResume.
const (
	// WouldLeave is a finished run: a resume leaves it alone and
	// reports its state.
	WouldLeave = "leave"
	// WouldKeep is a run a driver runs: a resume changes nothing.
	WouldKeep = "keep"
	// WouldRefuse is a run with no driver whose arguments are not
	// recorded (a /tools call's): it cannot be re-driven.
	WouldRefuse = "refuse"
	// WouldRedrive is a run with no driver that a resume re-drives from
	// its flow's first step, as a new attempt.
	WouldRedrive = "redrive"
)

// Resumption is what a resume would do to a run as read: its verdict,
// and the attempt a re-drive would be.
type Resumption struct {
	Verdict string
	Attempt int
}

// WouldResume is the rule of a resume, over a run as read: a terminal
// run is left alone, a run a driver runs needs nothing, a run of a
// /tools call cannot be re-driven, and any other is re-driven as its
// next attempt. The store's Resume, the control plane and the runs
// resume --dry-run all decide by it.
func WouldResume(r Run) Resumption {
	switch {
	case Terminal(r.Status.State):
		return Resumption{Verdict: WouldLeave}
	case r.Driver == DriverAttached:
		return Resumption{Verdict: WouldKeep}
	case !r.Resumable:
		return Resumption{Verdict: WouldRefuse}
	}
	return Resumption{Verdict: WouldRedrive, Attempt: max(r.Attempt, 1) + 1}
}

// WouldAbandon is the rule of an abandonment, over a run as read: a run
// that is running is abandoned; a terminal one is left alone, which is
// ErrWrongState. The store's Abandon and runs abandon --dry-run decide
// by it.
func WouldAbandon(r Run) error {
	if Terminal(r.Status.State) {
		return fmt.Errorf("%w: run %s is %s; there is nothing left to abandon", ErrWrongState, r.ID, r.Status.State)
	}
	return nil
}
