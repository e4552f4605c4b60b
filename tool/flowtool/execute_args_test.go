package flowtool

import (
	"maps"
	"slices"
	"testing"

	"github.com/toolserver/toolserver/wire"
)

// TestExecuteSchemaIsTheArgs: flow-execute's schema declares exactly the
// arguments of wire.ExecuteArgs, and flow-read-prerequisite the ones that
// name the flow.
func TestExecuteSchemaIsTheArgs(t *testing.T) {
	tl := (&Tools{}).execute()
	got := slices.Sorted(maps.Keys(tl.InputSchema.Properties))
	want := slices.Sorted(slices.Values(wire.ExecuteArgNames))
	if !slices.Equal(got, want) {
		t.Errorf("flow-execute's schema: got %v, want the arguments of wire.ExecuteArgs %v", got, want)
	}
	for _, in := range tl.FileInputs {
		if !slices.Contains(wire.ExecuteArgNames, in.Target) {
			t.Errorf("file input %s: not an argument of wire.ExecuteArgs", in.Target)
		}
	}
	for k := range (&Tools{}).readPrerequisite().InputSchema.Properties {
		if !slices.Contains(wire.ExecuteArgNames, k) {
			t.Errorf("flow-read-prerequisite's %s: not an argument of wire.ExecuteArgs", k)
		}
	}
}
