package control

import (
	"context"
	"fmt"

	"github.com/toolserver/toolserver/fault"
	"github.com/toolserver/toolserver/flow"
	"github.com/toolserver/toolserver/runs"
	"github.com/toolserver/toolserver/tool"
	"github.com/toolserver/toolserver/wire"
)

// The recording of a flow-execute call. New wraps the tool once, as the
// house is wired, so a call from /tools, MCP or the plane's own drive is
// recorded alike: the run starts (or is the one the plane started for
// it), the call runs in the run's context (an abandonment or a stop
// cancels it), the tool's progress feeds the run (its step reports, and
// the notes tool.FlowNamed and tool.DeviceHeld), and the run ends with
// the call's report or error.

// drivenKey carries the recorder of a run the plane started (a POST
// /v1/runs, a resume, a take-over) from drive to the wrapper.
type drivenKey struct{}

// insideKey marks a call inside a recorded run: a flow-execute nested in
// it (a tool: step) is part of that run, not a run of its own.
type insideKey struct{}

// record is the wrapper of flow-execute's handler.
func (p *Plane) record(next tool.Handler) tool.Handler {
	return func(ctx context.Context, call *tool.Call) (any, error) {
		if ctx.Value(insideKey{}) != nil {
			return next(ctx, call)
		}
		rec, _ := ctx.Value(drivenKey{}).(*runs.Recorder)
		if rec == nil {
			var err error
			rec, err = p.cfg.Runs.Start(ctx, runs.Begin{Flow: wire.ReadExecute(call.Args).FlowName(), Linked: call.Linked || call.Values[tool.SentMembers] == true, Source: "tools"})
			if err != nil {
				return nil, fmt.Errorf("run store: %w", err)
			}
		}
		ctx, cancel := rec.Bind(context.WithValue(ctx, insideKey{}, true))
		defer cancel(nil)
		call.Observe(func(v any) {
			switch v := v.(type) {
			case flow.StepReport:
				rec.Step(v)
			case tool.FlowNamed:
				if v.Name != "" {
					rec.SetFlow(v.Name)
				}
			case tool.DeviceHeld:
				rec.SetDevice(v.Device)
			}
		})
		res, err := next(ctx, call)
		rep, _ := res.(*flow.Report)
		why := err
		if rep == nil && err == nil {
			// The call's answer is the prerequisite's notice; only the
			// record says why the flow did not run.
			why = &fault.Error{Kind: fault.Validation, Field: wire.ArgPrerequisiteAcknowledged, Message: "not run: the flow has an execution prerequisite the call did not acknowledge"}
		}
		if eerr := rec.End(rep, why, context.Cause(ctx)); eerr != nil && err == nil {
			return res, fmt.Errorf("run store: %w", eerr)
		}
		return res, err
	}
}
