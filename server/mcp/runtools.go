package mcp

import (
	"context"
	"encoding/json"

	"github.com/toolserver/toolserver/runs"
	"github.com/toolserver/toolserver/tool"
)

// runsRegistry holds the run tools over rs, so that they are called,
// validated and answered as the registry's own tools are. Each answers
// what its /v1 route answers (docs/control-plane.md), and refuses what
// it refuses, with the same code.
func runsRegistry(rs runs.Service) *tool.Registry {
	reg := tool.NewRegistry()
	for _, t := range []*tool.Tool{
		listRunsTool(rs), getRunTool(rs), getRunEventsTool(rs),
		startRunTool(rs), abandonRunTool(rs), resumeRunTool(rs),
	} {
		reg.Add(t)
	}
	return reg
}

// runIDSchema is the schema of a run's id.
func runIDSchema() *tool.Schema {
	id := tool.String("The run's id, a UUID (list_runs and start_run give them).")
	one := 1
	id.MinLength = &one
	return id
}

// idArg is the arguments of a tool about one run.
type idArg struct {
	ID string `json:"id"`
}

func listRunsTool(rs runs.Service) *tool.Tool {
	limit := tool.Integer("How many runs at most, newest first.", 1, MaxRunsLimit)
	limit.Default = DefaultRunsLimit
	return &tool.Tool{
		Name: "list_runs",
		Description: "List the flow runs this tool-server recorded, newest first, as GET /v1/runs does: " +
			`{"runs": [...], "next_before"?}. Each run has its id (run), status object ({state, output?, error?, reason?}), ` +
			"flow, device, labels, outcome, timestamps. When next_before is set, older runs match: pass it as before for the next page.",
		InputSchema: tool.Object(map[string]*tool.Schema{
			"status":  tool.Enum("Only the runs in this state.", runs.States...),
			"outcome": tool.Enum("Only the completed runs with this outcome.", runs.Outcomes...),
			"label": {Type: "array", Description: `Only the runs with all these labels, each "KEY:VALUE".`,
				Items: tool.String("A label, KEY:VALUE.")},
			"limit":  limit,
			"before": tool.String("A run id (a page's next_before): only the runs older than it."),
		}),
		Run: func(ctx context.Context, call *tool.Call) (any, error) {
			a, err := tool.Decode[struct {
				Status  string   `json:"status"`
				Outcome string   `json:"outcome"`
				Label   []string `json:"label"`
				Limit   int      `json:"limit"`
				Before  string   `json:"before"`
			}](call)
			if err != nil {
				return nil, err
			}
			f, err := listFilter(a.Status, a.Outcome, a.Label, a.Limit, a.Before)
			if err != nil {
				return nil, err
			}
			page, err := rs.List(ctx, f)
			if err != nil {
				return nil, runError(err)
			}
			return page, nil
		},
	}
}

func getRunTool(rs runs.Service) *tool.Tool {
	return &tool.Tool{
		Name: "get_run",
		Description: "Get one flow run by its id, as GET /v1/runs/{id} does: the run (its status object, flow, device, labels, " +
			"driver, outcome) with the steps and snapshots of its last attempt.",
		InputSchema: tool.Object(map[string]*tool.Schema{"id": runIDSchema()}, "id"),
		Run: func(ctx context.Context, call *tool.Call) (any, error) {
			id, err := decodeID(call)
			if err != nil {
				return nil, err
			}
			d, err := rs.Get(ctx, id)
			if err != nil {
				return nil, runError(err)
			}
			return d, nil
		},
	}
}

func getRunEventsTool(rs runs.Service) *tool.Tool {
	zero := 0.0
	from := &tool.Schema{Type: "integer", Description: "The sequence number of the first event to return (a page's next_seq).", Minimum: &zero, Default: 0}
	limit := tool.Integer("How many events at most.", 1, MaxEventsLimit)
	limit.Default = DefaultEventsLimit
	return &tool.Tool{
		Name: "get_run_events",
		Description: "Read a run's event log from a cursor, as GET /v1/runs/{id}/events streams it: " +
			`{"events": [{run_id, seq, schema_version, recorded_at, event: {kind, payload}}...], "next_seq", "status", "end"?}. ` +
			"Call again with from_seq = next_seq to page on through a live run; end is true once the run is terminal and its last event was returned.",
		InputSchema: tool.Object(map[string]*tool.Schema{
			"id":       runIDSchema(),
			"from_seq": from,
			"limit":    limit,
		}, "id"),
		Run: func(ctx context.Context, call *tool.Call) (any, error) {
			a, err := tool.Decode[struct {
				ID      string `json:"id"`
				FromSeq int64  `json:"from_seq"`
				Limit   int    `json:"limit"`
			}](call)
			if err != nil {
				return nil, err
			}
			id, err := checkRunID(a.ID)
			if err != nil {
				return nil, err
			}
			if a.Limit == 0 {
				a.Limit = DefaultEventsLimit
			}
			p, err := eventPage(ctx, rs, id, a.FromSeq, a.Limit)
			if err != nil {
				return nil, runError(err)
			}
			return p, nil
		},
	}
}

func startRunTool(rs runs.Service) *tool.Tool {
	return &tool.Tool{
		Name: "start_run",
		Description: "Start a flow run that goes on in the background, as POST /v1/runs does, and answer at once " +
			`{"run": "<id>", "status": "running"}; follow it with get_run or get_run_events. ` +
			"tool_args are flow-execute's arguments (its input schema); the request is checked first, the flow read and parsed, " +
			"and a request refused (bad_request) creates no run.",
		InputSchema: tool.Object(map[string]*tool.Schema{
			"tool_args": {Type: "object", Description: "flow-execute's arguments, as that tool takes them (name and project_root, or flow_path; device; …)."},
			"labels":    {Type: "object", Description: `The run's labels, {"KEY": "VALUE"}: strings, list_runs filters on them.`},
			"run_id":    tool.String("The run's id, a UUID of the caller's; omitted, the server mints one."),
		}, "tool_args"),
		Run: func(ctx context.Context, call *tool.Call) (any, error) {
			a, err := tool.Decode[struct {
				ToolArgs json.RawMessage   `json:"tool_args"`
				Labels   map[string]string `json:"labels"`
				RunID    string            `json:"run_id"`
			}](call)
			if err != nil {
				return nil, err
			}
			started, err := rs.Start(ctx, runs.StartRequest{ToolArgs: a.ToolArgs, Labels: a.Labels, RunID: a.RunID})
			if err != nil {
				return nil, runError(err)
			}
			return started, nil
		},
	}
}

func abandonRunTool(rs runs.Service) *tool.Tool {
	return &tool.Tool{
		Name: "abandon_run",
		Description: "Abandon a run that is not terminal, as POST /v1/runs/{id}/abandon does: a run this tool-server drives is stopped, " +
			`and the answer is the receipt {"run", "abandoned": true, "appended_seq", "status"}. A terminal run is refused (wrong_state).`,
		InputSchema: tool.Object(map[string]*tool.Schema{
			"id":     runIDSchema(),
			"reason": tool.String("Why, kept in the run's status."),
		}, "id"),
		Run: func(ctx context.Context, call *tool.Call) (any, error) {
			a, err := tool.Decode[struct {
				ID     string `json:"id"`
				Reason string `json:"reason"`
			}](call)
			if err != nil {
				return nil, err
			}
			id, err := checkRunID(a.ID)
			if err != nil {
				return nil, err
			}
			rc, err := rs.Abandon(ctx, id, a.Reason)
			if err != nil {
				return nil, runError(err)
			}
			return rc, nil
		},
	}
}

func resumeRunTool(rs runs.Service) *tool.Tool {
	return &tool.Tool{
		Name: "resume_run",
		Description: "Resume a run left running with no driver (its tool-server stopped under it), as POST /v1/runs/{id}/resume does: " +
			`its recorded arguments run again from the flow's first step, answered {"run", "outcome": "driving", "status": "running"}. ` +
			`A finished run changes nothing: outcome is its state and status its status object.`,
		InputSchema: tool.Object(map[string]*tool.Schema{"id": runIDSchema()}, "id"),
		Run: func(ctx context.Context, call *tool.Call) (any, error) {
			id, err := decodeID(call)
			if err != nil {
				return nil, err
			}
			out, err := rs.Resume(ctx, id)
			if err != nil {
				return nil, runError(err)
			}
			return out, nil
		},
	}
}

// decodeID is the run id of a call's arguments, checked and canonical.
func decodeID(call *tool.Call) (string, error) {
	a, err := tool.Decode[idArg](call)
	if err != nil {
		return "", err
	}
	return checkRunID(a.ID)
}
