package client_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolserver/toolserver/flow"
	flowrun "github.com/toolserver/toolserver/flow/run"
	"github.com/toolserver/toolserver/internal/clientfs"
	linkclient "github.com/toolserver/toolserver/link/client"
	linkserver "github.com/toolserver/toolserver/link/server"
	"github.com/toolserver/toolserver/wire"
)

// styleMember is the style member of target named in dir, for a file at
// canonical.
func styleMember(dir, target, canonical string) wire.Member {
	return wire.Member{Role: wire.RoleStyle, Key: wire.Key(dir, target), Path: dir + "/" + target, Canonical: canonical}
}

// TestStyleMembers: the client sends the stylePath file of each snapshot,
// in every step and when: block of each flow it reaches, resolved beside
// the real file naming it and keyed as a run: target is, once per key,
// under the client policy of every member: missing, refused outside the
// roots, for a .css name linking to another kind of file, for a
// directory and over the 64 KiB cap of a stylePath file.
func TestStyleMembers(t *testing.T) {
	f := newFixture(t)
	s := newStub(t)
	f.put("capture.css", "time { visibility: hidden }\n")
	f.put("sub/local.css", ".ad { display: none }")
	f.put(filepath.Join(f.proj, "secret.env"), "TOKEN=1\n")
	f.link("env.css", "../../secret.env")
	f.mkdir("dir.css")
	f.put("big.css", strings.Repeat("a", flow.MaxStyleBytes+1))
	f.put(filepath.Join(f.root, "outside.css"), "a {}")
	main := "steps:\n" +
		"  - snapshot: { name: a, stylePath: capture.css }\n" +
		"  - when: { visible: b }\n" +
		"    steps:\n" +
		"      - snapshot: { name: b, stylePath: none.css, style: \"x {}\" }\n" +
		"  - snapshot: { name: c, stylePath: capture.css, mask: m }\n" +
		"  - snapshot: { name: d, stylePath: env.css }\n" +
		"  - snapshot: { name: e, stylePath: dir.css }\n" +
		"  - snapshot: { name: g, stylePath: big.css }\n" +
		"  - snapshot: { name: h, stylePath: ../../../outside.css }\n" +
		"  - run: sub/frag\n"
	frag := "steps:\n  - snapshot: { name: i, stylePath: local.css }\n  - snapshot: { name: j, stylePath: ../capture.css }\n"
	f.put("main.yaml", main)
	f.put("sub/frag.yaml", frag)
	var lines []string
	in := f.run(s, "main.yaml", nil, linkclient.CallOptions{FilesLog: func(l string) { lines = append(lines, l) }})

	fl, sub := f.flows, filepath.Join(f.flows, "sub")
	want := []wire.Member{
		withBytes(styleMember(fl, "capture.css", fl+"/capture.css"), "time { visibility: hidden }\n"),
		stateOf(styleMember(fl, "none.css", fl+"/none.css"), wire.StateMissing, ""),
		stateOf(styleMember(fl, "env.css", f.proj+"/secret.env"), wire.StateRefused, "env.css links to a file that is not a CSS file"),
		stateOf(styleMember(fl, "dir.css", fl+"/dir.css"), wire.StateRefused, "EISDIR: illegal operation on a directory, read"),
		stateOf(styleMember(fl, "big.css", fl+"/big.css"), wire.StateRefused, fl+"/big.css is larger than the 64 KiB cap on a stylePath file"),
		stateOf(styleMember(fl, "../../../outside.css", f.root+"/outside.css"), wire.StateRefused, "../../../outside.css is outside every root this client serves ("+f.proj+")"),
		withBytes(flowMember(fl, "sub/frag.yaml", sub+"/frag.yaml", listed), frag),
		withBytes(styleMember(sub, "local.css", sub+"/local.css"), ".ad { display: none }"),
		withBytes(styleMember(sub, "../capture.css", fl+"/capture.css"), "time { visibility: hidden }\n"),
	}
	assertJSON(t, "members", in["members"], want)

	wantLines := []string{
		"[flow-files] style " + fl + "/capture.css: inline 28",
		"[flow-files] style " + fl + "/none.css: missing",
	}
	for _, w := range wantLines {
		found := false
		for _, l := range lines {
			found = found || l == w
		}
		if !found {
			t.Errorf("[flow-files] lines: got %q, want one %q", lines, w)
		}
	}
}

// TestStyleSourcesAgree: a stylePath reads the same from the disk under
// the call's client policy and from the members the link's own client
// sent, as the tool-server receives them: the same bytes, the same
// missing text, the same refusal.
func TestStyleSourcesAgree(t *testing.T) {
	f := newFixture(t)
	f.put("capture.css", "time { visibility: hidden }\n")
	f.put(filepath.Join(f.proj, "shared", "up.css"), "body { caret-color: transparent }")
	f.put(filepath.Join(f.proj, "secret.env"), "TOKEN=1\n")
	f.link("env.css", "../../secret.env")
	f.mkdir("dir.css")
	f.put("big.css", strings.Repeat("a", flow.MaxStyleBytes+1))
	f.put(filepath.Join(f.root, "outside.css"), "a {}")
	targets := []string{"capture.css", "../../shared/up.css", "none.css", "nodir/none.css", "env.css", "dir.css", "big.css", "../../../outside.css"}
	var main strings.Builder
	main.WriteString("steps:\n")
	for i, target := range targets {
		fmt.Fprintf(&main, "  - snapshot: { name: s%d, stylePath: %q }\n", i, target)
	}
	mainPath := f.put("main.yaml", main.String())
	policy := clientfs.ClientRoots(mainPath, clientfs.RealPath(mainPath), f.proj)
	members, _ := linkedSource(t, f, mainPath)
	for _, target := range targets {
		want := describeStyle(flowrun.Disk{Policy: policy}, f.flows, target)
		if got := describeStyle(members, f.flows, target); got != want {
			t.Errorf("%s from the members:\ngot  %s\nwant %s (disk)", target, got, want)
		}
	}
	if got := describeStyle(members, f.flows, "capture.css"); got != `bytes: "time { visibility: hidden }\n"` {
		t.Errorf("capture.css: got %s, want its bytes", got)
	}
}

// describeStyle renders what src answers for a stylePath beside dir.
func describeStyle(src flowrun.Source, dir, target string) string {
	b, err := src.ReadStyle(dir, target)
	var refused *flow.RefusedError
	switch {
	case errors.As(err, &refused):
		return "refused: " + refused.Reason
	case flow.IsMissing(err):
		return "missing: " + err.Error()
	case err != nil:
		return "error: " + err.Error()
	}
	return fmt.Sprintf("bytes: %q", b)
}

// TestReceiveStyleMembers: the tool-server keeps style members (an older one
// ignores the role, as docs/link-protocol.md has it for any unknown role),
// refuses one without a valid canonical, and a refused one reads as refused.
func TestReceiveStyleMembers(t *testing.T) {
	dir := "/work/proj/.argent/flows"
	css := b64([]byte("a {}"))
	members := []wire.Member{
		{Role: wire.RoleStyle, Key: wire.Key(dir, "ok.css"), Path: dir + "/ok.css", Canonical: dir + "/ok.css", Content: &css},
		{Role: wire.RoleStyle, Key: wire.Key(dir, "rel.css"), Path: dir + "/rel.css", Canonical: "rel.css", Content: &css},
		{Role: wire.RoleStyle, Key: wire.Key(dir, "no.css"), Path: dir + "/no.css", Canonical: "/elsewhere/no.css", State: wire.StateRefused, Error: "no.css is outside every root this client serves (/work/proj)"},
		{Role: wire.RoleStyle, Key: wire.Key(dir, "gone.css"), Path: dir + "/gone.css", Canonical: dir + "/gone.css", State: wire.StateMissing},
		{Role: "font", Key: wire.Key(dir, "x.woff"), Path: dir + "/x.woff", Content: &css},
	}
	m, err := linkserver.Receive(t.Context(), members, nil)
	if err != nil {
		t.Fatal(err)
	}
	if m.Len() != 4 {
		t.Errorf("kept: got %d members, want 4 (the unknown role ignored)", m.Len())
	}
	src := linkserver.NewSource(m)
	cases := map[string]string{
		"ok.css":   `bytes: "a {}"`,
		"rel.css":  `refused: member "` + dir + `/rel.css" has no valid canonical path ("rel.css")`,
		"no.css":   "refused: no.css is outside every root this client serves (/work/proj)",
		"gone.css": "missing: ENOENT: no such file or directory, open '" + dir + "/gone.css'",
	}
	for target, want := range cases {
		if got := describeStyle(src, dir, target); got != want {
			t.Errorf("%s: got %s, want %s", target, got, want)
		}
	}
	// A style member never stands for a flow of the same key.
	if f, _ := src.Open(dir, "ok.css"); !flow.IsMissing(f.Err) {
		t.Errorf("Open of a style member's key: got %+v, want missing", f)
	}
}

// TestPrevalidateSnapshotOptions: a flow whose snapshots use every option
// of issue 12, and a fragment that does too, passes the checks a
// tool-server makes before the first step of a linked run.
func TestPrevalidateSnapshotOptions(t *testing.T) {
	f := newFixture(t)
	f.put("capture.css", "time { visibility: hidden }\n")
	f.put("frag.yaml", "steps:\n  - snapshot: { name: f, hide: [Ad], stylePath: capture.css, threshold: 0 }\n")
	mainPath := f.put("main.yaml", `steps:
  - snapshot:
      name: all
      maxMismatch: 0.1
      maxDiffPixels: 10
      threshold: 0.2
      fullPage: true
      mask: [{ id: clock }, Avatar]
      maskColor: "#00FF00"
      hide: { role: banner }
      style: |
        * { caret-color: transparent }
      stylePath: capture.css
  - snapshot: { name: crop, cropOn: { id: card }, mask: x }
  - run: frag
`)
	src, entry := linkedSource(t, f, mainPath)
	p, err := flowrun.Prepare(entry)
	if err != nil {
		t.Fatal(err)
	}
	fl := p.Flow
	noTools := func(string) ([]wire.FileInput, bool) { return nil, false }
	if err := linkserver.Prevalidate(fl, entry.File, src, noTools); err != nil {
		t.Errorf("Prevalidate: got %v, want nil", err)
	}
	if b, err := src.ReadStyle(f.flows, "capture.css"); err != nil || string(b) != "time { visibility: hidden }\n" {
		t.Errorf("ReadStyle: got %q, %v, want the file the client sent", b, err)
	}
	// The client sent one style member for the one key, though two
	// flows of the same directory name it.
	var members []wire.Member
	in := f.run(newStub(t), "main.yaml", nil, linkclient.CallOptions{})
	if err := json.Unmarshal(in["members"], &members); err != nil {
		t.Fatal(err)
	}
	styles := 0
	for _, m := range members {
		if m.Role == wire.RoleStyle {
			styles++
		}
	}
	if styles != 1 {
		t.Errorf("style members: got %d, want 1", styles)
	}
}
