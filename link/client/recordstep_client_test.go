package client_test

import (
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/toolserver/toolserver/link/client"
	"github.com/toolserver/toolserver/wire"
)

// TestRecordedStepMembers follows the table of docs/link-protocol.md, "Members
// of a recorded step", with a project_root spelled through a link so that the
// directory of the recording as spelled and its real directory differ.
func TestRecordedStepMembers(t *testing.T) {
	f := newFixture(t)
	plink := f.link(filepath.Join(f.root, "plink"), f.proj)
	lfl := plink + "/.argent/flows"
	fl := f.flows
	rec := "steps: []\n"
	nested := "steps:\n  - run: frag\n  - snapshot: n\n"
	f.put("rec.yaml", rec)
	f.put("nested.yaml", nested)
	f.put("frag.yaml", "steps: []\n")
	a := f.put(filepath.Join(f.proj, "shots", "a.png"), "A")
	base := filepath.Join(fl, "__baselines__", "nested")
	f.put(filepath.Join(base, "n__chromium-1x1.png"), "N")
	f.put(filepath.Join(base, "n__ios-1x1.png"), "I")
	f.put(filepath.Join(f.root, "else", "x.yaml"), "steps: []\n")

	recording := withBytes(flowMember(lfl, "rec.yaml", fl+"/rec.yaml", listed), rec)
	sibling := withBytes(flowMember(fl, "nested.yaml", fl+"/nested.yaml", listed), nested)
	frag := withBytes(flowMember(fl, "frag.yaml", fl+"/frag.yaml", listed), "steps: []\n")
	nBytes := withBytes(baselineMember(filepath.Join(base, "n__chromium-1x1.png")), "N")
	iBytes := withBytes(baselineMember(filepath.Join(base, "n__ios-1x1.png")), "I")
	stepArgs := func(v any) string {
		b, _ := json.Marshal(v)
		return string(b)
	}
	for _, tc := range []struct {
		name string
		args map[string]any
		want []wire.Member
	}{
		{"tool step with a file argument", map[string]any{"command": "img-compare", "args": stepArgs(map[string]any{"baselinePath": a})},
			[]wire.Member{withBytes(toolMember(a), "A")}},
		{"flow-execute by name", map[string]any{"command": "flow-execute", "args": stepArgs(map[string]any{"name": "nested", "project_root": f.proj})},
			[]wire.Member{recording, sibling, frag, nBytes, iBytes}},
		{"flow-execute by name on a platform", map[string]any{"command": "flow-execute", "args": stepArgs(map[string]any{"name": "nested", "project_root": f.proj, "device": "chromium-cdp-1x1"})},
			[]wire.Member{recording, sibling, frag, nBytes}},
		{"flow-execute updating baselines", map[string]any{"command": "flow-execute", "args": stepArgs(map[string]any{"name": "nested", "project_root": f.proj, "updateBaselines": true})},
			[]wire.Member{recording, sibling, frag,
				stateOf(baselineMember(filepath.Join(base, "n__chromium-1x1.png")), wire.StateListed, ""),
				stateOf(baselineMember(filepath.Join(base, "n__ios-1x1.png")), wire.StateListed, "")}},
		{"flow-execute of a flow_path beside the recording", map[string]any{"command": "flow-execute", "args": stepArgs(map[string]any{"flow_path": lfl + "/nested.yaml"})},
			[]wire.Member{recording, withBytes(flowMember(lfl, "nested.yaml", fl+"/nested.yaml", listed), nested), sibling, frag, nBytes, iBytes}},
		{"flow-execute of another flow_path", map[string]any{"command": "flow-execute", "args": stepArgs(map[string]any{"flow_path": filepath.Join(f.root, "else", "x.yaml")})},
			[]wire.Member{recording}},
		{"a step that reads no file", map[string]any{"command": "keyboard", "args": `{"text":"` + a + `"}`}, []wire.Member{}},
		{"a step without args", map[string]any{"command": "img-compare"}, []wire.Member{}},
		{"args that are an object, not its JSON text", map[string]any{"command": "img-compare", "args": map[string]any{"baselinePath": a}}, []wire.Member{}},
		{"args that are not JSON", map[string]any{"command": "img-compare", "args": "{baselinePath"}, []wire.Member{}},
		{"args that are the JSON text of a list", map[string]any{"command": "img-compare", "args": "[1]"}, []wire.Member{}},
		{"an invalid name", map[string]any{"name": "bad name", "command": "img-compare", "args": stepArgs(map[string]any{"baselinePath": a})}, []wire.Member{}},
		{"a relative project_root", map[string]any{"project_root": "proj", "command": "img-compare", "args": stepArgs(map[string]any{"baselinePath": a})}, []wire.Member{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newStub(t)
			args := map[string]any{"name": "rec", "project_root": plink}
			for k, v := range tc.args {
				args[k] = v
			}
			if _, err := s.Client("").Call(t.Context(), "flow-add-step", args, client.CallOptions{}); err != nil {
				t.Fatal(err)
			}
			in := input(t, s, "project_root")
			root, _ := args["project_root"].(string)
			assertJSON(t, "project_root", lastCall(t, s)["project_root"], wantInput{Marker: true, Path: root, Members: &tc.want})
			if len(in) != 3 {
				t.Errorf("project_root: got fields %v, want only __argentFileInput, path and members", in)
			}
			if got := s.Requests("/tools/")[0].Header.Get("Accept"); got != "application/x-ndjson" {
				t.Errorf("Accept: got %q, want a stream for a call with members", got)
			}
		})
	}
}

// TestRecordedStepWritesBaselines: a recorded flow-execute that updates
// baselines takes the baselineWrites of flow-add-step's result.
func TestRecordedStepWritesBaselines(t *testing.T) {
	f := newFixture(t)
	s := newStub(t)
	f.put("rec.yaml", "steps: []\n")
	f.put("nested.yaml", "steps:\n  - snapshot: n\n")
	dst := filepath.Join(f.flows, "__baselines__", "nested", "n__chromium-1x1.png")
	shot := pngBytes(t, 1, 1)
	answerResult(t, s, map[string]any{"message": "Step added", "baselineWrites": []any{directive(dst, b64(shot), "base64")}})
	args := map[string]any{"name": "rec", "project_root": f.proj, "command": "flow-execute",
		"args": `{"name":"nested","project_root":"` + f.proj + `","updateBaselines":true}`}
	res, err := s.Client("").Call(t.Context(), "flow-add-step", args, client.CallOptions{})
	if err != nil {
		t.Fatal(err)
	}
	assertJSON(t, "result", res, map[string]any{"baselineWrites": []any{dst}, "message": "Step added"})
	if got := f.read(dst); got != string(shot) {
		t.Errorf("baseline: got %d bytes, want the PNG of the result", len(got))
	}
}
