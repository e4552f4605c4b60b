package client_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolserver/toolserver/link/client"
	"github.com/toolserver/toolserver/link/linktest"
	"github.com/toolserver/toolserver/wire"
)

// TestRunMembers: run: targets in every step and every when: block,
// resolved beside the real file naming them, each (directory, target)
// pair once; keys with the NUL byte; the canonical of a missing file; a
// missing file outside the roots refused, not missing.
func TestRunMembers(t *testing.T) {
	f := newFixture(t)
	s := newStub(t)
	main := "steps:\n  - echo: start\n  - run: frag\n  - when: { visible: a }\n    steps:\n      - run: sub/inner.yaml\n  - run: missing\n  - run: nodir/deep\n  - run: ../../../outside\n  - run: ../../../absent\n"
	frag := "steps:\n  - run: main\n"
	inner := "steps:\n  - run: ../frag.yaml\n"
	f.put("main.yaml", main)
	f.put("frag.yaml", frag)
	f.put("sub/inner.yaml", inner)
	f.put(filepath.Join(f.root, "outside.yaml"), "steps: []\n")
	in := f.run(s, "main.yaml", nil, client.CallOptions{})

	fl, sub := f.flows, filepath.Join(f.flows, "sub")
	roots := f.proj
	want := []wire.Member{
		withBytes(flowMember(fl, "frag.yaml", fl+"/frag.yaml", listed), frag),
		withBytes(flowMember(fl, "sub/inner.yaml", sub+"/inner.yaml", listed), inner),
		stateOf(flowMember(fl, "missing.yaml", fl+"/missing.yaml", &wire.Spelling{State: wire.SpellAbsent}), wire.StateMissing, ""),
		stateOf(flowMember(fl, "nodir/deep.yaml", fl+"/nodir/deep.yaml", listed), wire.StateMissing, ""),
		stateOf(flowMember(fl, "../../../outside.yaml", f.root+"/outside.yaml", listed), wire.StateRefused,
			"../../../outside.yaml is outside every root this client serves ("+roots+")"),
		stateOf(flowMember(fl, "../../../absent.yaml", f.root+"/absent.yaml", &wire.Spelling{State: wire.SpellAbsent}), wire.StateRefused,
			"../../../absent.yaml is outside every root this client serves ("+roots+")"),
		withBytes(flowMember(fl, "main.yaml", fl+"/main.yaml", listed), main),
		withBytes(flowMember(sub, "../frag.yaml", fl+"/frag.yaml", listed), frag),
	}
	assertJSON(t, "members", in["members"], want)
	assertJSON(t, "canonical", in["canonical"], fl+"/main.yaml")
	assertJSON(t, "spelling", in["spelling"], listed)
	// The key holds the NUL byte as JSON's \u0000.
	if !strings.Contains(string(in["members"]), `"key":"`+fl+`\u0000frag.yaml"`) {
		t.Errorf("members: got %s, want a key with \\u0000", in["members"])
	}
}

// TestSpellingStates reads a real directory listing on this
// case-sensitive file system: a name listed with another case is
// case_folded, addressable only when the listed name is a flow file name.
func TestSpellingStates(t *testing.T) {
	f := newFixture(t)
	s := newStub(t)
	f.put("Login.yaml", "steps: []\n")
	f.put("Weird.Yaml", "steps: []\n")
	f.put("main.yaml", "steps:\n  - run: login\n  - run: weird.yaml\n  - run: ghost\n")
	if _, err := os.Stat(filepath.Join(f.flows, "login.yaml")); err == nil {
		t.Fatal("this test needs a case-sensitive file system")
	}
	in := f.run(s, "main.yaml", nil, client.CallOptions{})
	fl := f.flows
	want := []wire.Member{
		stateOf(flowMember(fl, "login.yaml", fl+"/login.yaml", &wire.Spelling{State: wire.SpellCaseFolded, Actual: "Login.yaml", Addressable: ptr(true)}), wire.StateMissing, ""),
		stateOf(flowMember(fl, "weird.yaml", fl+"/weird.yaml", &wire.Spelling{State: wire.SpellCaseFolded, Actual: "Weird.Yaml", Addressable: ptr(false)}), wire.StateMissing, ""),
		stateOf(flowMember(fl, "ghost.yaml", fl+"/ghost.yaml", &wire.Spelling{State: wire.SpellAbsent}), wire.StateMissing, ""),
	}
	assertJSON(t, "members", in["members"], want)
}

// TestPolicyRefusals: the refusal table of docs/link-protocol.md ("Client
// policy"), each with its text; a link to a .yml flow inside the roots is an
// ordinary layout.
func TestPolicyRefusals(t *testing.T) {
	f := newFixture(t)
	s := newStub(t)
	f.put(filepath.Join(f.proj, "secret.env"), "TOKEN=1\n")
	f.link("link.yaml", "../../secret.env")
	f.mkdir("dir.yaml")
	big := f.put("big.yaml", "")
	if err := os.Truncate(big, 33<<20); err != nil {
		t.Fatal(err)
	}
	f.link("loop.yaml", "loop.yaml")
	f.put(filepath.Join(f.root, "elsewhere", "x.yaml"), "steps: []\n")
	f.link("outlink.yaml", filepath.Join(f.root, "elsewhere", "x.yaml"))
	f.put("real.yml", "steps: []\n")
	f.link("yml.yaml", "real.yml")
	f.put("main.yaml", "steps:\n  - run: link\n  - run: dir\n  - run: big\n  - run: loop\n  - run: outlink\n  - run: yml\n")
	in := f.run(s, "main.yaml", nil, client.CallOptions{})
	fl := f.flows
	want := []wire.Member{
		stateOf(flowMember(fl, "link.yaml", f.proj+"/secret.env", listed), wire.StateRefused, "link.yaml links to a file that is not a YAML file"),
		stateOf(flowMember(fl, "dir.yaml", fl+"/dir.yaml", listed), wire.StateRefused, "EISDIR: illegal operation on a directory, read"),
		stateOf(flowMember(fl, "big.yaml", fl+"/big.yaml", listed), wire.StateRefused, fl+"/big.yaml is larger than the 32 MiB cap on a file sent to the tool-server"),
		stateOf(flowMember(fl, "loop.yaml", fl+"/loop.yaml", listed), wire.StateRefused, "ELOOP: too many symbolic links encountered, realpath '"+fl+"/loop.yaml'"),
		stateOf(flowMember(fl, "outlink.yaml", f.root+"/elsewhere/x.yaml", listed), wire.StateRefused, "outlink.yaml is outside every root this client serves ("+f.proj+")"),
		withBytes(flowMember(fl, "yml.yaml", fl+"/real.yml", listed), "steps: []\n"),
	}
	assertJSON(t, "members", in["members"], want)
}

// TestRootsByRealLocation: a project whose .argent/flows is a link to a
// tree elsewhere serves that tree, by its real location.
func TestRootsByRealLocation(t *testing.T) {
	f := newFixture(t)
	s := newStub(t)
	tree := filepath.Join(f.root, "shared", "flows")
	f.put(filepath.Join(tree, "main.yaml"), "steps:\n  - run: frag\n  - run: ../../proj/x\n")
	f.put(filepath.Join(tree, "frag.yaml"), "steps: []\n")
	f.put(filepath.Join(f.proj, "x.yaml"), "steps: []\n")
	if err := os.Remove(f.flows); err != nil {
		t.Fatal(err)
	}
	f.link(f.flows, tree)
	in := f.run(s, "main.yaml", nil, client.CallOptions{})
	want := []wire.Member{
		withBytes(flowMember(tree, "frag.yaml", tree+"/frag.yaml", listed), "steps: []\n"),
		withBytes(flowMember(tree, "../../proj/x.yaml", f.proj+"/x.yaml", listed), "steps: []\n"),
	}
	assertJSON(t, "members", in["members"], want)
	assertJSON(t, "canonical", in["canonical"], tree+"/main.yaml")
}

// TestNestedFlowMembers: a followable tool: flow-execute step is a member
// keyed by <project_root>/.argent/flows as written, whose own members
// resolve beside its real file; a flow_path step and one without an
// absolute project_root are not followed.
func TestNestedFlowMembers(t *testing.T) {
	f := newFixture(t)
	s := newStub(t)
	plink := f.link(filepath.Join(f.root, "plink"), f.proj)
	main := fmt.Sprintf("steps:\n  - tool: flow-execute\n    args: { name: nested, project_root: %s }\n  - tool: flow-execute\n    args: { flow_path: %s/other.yaml }\n  - tool: flow-execute\n    args: { name: other, project_root: rel/p }\n  - tool: flow-execute\n    args: { name: nested, project_root: %s/ }\n", plink, f.flows, f.proj)
	nested := "steps:\n  - run: frag2\n"
	f.put("main.yaml", main)
	f.put("nested.yaml", nested)
	f.put("other.yaml", "steps: []\n")
	f.put("frag2.yaml", "steps: []\n")
	in := f.run(s, "main.yaml", nil, client.CallOptions{})
	fl := f.flows
	lfl := plink + "/.argent/flows"
	want := []wire.Member{
		withBytes(flowMember(lfl, "nested.yaml", fl+"/nested.yaml", listed), nested),
		withBytes(flowMember(fl, "nested.yaml", fl+"/nested.yaml", listed), nested),
		withBytes(flowMember(fl, "frag2.yaml", fl+"/frag2.yaml", listed), "steps: []\n"),
	}
	assertJSON(t, "members", in["members"], want)
}

// TestDepthLimit: the client follows a run: chain to 20 levels.
func TestDepthLimit(t *testing.T) {
	f := newFixture(t)
	s := newStub(t)
	for i := 0; i <= 22; i++ {
		f.put(fmt.Sprintf("c%d.yaml", i), fmt.Sprintf("steps:\n  - run: c%d\n", i+1))
	}
	in := f.run(s, "c0.yaml", nil, client.CallOptions{})
	var members []wire.Member
	if err := json.Unmarshal(in["members"], &members); err != nil {
		t.Fatal(err)
	}
	if len(members) != wire.MaxDepth {
		t.Fatalf("members: got %d, want %d", len(members), wire.MaxDepth)
	}
	if got, want := filepath.Base(members[len(members)-1].Path), "c20.yaml"; got != want {
		t.Errorf("deepest member: got %s, want %s", got, want)
	}
}

// TestFilesLog: one [flow-files] line per member before the call, one per
// baseline written after it; never the content.
func TestFilesLog(t *testing.T) {
	f := newFixture(t)
	s := newStub(t)
	f.put("main.yaml", "steps:\n  - run: frag\n  - run: big\n  - run: gone\n  - run: ../../../out\n  - snapshot: home\n")
	f.put("frag.yaml", "steps: []\n")
	f.put("big.yaml", "steps: []\n#"+strings.Repeat("b", 300<<10)+"\n")
	dir := filepath.Join(f.flows, "__baselines__", "main")
	f.putBytes(filepath.Join(dir, "home__chromium-1x1.png"), pngBytes(t, 1, 1))
	shot := filepath.Join(dir, "home__chromium-2x2.png")
	content := `{"__argentClientFile":true,"path":"` + shot + `","content":"` + b64(pngBytes(t, 2, 2)) + `","encoding":"base64"}`
	s.Answer = func(w http.ResponseWriter, body []byte) {
		linktest.Stream(w, `{"event":"result","data":{"baselineWrites":[`+content+`]}}`)
	}
	var lines []string
	f.run(s, "main.yaml", map[string]any{"updateBaselines": true}, client.CallOptions{FilesLog: func(l string) { lines = append(lines, l) }})
	fl := f.flows
	want := []string{
		"[flow-files] flow " + fl + "/frag.yaml: inline 10",
		fmt.Sprintf("[flow-files] flow %s/big.yaml: upload %d", fl, 10+2+300<<10),
		"[flow-files] flow " + fl + "/gone.yaml: missing",
		"[flow-files] flow " + f.root + "/out.yaml: refused (../../../out.yaml is outside every root this client serves (" + f.proj + "))",
		"[flow-files] baseline " + dir + "/home__chromium-1x1.png: listed",
		"[flow-files] baseline " + shot + ": written",
	}
	if strings.Join(lines, "\n") != strings.Join(want, "\n") {
		t.Errorf("log:\ngot  %s\nwant %s", strings.Join(lines, "\n     "), strings.Join(want, "\n     "))
	}
}
