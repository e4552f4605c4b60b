package flowtool

import (
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/toolserver/toolserver/wire"
)

// TestExecuteSchemaIsTheArgs: flow-execute's schema declares exactly the
// arguments of wire.ExecuteArgs, and flow-read-prerequisite the ones that
// name the flow.
func TestExecuteSchemaIsTheArgs(t *testing.T) {
	tl := (&Tools{}).execute()
	got := slices.Sorted(maps.Keys(tl.InputSchema.Properties))
	want := slices.Sorted(slices.Values(wire.ExecuteArgNames()))
	if !slices.Equal(got, want) {
		t.Errorf("flow-execute's schema: got %v, want the arguments of wire.ExecuteArgs %v", got, want)
	}
	// Field by field, the schema's type is the field's.
	ty := reflect.TypeFor[wire.ExecuteArgs]()
	for i := range ty.NumField() {
		f := ty.Field(i)
		name := strings.Split(f.Tag.Get("json"), ",")[0]
		ps := tl.InputSchema.Properties[name]
		if !f.IsExported() || ps == nil {
			continue
		}
		ft := f.Type
		if ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		want := map[reflect.Kind]string{reflect.String: "string", reflect.Bool: "boolean", reflect.Struct: "object"}[ft.Kind()]
		if ps.Type != want {
			t.Errorf("%s: the schema's type is %q, the field's %s (want %q)", name, ps.Type, f.Type, want)
		}
	}
	for _, in := range tl.FileInputs {
		if !slices.Contains(wire.ExecuteArgNames(), in.Target) {
			t.Errorf("file input %s: not an argument of wire.ExecuteArgs", in.Target)
		}
	}
	for k := range (&Tools{}).readPrerequisite().InputSchema.Properties {
		if !slices.Contains(wire.ExecuteArgNames(), k) {
			t.Errorf("flow-read-prerequisite's %s: not an argument of wire.ExecuteArgs", k)
		}
	}
}
