package client_test

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/toolserver/toolserver/link/client"
	"github.com/toolserver/toolserver/wire"
)

func baselineMember(p string) wire.Member {
	return wire.Member{Role: wire.RoleBaseline, Key: p, Path: p}
}

func toolMember(p string) wire.Member {
	return wire.Member{Role: wire.RoleTool, Key: p, Path: p}
}

// membersOf returns the members of role, re-encoded in the order sent.
func membersOf(t *testing.T, in map[string]json.RawMessage, role string) json.RawMessage {
	t.Helper()
	var all []json.RawMessage
	if err := json.Unmarshal(in["members"], &all); err != nil {
		t.Fatal(err)
	}
	out := []json.RawMessage{}
	for _, raw := range all {
		var m struct{ Role string }
		json.Unmarshal(raw, &m)
		if m.Role == role {
			out = append(out, raw)
		}
	}
	b, _ := json.Marshal(out)
	return b
}

// TestBaselineSelection: a compare run sends the bytes of <name>__*.png
// for the flow's and its fragments' snapshot names, of one platform for a
// chromium-cdp- device or a platform argument; an update run lists every
// .png of the directory by name.
func TestBaselineSelection(t *testing.T) {
	f := newFixture(t)
	f.put("main.yaml", "steps:\n  - snapshot: home\n  - run: frag\n")
	f.put("frag.yaml", "steps:\n  - snapshot: card\n")
	dir := filepath.Join(f.flows, "__baselines__", "main")
	files := map[string]string{}
	for _, n := range []string{"card__chromium-1x1.png", "home__chromium-1x1.png", "home__ios-1x1.png", "homepage__chromium-1x1.png", "other__chromium-1x1.png", "notes.txt"} {
		files[n] = "bytes of " + n
		f.put(filepath.Join(dir, n), files[n])
	}
	sent := func(n string) wire.Member { return withBytes(baselineMember(filepath.Join(dir, n)), files[n]) }
	listedAs := func(n string) wire.Member {
		return stateOf(baselineMember(filepath.Join(dir, n)), wire.StateListed, "")
	}
	for _, tc := range []struct {
		name string
		args map[string]any
		want []wire.Member
	}{
		{"compare", nil, []wire.Member{sent("card__chromium-1x1.png"), sent("home__chromium-1x1.png"), sent("home__ios-1x1.png")}},
		{"compare on a chromium device", map[string]any{"device": "chromium-cdp-1x1"}, []wire.Member{sent("card__chromium-1x1.png"), sent("home__chromium-1x1.png")}},
		{"compare on a platform", map[string]any{"platform": "ios"}, []wire.Member{sent("home__ios-1x1.png")}},
		{"update", map[string]any{"updateBaselines": true}, []wire.Member{
			listedAs("card__chromium-1x1.png"), listedAs("home__chromium-1x1.png"), listedAs("home__ios-1x1.png"),
			listedAs("homepage__chromium-1x1.png"), listedAs("other__chromium-1x1.png")}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newStub(t)
			in := f.run(s, "main.yaml", tc.args, client.CallOptions{})
			assertJSON(t, "baselines", membersOf(t, in, wire.RoleBaseline), tc.want)
		})
	}
}

// TestBaselineRefusals: the client policy with PNG in place of YAML; a
// link to nothing is missing in a compare and refused in an update.
func TestBaselineRefusals(t *testing.T) {
	f := newFixture(t)
	f.put("main.yaml", "steps:\n  - snapshot: home\n")
	dir := filepath.Join(f.flows, "__baselines__", "main")
	f.put(filepath.Join(f.proj, "secret.env"), "TOKEN=1\n")
	f.put(filepath.Join(f.root, "outside", "o.png"), "png")
	f.put(filepath.Join(dir, "home__chromium-1x1.png"), "png1")
	f.link(filepath.Join(dir, "home__chromium-2x2.png"), "nothing.png")
	f.link(filepath.Join(dir, "home__chromium-3x3.png"), "../../../../secret.env")
	f.link(filepath.Join(dir, "home__chromium-4x4.png"), filepath.Join(f.root, "outside", "o.png"))
	f.mkdir(filepath.Join(dir, "home__chromium-5x5.png"))
	f.link(filepath.Join(dir, "x__chromium-1x1.png"), "nothing.png")
	p := func(n string) string { return filepath.Join(dir, n) }
	notPNG := stateOf(baselineMember(p("home__chromium-3x3.png")), wire.StateRefused, p("home__chromium-3x3.png")+" links to a file that is not a PNG file")
	outside := stateOf(baselineMember(p("home__chromium-4x4.png")), wire.StateRefused, p("home__chromium-4x4.png")+" is outside every root this client serves ("+f.proj+")")
	isDir := stateOf(baselineMember(p("home__chromium-5x5.png")), wire.StateRefused, "EISDIR: illegal operation on a directory, read")
	for _, tc := range []struct {
		name string
		args map[string]any
		want []wire.Member
	}{
		{"compare", nil, []wire.Member{
			withBytes(baselineMember(p("home__chromium-1x1.png")), "png1"),
			stateOf(baselineMember(p("home__chromium-2x2.png")), wire.StateMissing, ""),
			notPNG, outside, isDir,
		}},
		{"update", map[string]any{"updateBaselines": true}, []wire.Member{
			stateOf(baselineMember(p("home__chromium-1x1.png")), wire.StateListed, ""),
			stateOf(baselineMember(p("home__chromium-2x2.png")), wire.StateRefused, p("home__chromium-2x2.png")+" is a symbolic link to a missing file"),
			notPNG, outside, isDir,
			stateOf(baselineMember(p("x__chromium-1x1.png")), wire.StateRefused, p("x__chromium-1x1.png")+" is a symbolic link to a missing file"),
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newStub(t)
			in := f.run(s, "main.yaml", tc.args, client.CallOptions{})
			assertJSON(t, "baselines", membersOf(t, in, wire.RoleBaseline), tc.want)
		})
	}
}

// TestNestedBaselines: a nested run has its own directory keyed by the
// step's name; it updates when its step says so, or when the step is
// silent and the run that starts it updates; the call's platform filter
// applies to it.
func TestNestedBaselines(t *testing.T) {
	f := newFixture(t)
	f.put("main.yaml", fmt.Sprintf(`steps:
  - snapshot: home
  - tool: flow-execute
    args: { name: nestu, project_root: %[1]s, updateBaselines: true }
  - tool: flow-execute
    args: { name: nestc, project_root: %[1]s, device: chromium-cdp-9x9, platform: ios }
  - tool: flow-execute
    args: { name: nestf, project_root: %[1]s, updateBaselines: false }
`, f.proj))
	f.put("nestu.yaml", "steps:\n  - snapshot: a\n")
	f.put("nestc.yaml", "steps:\n  - snapshot: b\n")
	f.put("nestf.yaml", "steps:\n  - snapshot: c\n")
	base := filepath.Join(f.flows, "__baselines__")
	p := func(rel string) string { return filepath.Join(base, rel) }
	for _, rel := range []string{"main/home__chromium-1x1.png", "nestu/a__chromium-1x1.png", "nestu/old.png", "nestc/b__chromium-1x1.png", "nestc/b__ios-1x1.png", "nestf/c__chromium-1x1.png", "nestf/c__ios-1x1.png"} {
		f.put(p(rel), rel)
	}
	sent := func(rel string) wire.Member { return withBytes(baselineMember(p(rel)), rel) }
	listedAs := func(rel string) wire.Member { return stateOf(baselineMember(p(rel)), wire.StateListed, "") }
	for _, tc := range []struct {
		name string
		args map[string]any
		want []wire.Member
	}{
		{"compare call", map[string]any{"device": "chromium-cdp-1x1"}, []wire.Member{
			sent("main/home__chromium-1x1.png"),
			listedAs("nestu/a__chromium-1x1.png"), listedAs("nestu/old.png"),
			sent("nestc/b__chromium-1x1.png"),
			sent("nestf/c__chromium-1x1.png"),
		}},
		{"update call", map[string]any{"device": "chromium-cdp-1x1", "updateBaselines": true}, []wire.Member{
			listedAs("main/home__chromium-1x1.png"),
			listedAs("nestu/a__chromium-1x1.png"), listedAs("nestu/old.png"),
			listedAs("nestc/b__chromium-1x1.png"), listedAs("nestc/b__ios-1x1.png"),
			sent("nestf/c__chromium-1x1.png"),
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newStub(t)
			in := f.run(s, "main.yaml", tc.args, client.CallOptions{})
			assertJSON(t, "baselines", membersOf(t, in, wire.RoleBaseline), tc.want)
		})
	}
}

// TestSharedBaselineDirectory: a directory that one run compares and
// another updates sends the bytes of each file the comparing run reads
// and every other .png by name.
func TestSharedBaselineDirectory(t *testing.T) {
	f := newFixture(t)
	s := newStub(t)
	f.put("main.yaml", fmt.Sprintf("steps:\n  - snapshot: home\n  - tool: flow-execute\n    args: { name: main, project_root: %s, updateBaselines: true }\n", f.proj))
	dir := filepath.Join(f.flows, "__baselines__", "main")
	f.put(filepath.Join(dir, "home__chromium-1x1.png"), "home")
	f.put(filepath.Join(dir, "other.png"), "other")
	in := f.run(s, "main.yaml", nil, client.CallOptions{})
	assertJSON(t, "baselines", membersOf(t, in, wire.RoleBaseline), []wire.Member{
		withBytes(baselineMember(filepath.Join(dir, "home__chromium-1x1.png")), "home"),
		stateOf(baselineMember(filepath.Join(dir, "other.png")), wire.StateListed, ""),
	})
}

// TestBaselineKeyFallback: a flow file whose stem is not a flow name keys
// its baselines by the stem of the path the call spelled.
func TestBaselineKeyFallback(t *testing.T) {
	f := newFixture(t)
	s := newStub(t)
	f.put("main.v2.yaml", "steps:\n  - snapshot: home\n")
	f.link("nice.yaml", "main.v2.yaml")
	dir := filepath.Join(f.flows, "__baselines__", "nice")
	f.put(filepath.Join(dir, "home__chromium-1x1.png"), "home")
	in := f.run(s, "nice.yaml", nil, client.CallOptions{})
	assertJSON(t, "canonical", in["canonical"], filepath.Join(f.flows, "main.v2.yaml"))
	assertJSON(t, "baselines", membersOf(t, in, wire.RoleBaseline), []wire.Member{
		withBytes(baselineMember(filepath.Join(dir, "home__chromium-1x1.png")), "home"),
	})
}

// TestToolFiles: the file arguments of tool: steps, in every when: block:
// declared inputs whose path is only the argument, absolute, .png or
// .yaml in any case; each path once; an input whose unwrapWhenSet
// argument is set is skipped; no other argument is sent; a tool file
// stands for a baseline with the same path.
func TestToolFiles(t *testing.T) {
	f := newFixture(t)
	s := newStub(t)
	shots := filepath.Join(f.proj, "shots")
	a := f.put(filepath.Join(shots, "a.png"), "A")
	b := f.put(filepath.Join(shots, "b.PNG"), "B")
	f.put(filepath.Join(shots, "c.png"), "C")
	f.put(filepath.Join(f.proj, "secret.env"), "TOKEN=1\n")
	env := f.link(filepath.Join(shots, "env.png"), "../secret.env")
	out := f.put(filepath.Join(f.root, "outside", "o.png"), "O")
	f.mkdir(filepath.Join(shots, "d.png"))
	base := f.put(filepath.Join(f.flows, "__baselines__", "main", "home__chromium-1x1.png"), "H")
	f.put("main.yaml", fmt.Sprintf(`steps:
  - snapshot: home
  - tool: img-compare
    args: { baselinePath: %[1]s/a.png, currentPath: %[1]s/b.PNG, outputDir: %[1]s/out.png }
  - when: { visible: a }
    steps:
      - tool: img-compare
        args: { baselinePath: shots/a.png, composite: x.png, dir: %[1]s, file: c.png }
      - tool: img-compare
        args: { baselinePath: %[1]s/a.png }
  - tool: img-compare
    args: { currentPath: %[1]s/c.png, inline: true }
  - tool: keyboard
    args: { text: %[1]s/c.png }
  - tool: img-compare
    args: { baselinePath: %[1]s/missing.png }
  - tool: img-compare
    args: { baselinePath: %[2]s }
  - tool: img-compare
    args: { baselinePath: %[3]s }
  - tool: img-compare
    args: { baselinePath: %[1]s/d.png }
  - tool: img-compare
    args: { baselinePath: %[1]s/notes.txt }
  - tool: img-compare
    args: { baselinePath: %[4]s }
`, shots, out, env, base))
	in := f.run(s, "main.yaml", nil, client.CallOptions{})
	assertJSON(t, "tool files", membersOf(t, in, wire.RoleTool), []wire.Member{
		withBytes(toolMember(a), "A"),
		withBytes(toolMember(b), "B"),
		stateOf(toolMember(filepath.Join(shots, "missing.png")), wire.StateMissing, ""),
		stateOf(toolMember(out), wire.StateRefused, out+" is outside every root this client serves ("+f.proj+")"),
		stateOf(toolMember(env), wire.StateRefused, env+" links to a file that is not one of .png, .yaml"),
		stateOf(toolMember(filepath.Join(shots, "d.png")), wire.StateRefused, "EISDIR: illegal operation on a directory, read"),
		withBytes(toolMember(base), "H"),
	})
	// The tool member stands for the baseline with the same path.
	assertJSON(t, "baselines", membersOf(t, in, wire.RoleBaseline), []wire.Member{})
}
