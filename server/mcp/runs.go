package mcp

import (
	"context"
	"errors"

	"github.com/toolserver/toolserver/fault"
	"github.com/toolserver/toolserver/runs"
	"github.com/toolserver/toolserver/tool"
)

// Runs is the run store the tools list_runs and get_run read. Its values
// are sent as JSON.
//
// An error that is a *fault.Error reaches the agent with its message (an
// unknown id: kind not_found); any other error is an internal fault,
// logged, and the agent gets a generic message naming the log line.
type Runs interface {
	// List returns the runs newest first, at most limit (1..MaxRunsLimit)
	// of them, only those of status when it is not "".
	List(ctx context.Context, status string, limit int) (any, error)
	// Get returns the run id with its summary and steps.
	Get(ctx context.Context, id string) (any, error)
}

// RunStatuses are the statuses list_runs filters on.
var RunStatuses = runs.States

// StoreRuns is a run store as Runs: the /v1 shapes, an unknown run a
// not-found tool error the agent reads.
func StoreRuns(st *runs.Store) Runs { return storeRuns{st} }

type storeRuns struct{ st *runs.Store }

func (s storeRuns) List(ctx context.Context, status string, limit int) (any, error) {
	list, err := s.st.List(ctx, runs.Filter{Status: status, Limit: limit})
	if err != nil {
		return nil, err
	}
	return map[string]any{"runs": list}, nil
}

func (s storeRuns) Get(ctx context.Context, id string) (any, error) {
	d, err := s.st.Get(ctx, id)
	if errors.Is(err, runs.ErrUnknownRun) {
		return nil, &fault.Error{Kind: fault.NotFound, Message: err.Error()}
	}
	return d, err
}

// The bounds of list_runs's limit: its default is GET /v1/runs's and
// runs list's (docs/control-plane.md, "Listing and reading runs").
const (
	DefaultRunsLimit = 50
	MaxRunsLimit     = 500
)

// runsRegistry holds list_runs and get_run over runs, so that they are
// called, validated and answered as the registry's own tools are.
func runsRegistry(runs Runs) *tool.Registry {
	reg := tool.NewRegistry()
	limit := tool.Integer("How many runs at most, newest first.", 1, MaxRunsLimit)
	limit.Default = DefaultRunsLimit
	reg.Add(&tool.Tool{
		Name:        "list_runs",
		Description: "List the flow runs this tool-server recorded, newest first: id, flow, device, status, labels, timestamps.",
		InputSchema: tool.Object(map[string]*tool.Schema{
			"status": tool.Enum("Only the runs with this status.", RunStatuses...),
			"limit":  limit,
		}),
		Run: func(ctx context.Context, call *tool.Call) (any, error) {
			a, err := tool.Decode[struct {
				Status string `json:"status"`
				Limit  int    `json:"limit"`
			}](call)
			if err != nil {
				return nil, err
			}
			if a.Limit == 0 {
				a.Limit = DefaultRunsLimit
			}
			return runs.List(ctx, a.Status, a.Limit)
		},
	})
	id := tool.String("The run's id.")
	one := 1
	id.MinLength = &one
	reg.Add(&tool.Tool{
		Name:        "get_run",
		Description: "Get one flow run by its id (list_runs gives them): its status, summary and steps.",
		InputSchema: tool.Object(map[string]*tool.Schema{
			"id": id,
		}, "id"),
		Run: func(ctx context.Context, call *tool.Call) (any, error) {
			a, err := tool.Decode[struct {
				ID string `json:"id"`
			}](call)
			if err != nil {
				return nil, err
			}
			return runs.Get(ctx, a.ID)
		},
	})
	return reg
}
