package client_test

import (
	"encoding/json"
	"path/filepath"
	"slices"
	"testing"

	"github.com/toolserver/toolserver/link/client"
	"github.com/toolserver/toolserver/wire"
)

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
			in := f.run(s, "main.yaml", nil, client.CallOptions{})
			var members []wire.Member
			if err := json.Unmarshal(in["members"], &members); err != nil {
				t.Fatal(err)
			}
			sent := slices.ContainsFunc(members, func(m wire.Member) bool { return m.Role == wire.RoleTool && m.Path == shot })
			if sent != tc.want {
				t.Errorf("client sends %s: got %v, want %v (members %s)", shot, sent, tc.want, in["members"])
			}
			var inputs []wire.FileInput
			for _, e := range stubTools() {
				if e.Name == "img-compare" {
					inputs = e.FileInputs
				}
			}
			looked := slices.Contains(wire.FileArguments(inputs, args), "currentPath")
			if looked != tc.want {
				t.Errorf("server looks up currentPath: got %v, want %v", looked, tc.want)
			}
		})
	}
}
