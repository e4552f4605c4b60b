package main

import (
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/toolserver/toolserver/runs"
	"github.com/toolserver/toolserver/runs/runstest"
	"github.com/toolserver/toolserver/server"
)

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
			hs := httptest.NewServer(server.New(server.Config{Addr: "127.0.0.1:0", Plane: runstest.Failing{Err: err}}).Handler())
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
