package wire_test

import (
	"slices"
	"testing"

	"github.com/toolserver/toolserver/wire"
)

func TestSetFileInputs(t *testing.T) {
	inputs := []wire.FileInput{
		{Target: "baselinePath", Path: "${baselinePath}", Kind: "file"},
		{Target: "outputDir", Path: "${outputDir}", Kind: "probe", Optional: true},
		{Target: "flow_file", Path: "${project_root}/.argent/flows/${name}.yaml", Kind: "file", SkipWhenSet: "flow_path"},
		{Target: "app", Path: "${app}", Kind: "tar-upload"},
		{Target: "currentPath", Path: "${currentPath}", Kind: "file", UnwrapWhenSet: "inline"},
	}
	for _, tc := range []struct {
		args map[string]any
		want []wire.SetInput
	}{
		{map[string]any{"baselinePath": "/p/a.PNG"}, []wire.SetInput{{"baselinePath", ""}}},
		{map[string]any{"baselinePath": "rel/a.png"}, []wire.SetInput{{"baselinePath", "a relative path"}}},
		{map[string]any{"baselinePath": "/p/a.txt"}, []wire.SetInput{{"baselinePath", "a file that does not end in .png or .yaml"}}},
		{map[string]any{"baselinePath": 5}, []wire.SetInput{{"baselinePath", "not a path"}}},
		{map[string]any{"outputDir": "/tmp"}, []wire.SetInput{{"outputDir", "an output directory or a path the tool probes"}}},
		{map[string]any{"name": "x"}, nil}, // the template needs project_root too
		{map[string]any{"name": "x", "project_root": "/p"}, []wire.SetInput{{"flow_file", "a path the tool builds from other arguments (${project_root}/.argent/flows/${name}.yaml)"}}},
		{map[string]any{"name": "x", "project_root": "/p", "flow_path": "/p/f.yaml"}, nil},
		{map[string]any{"app": "/p/My.app"}, []wire.SetInput{{"app", "an app or directory sent as an upload"}}},
		{map[string]any{"currentPath": "/p/c.png"}, []wire.SetInput{{"currentPath", ""}}},
		{map[string]any{"currentPath": "/p/c.png", "inline": true}, nil},
		// A null argument is absent, like an omitted one: as a target, as
		// skipWhenSet and as unwrapWhenSet.
		{map[string]any{"baselinePath": nil}, nil},
		{map[string]any{"name": "x", "project_root": "/p", "flow_path": nil}, []wire.SetInput{{"flow_file", "a path the tool builds from other arguments (${project_root}/.argent/flows/${name}.yaml)"}}},
		{map[string]any{"currentPath": "/p/c.png", "inline": nil}, []wire.SetInput{{"currentPath", ""}}},
	} {
		got := wire.SetFileInputs(inputs, tc.args)
		if !slices.Equal(got, tc.want) {
			t.Errorf("%v: got %v, want %v", tc.args, got, tc.want)
		}
	}
}
