// Package runstest is test support for the front ends of the runs: a
// runs.Service whose every read and verb answers one error, so that a
// test can walk the run errors' table (runs.Errors) through /v1, MCP or
// the CLI. Only tests import it.
package runstest

import (
	"context"

	"github.com/toolserver/toolserver/runs"
)

// Failing is a runs.Service, and a control plane as the HTTP server takes
// one (with Drain, InFlight and Stop), every read and verb of which
// answers Err.
type Failing struct{ Err error }

var _ runs.Service = Failing{}

// List answers f.Err.
func (f Failing) List(context.Context, runs.Filter) (runs.Page, error) { return runs.Page{}, f.Err }

// Run answers f.Err.
func (f Failing) Run(context.Context, string) (runs.Run, error) { return runs.Run{}, f.Err }

// Get answers f.Err.
func (f Failing) Get(context.Context, string) (*runs.Detail, error) { return nil, f.Err }

// Events answers f.Err.
func (f Failing) Events(context.Context, string, int64) ([]runs.Event, error) { return nil, f.Err }

// FollowEvents answers f.Err.
func (f Failing) FollowEvents(context.Context, string, int64, func(runs.Event) error) (runs.EndFrame, error) {
	return runs.EndFrame{}, f.Err
}

// Replay answers f.Err.
func (f Failing) Replay(context.Context, string) (runs.Replay, error) { return runs.Replay{}, f.Err }

// Start answers f.Err.
func (f Failing) Start(context.Context, runs.StartRequest) (runs.Started, error) {
	return runs.Started{}, f.Err
}

// Abandon answers f.Err.
func (f Failing) Abandon(context.Context, string, string) (runs.Receipt, error) {
	return runs.Receipt{}, f.Err
}

// Resume answers f.Err.
func (f Failing) Resume(context.Context, string) (runs.Resumed, error) { return runs.Resumed{}, f.Err }

// Drain drives nothing, so there is nothing to wait for.
func (f Failing) Drain() <-chan struct{} { return nil }

// InFlight is 0: it drives no run.
func (f Failing) InFlight() int { return 0 }

// Stop has nothing to stop.
func (f Failing) Stop() {}
