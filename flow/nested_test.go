package flow

import (
	"strings"
	"testing"
)

// TestNestedTarget: the one rule of a nested flow's reference, read from a
// tool: step's arguments; Followable is Target over a link.
func TestNestedTarget(t *testing.T) {
	for _, c := range []struct {
		args                  map[string]any
		linked                bool
		name, dir, file, want string
	}{
		{args: map[string]any{"name": "inner", "project_root": "/p"}, name: "inner", dir: "/p/.argent/flows", file: "inner.yaml"},
		{args: map[string]any{"name": "inner", "project_root": "/p"}, linked: true, name: "inner", dir: "/p/.argent/flows", file: "inner.yaml"},
		{args: map[string]any{"flow_path": "/q/other.yaml"}, name: "other", dir: "/q", file: "other.yaml"},
		{args: map[string]any{"flow_path": "/q/other.yaml"}, linked: true, want: "Invalid flow_path \"/q/other.yaml\""},
		{args: map[string]any{"name": "a", "flow_path": "/q/a.yaml"}, want: "Pass exactly one flow source"},
		{args: map[string]any{"name": 3}, want: "Pass exactly one flow source"},
		{args: map[string]any{"name": "a/b", "project_root": "/p"}, want: "Invalid flow name \"a/b\""},
		{args: map[string]any{"name": "a", "project_root": "/p/../q"}, want: "project_root must be an absolute path"},
	} {
		n := NestedOf(c.args)
		name, dir, file, msg := n.Target(c.linked)
		if c.want != "" {
			if !strings.HasPrefix(msg, c.want) {
				t.Errorf("%v linked %v: got %q, want a message starting %q", c.args, c.linked, msg, c.want)
			}
		} else if msg != "" || name != c.name || dir != c.dir || file != c.file {
			t.Errorf("%v linked %v: got %q %q %q %q, want %q %q %q", c.args, c.linked, name, dir, file, msg, c.name, c.dir, c.file)
		}
		if c.linked {
			if got := n.Followable(); got != (msg == "") {
				t.Errorf("%v: Followable %v, Target over a link %q", c.args, got, msg)
			}
		}
	}
	yes := NestedOf(map[string]any{"updateBaselines": true, "prerequisiteAcknowledged": true})
	if yes.UpdateBaselines == nil || !*yes.UpdateBaselines || !yes.PrerequisiteAcknowledged {
		t.Errorf("got %+v, want updateBaselines and the acknowledgement read", yes)
	}
}
