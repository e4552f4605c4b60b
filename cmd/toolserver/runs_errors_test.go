package main

import (
	"context"
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/toolserver/toolserver/runs"
	"github.com/toolserver/toolserver/server"
)

// failingRuns is a control plane whose reads answer err.
type failingRuns struct{ err error }

func (f failingRuns) List(context.Context, runs.Filter) (runs.Page, error) { return runs.Page{}, f.err }
func (f failingRuns) Get(context.Context, string) (*runs.Detail, error)    { return nil, f.err }
func (f failingRuns) Events(context.Context, string, int64) ([]runs.Event, error) {
	return nil, f.err
}

func (f failingRuns) FollowEvents(context.Context, string, int64, func(runs.Event) error) (runs.EndFrame, error) {
	return runs.EndFrame{}, f.err
}
func (f failingRuns) Replay(context.Context, string) (runs.Replay, error) {
	return runs.Replay{}, f.err
}
func (f failingRuns) Start(context.Context, runs.StartRequest) (runs.Started, error) {
	return runs.Started{}, f.err
}

func (f failingRuns) Abandon(context.Context, string, string) (runs.Receipt, error) {
	return runs.Receipt{}, f.err
}
func (f failingRuns) Resume(context.Context, string) (runs.Resumed, error) {
	return runs.Resumed{}, f.err
}
func (f failingRuns) Drain() <-chan struct{} { return nil }
func (f failingRuns) InFlight() int          { return 0 }
func (f failingRuns) Stop()                  {}

// TestRunsExitByTheTable walks every row of the run errors' table over
// /v1: runs get exits 1 for a row that is a result (the run is not in the
// state the verb needs), 2 for the others, and says the server's message.
func TestRunsExitByTheTable(t *testing.T) {
	t.Parallel()
	const id = "11111111-2222-4333-8444-555555555555"
	for _, row := range runs.Errors {
		t.Run(row.Err.Code, func(t *testing.T) {
			t.Parallel()
			err := fmt.Errorf("%w: run %s, as the test has it", row.Err, id)
			hs := httptest.NewServer(server.New(server.Config{Addr: "127.0.0.1:0", Plane: failingRuns{err}}).Handler())
			defer hs.Close()
			want := exitUsage
			if row.Result {
				want = exitFailed
			}
			code, _, stderr := runCLI(t, "runs", "get", id, "--link", hs.URL)
			if code != want || strings.TrimSpace(stderr) != "toolserver: runs get: "+err.Error() {
				t.Errorf("runs get: exit %d, stderr %q; want %d and the server's message", code, stderr, want)
			}
		})
	}
}
