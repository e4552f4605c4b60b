package client_test

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolserver/toolserver/flow"
	flowrun "github.com/toolserver/toolserver/flow/run"
	"github.com/toolserver/toolserver/internal/clientfs"
	linkclient "github.com/toolserver/toolserver/link/client"
	linkserver "github.com/toolserver/toolserver/link/server"
)

// The shared behaviour of the two run.Source implementations: the local
// disk (run.Disk), and the members a linked client sends, as the
// tool-server receives them (server.Source). One table of cases runs on
// both; each must open the same file with the same canonical, spelling,
// bytes and error, and a run over each must report the same steps with
// the same messages. The members come from the link's own client: a real
// call to a stub tool-server, whose body is decoded and received as the
// tool-server does.
//
// The disk reads under the call's client policy, as the client does when it
// collects members. Without a policy (a local run) the disk agrees on every
// case but the two the policy refuses, which it reads: a local run has no
// client policy (docs/link-protocol.md lists a cycle, the depth limit and a
// case_folded spelling as the checks of a run without a link).

// sharedCase is one row: files to lay out under the fixture, the main
// flow, and the run: target whose opening is compared.
type sharedCase struct {
	name   string
	setup  func(f *fixture)
	main   string
	target string
	// policyOnly marks a case only a disk with the client policy agrees
	// on; the disk without one reads the file.
	policyOnly bool
}

func sharedCases() []sharedCase {
	chain := func(f *fixture) {
		// main is level 0; l1 … l21 are levels 1 … 21, one past the
		// deepest that runs.
		for i := 1; i <= 21; i++ {
			f.put(fmt.Sprintf("l%d.yaml", i), fmt.Sprintf("steps:\n  - echo: level %d\n  - run: l%d\n", i, i+1))
		}
	}
	return []sharedCase{
		{name: "missing file", main: "steps:\n  - run: nothere\n", target: "nothere.yaml"},
		{name: "directory", setup: func(f *fixture) { f.mkdir("adir.yaml") }, main: "steps:\n  - run: adir\n", target: "adir.yaml"},
		{name: "case-folded name", setup: func(f *fixture) { f.put("Login.yaml", "steps:\n  - echo: login\n") },
			main: "steps:\n  - run: login\n", target: "login.yaml"},
		{name: "dot-dot inside the project", setup: func(f *fixture) { f.put(filepath.Join(f.proj, "shared", "frag.yaml"), "steps:\n  - echo: shared\n") },
			main: "steps:\n  - run: ../../shared/frag\n", target: "../../shared/frag.yaml"},
		{name: "dot-dot after a symbolic link", setup: func(f *fixture) {
			// sub links to proj/other/deep; sub/.. is flows by the path
			// as written and proj/other by the kernel. The clean path
			// wins on both ends, as Node's path.resolve has it.
			f.put("frag.yaml", "steps:\n  - echo: beside main\n")
			f.put(filepath.Join(f.proj, "other", "frag.yaml"), "steps:\n  - echo: beside the link target\n")
			f.mkdir(filepath.Join(f.proj, "other", "deep"))
			f.link("sub", filepath.Join(f.proj, "other", "deep"))
		}, main: "steps:\n  - run: sub/../frag\n", target: "sub/../frag.yaml"},
		{name: "dot-dot out of the roots", setup: func(f *fixture) { f.put(filepath.Join(f.root, "outside.yaml"), "steps:\n  - echo: outside\n") },
			main: "steps:\n  - run: ../../../outside\n", target: "../../../outside.yaml", policyOnly: true},
		{name: "symbolic link out of the roots", setup: func(f *fixture) {
			f.put(filepath.Join(f.root, "elsewhere", "x.yaml"), "steps:\n  - echo: elsewhere\n")
			f.link("out.yaml", filepath.Join(f.root, "elsewhere", "x.yaml"))
		}, main: "steps:\n  - run: out\n", target: "out.yaml", policyOnly: true},
		{name: "21 levels of run: nesting", setup: chain, main: "steps:\n  - run: l1\n", target: "l1.yaml"},
	}
}

func TestSourcesAgree(t *testing.T) {
	for _, tc := range sharedCases() {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			if tc.setup != nil {
				tc.setup(f)
			}
			mainPath := f.put("main.yaml", tc.main)
			policy := clientfs.ClientRoots(mainPath, clientfs.RealPath(mainPath), f.proj)
			disk := flowrun.Disk{Policy: policy}
			members, entry := linkedSource(t, f, mainPath)

			// The same file, opened by the key the runner uses.
			want := describe(t, disk, f.flows, tc.target)
			if got := describe(t, members, f.flows, tc.target); got != want {
				t.Errorf("link members open %s:\ngot  %s\nwant %s (disk)", tc.target, got, want)
			}
			local := describe(t, flowrun.Disk{}, f.flows, tc.target)
			if agree := local == want; agree == tc.policyOnly {
				t.Errorf("disk without a policy opens %s:\ngot  %s\nagreement with the policy %v, want %v", tc.target, local, agree, !tc.policyOnly)
			}

			// The same run.
			diskEntry, err := disk.OpenFile(mainPath)
			if err != nil {
				t.Fatal(err)
			}
			wantRun := runReport(t, flowrun.Options{Source: disk}, flowrun.Entry{File: diskEntry, Name: "main", StemFallback: "main"})
			gotRun := runReport(t, flowrun.Options{Source: members, Linked: true}, entry)
			if gotRun != wantRun {
				t.Errorf("run over the link members:\ngot  %s\nwant %s (disk)", gotRun, wantRun)
			}
		})
	}
}

// linkedSource collects the members of the flow at mainPath with the
// link's client, as a call of flow-execute sends them, and returns them
// as the tool-server receives them, with the entry of the run.
func linkedSource(t *testing.T, f *fixture, mainPath string) (*linkserver.Source, flowrun.Entry) {
	t.Helper()
	s := newStub(t)
	args := map[string]any{"flow_path": mainPath, "project_root": f.proj}
	if _, err := s.Client("").Call(t.Context(), "flow-execute", args, linkclient.CallOptions{}); err != nil {
		t.Fatalf("Call: %v", err)
	}
	in, withMembers, ok := linkserver.ParseInput(lastCall(t, s)["flow_path"])
	if !ok || !withMembers {
		t.Fatalf("flow_path: got no file input with members (ok %v, members %v)", ok, withMembers)
	}
	m, err := linkserver.Receive(t.Context(), in.Members, nil)
	if err != nil {
		t.Fatalf("Receive: %v", err)
	}
	data, err := base64.StdEncoding.DecodeString(*in.Content)
	if err != nil {
		t.Fatal(err)
	}
	file := &flow.File{Path: in.Path, Canonical: in.Canonical, Spelling: *in.Spelling, Data: data}
	return linkserver.NewSource(m), flowrun.Entry{File: file, Name: "main", StemFallback: "main"}
}

// describe renders what src answers for target beside dir: the fields
// the runner reads, and the message it reports for a file without bytes.
func describe(t *testing.T, src flowrun.Source, dir, target string) string {
	t.Helper()
	file, err := src.Open(dir, target)
	if err != nil {
		t.Fatalf("Open(%s, %s): %v", dir, target, err)
	}
	sp, _ := json.Marshal(file.Spelling)
	var outcome string
	var refused *flow.RefusedError
	switch {
	case errors.As(file.Err, &refused):
		outcome = "refused: " + refused.Reason
	case flow.IsMissing(file.Err):
		outcome = "missing: " + (&flow.OpenError{Path: file.Canonical}).Error()
	case file.Err != nil:
		outcome = "error: " + file.Err.Error()
	default:
		outcome = fmt.Sprintf("bytes: %q", file.Data)
	}
	return fmt.Sprintf("path %s, canonical %s, spelling %s, %s", file.Path, file.Canonical, sp, outcome)
}

// runReport runs the entry with opts and renders its report without its
// times.
func runReport(t *testing.T, opts flowrun.Options, e flowrun.Entry) string {
	t.Helper()
	rep, err := flowrun.Execute(t.Context(), opts, e)
	if err != nil {
		return "rejected: " + err.Error()
	}
	rep.StartedAt, rep.DurationMs = 0, 0
	var lines []string
	for _, s := range rep.Steps {
		s.DurationMs, s.Err = 0, nil
		b, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		lines = append(lines, string(b))
	}
	return fmt.Sprintf("ok %v, %d passed, %d failed, %d errored, %d skipped, steps:\n%s",
		rep.OK, rep.Passed, rep.Failed, rep.Errored, rep.Skipped, strings.Join(lines, "\n"))
}

// TestSharedCasesNeedCaseSensitivity guards the case-folded row: on a
// case-insensitive file system it would test nothing.
func TestSharedCasesNeedCaseSensitivity(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "A.yaml"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "a.yaml")); err == nil {
		t.Fatal("the shared Source cases need a case-sensitive file system")
	}
}
