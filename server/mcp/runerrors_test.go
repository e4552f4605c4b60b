package mcp_test

import (
	"fmt"
	"testing"

	"github.com/toolserver/toolserver/runs"
	"github.com/toolserver/toolserver/runs/runstest"
	"github.com/toolserver/toolserver/server/mcp"
	"github.com/toolserver/toolserver/tool"
)

// TestRunErrorsTable walks every row of the run errors' table through the
// run tools: each answers a tool error that names the row's /v1 code
// first, then the error, as a /v1 client reads the envelope.
func TestRunErrorsTable(t *testing.T) {
	t.Parallel()
	const id = "11111111-2222-4333-8444-555555555555"
	for _, row := range runs.Errors {
		err := fmt.Errorf("%w: run %s, as the test has it", row.Err, id)
		cs, _ := connect(t, mcp.Config{Tools: tool.NewRegistry(), Version: "test", Runs: runstest.Failing{Err: err}})
		for name, args := range map[string]map[string]any{
			"get_run":        {"id": id},
			"get_run_events": {"id": id},
			"list_runs":      {},
			"start_run":      {"tool_args": map[string]any{}},
			"abandon_run":    {"id": id},
			"resume_run":     {"id": id},
		} {
			if got, want := refused(t, cs, name, args), row.Wire+": "+err.Error(); got != want {
				t.Errorf("%s, %s: got %q, want %q", row.Err.Code, name, got, want)
			}
		}
	}
}
