package tool_test

import (
	"context"
	"testing"

	"github.com/toolserver/toolserver/tool"
)

// TestWrapAndNotes: a wrapper installed with Wrap runs around the tool's
// handler and hears every progress value through Observe; a Note reaches
// it alone, never the call's transport.
func TestWrapAndNotes(t *testing.T) {
	reg := tool.NewRegistry()
	reg.Add(&tool.Tool{Name: "t", Run: func(ctx context.Context, call *tool.Call) (any, error) {
		call.Progress("step")
		call.Progress(tool.DeviceHeld{Device: "d"})
		call.Progress(tool.FlowNamed{Name: "f"})
		return "done", nil
	}})
	var heard []any
	if !reg.Wrap("t", func(next tool.Handler) tool.Handler {
		return func(ctx context.Context, call *tool.Call) (any, error) {
			call.Observe(func(v any) { heard = append(heard, v) })
			res, err := next(ctx, call)
			return "wrapped " + res.(string), err
		}
	}) {
		t.Fatal("Wrap found no tool t")
	}
	if reg.Wrap("none", func(next tool.Handler) tool.Handler { return next }) {
		t.Error("Wrap of a tool the registry does not have: true")
	}
	var sent []any
	res, err := reg.Invoke(t.Context(), "t", nil, tool.Options{Progress: func(v any) { sent = append(sent, v) }})
	if err != nil || res != "wrapped done" {
		t.Fatalf("got %v %v, want the wrapper's answer", res, err)
	}
	if len(sent) != 1 || sent[0] != "step" {
		t.Errorf("the transport got %v, want the step alone", sent)
	}
	if len(heard) != 3 || heard[1] != (tool.DeviceHeld{Device: "d"}) || heard[2] != (tool.FlowNamed{Name: "f"}) {
		t.Errorf("the wrapper heard %v, want the step and both notes", heard)
	}
}
