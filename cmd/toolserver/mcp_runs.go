package main

import (
	"context"
	"errors"

	"github.com/toolserver/toolserver/runs"
	"github.com/toolserver/toolserver/tool"
)

// storeRuns is the run store as the MCP tools list_runs and get_run read
// it (server/mcp's Runs): the /v1 shapes, an unknown run a not-found
// tool error the agent reads.
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
		return nil, &tool.Error{Kind: tool.KindNotFound, Message: err.Error()}
	}
	return d, err
}
