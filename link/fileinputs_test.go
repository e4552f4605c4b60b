package link_test

import (
	"encoding/json"
	"path/filepath"
	"slices"
	"testing"

	"github.com/toolserver/toolserver/link"
	"github.com/toolserver/toolserver/tool"
)

func TestSetFileInputs(t *testing.T) {
	inputs := []tool.FileInput{
		{Target: "baselinePath", Path: "${baselinePath}", Kind: "file"},
		{Target: "outputDir", Path: "${outputDir}", Kind: "probe", Optional: true},
		{Target: "flow_file", Path: "${project_root}/.argent/flows/${name}.yaml", Kind: "file", SkipWhenSet: "flow_path"},
		{Target: "app", Path: "${app}", Kind: "tar-upload"},
		{Target: "currentPath", Path: "${currentPath}", Kind: "file", UnwrapWhenSet: "inline"},
	}
	for _, tc := range []struct {
		args map[string]any
		want []link.SetInput
	}{
		{map[string]any{"baselinePath": "/p/a.PNG"}, []link.SetInput{{"baselinePath", ""}}},
		{map[string]any{"baselinePath": "rel/a.png"}, []link.SetInput{{"baselinePath", "a relative path"}}},
		{map[string]any{"baselinePath": "/p/a.txt"}, []link.SetInput{{"baselinePath", "a file that does not end in .png or .yaml"}}},
		{map[string]any{"baselinePath": 5}, []link.SetInput{{"baselinePath", "not a path"}}},
		{map[string]any{"outputDir": "/tmp"}, []link.SetInput{{"outputDir", "an output directory or a path the tool probes"}}},
		{map[string]any{"name": "x"}, nil}, // the template needs project_root too
		{map[string]any{"name": "x", "project_root": "/p"}, []link.SetInput{{"flow_file", "a path the tool builds from other arguments (${project_root}/.argent/flows/${name}.yaml)"}}},
		{map[string]any{"name": "x", "project_root": "/p", "flow_path": "/p/f.yaml"}, nil},
		{map[string]any{"app": "/p/My.app"}, []link.SetInput{{"app", "an app or directory sent as an upload"}}},
		{map[string]any{"currentPath": "/p/c.png"}, []link.SetInput{{"currentPath", ""}}},
		{map[string]any{"currentPath": "/p/c.png", "inline": true}, nil},
		// A null argument is absent, like an omitted one: as a target, as
		// skipWhenSet and as unwrapWhenSet.
		{map[string]any{"baselinePath": nil}, nil},
		{map[string]any{"name": "x", "project_root": "/p", "flow_path": nil}, []link.SetInput{{"flow_file", "a path the tool builds from other arguments (${project_root}/.argent/flows/${name}.yaml)"}}},
		{map[string]any{"currentPath": "/p/c.png", "inline": nil}, []link.SetInput{{"currentPath", ""}}},
	} {
		got := link.SetFileInputs(inputs, tc.args)
		if !slices.Equal(got, tc.want) {
			t.Errorf("%v: got %v, want %v", tc.args, got, tc.want)
		}
	}
}

// TestNullArgumentBothEnds: the client sends a tool file whose
// unwrapWhenSet argument is null, and the tool-server looks that file up;
// with the argument set, neither does. Both ends decide by the same rule.
func TestNullArgumentBothEnds(t *testing.T) {
	for _, tc := range []struct {
		name   string
		inline any
		want   bool
	}{
		{"null", nil, true},
		{"set", true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			s := newStub(t)
			shot := f.putBytes(filepath.Join(f.proj, "shots", "c.png"), pngBytes(t, 2, 2))
			args := map[string]any{"currentPath": shot, "inline": tc.inline}
			stepArgs, err := json.Marshal(args)
			if err != nil {
				t.Fatal(err)
			}
			f.put("main.yaml", "steps:\n  - tool: img-compare\n    args: "+string(stepArgs)+"\n")
			in := f.run(s, "main.yaml", nil, link.CallOptions{})
			var members []link.Member
			if err := json.Unmarshal(in["members"], &members); err != nil {
				t.Fatal(err)
			}
			sent := slices.ContainsFunc(members, func(m link.Member) bool { return m.Role == link.RoleTool && m.Path == shot })
			if sent != tc.want {
				t.Errorf("client sends %s: got %v, want %v (members %s)", shot, sent, tc.want, in["members"])
			}
			var inputs []tool.FileInput
			for _, e := range stubTools() {
				if e.Name == "img-compare" {
					inputs = e.FileInputs
				}
			}
			looked := slices.Contains(link.FileArguments(inputs, args), "currentPath")
			if looked != tc.want {
				t.Errorf("server looks up currentPath: got %v, want %v", looked, tc.want)
			}
		})
	}
}
