package client_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolserver/toolserver/flow"
	"github.com/toolserver/toolserver/internal/treetest"
	"github.com/toolserver/toolserver/link/client"
)

// TestApplyBaselineWritesDryRun: with DryRun the client checks each
// baseline directive as for a write, writes nothing (no file, no
// directory), and puts a plan with the size and whether a file is there
// already in the place of each write it would have made; the refusals
// are the same as without DryRun.
func TestApplyBaselineWritesDryRun(t *testing.T) {
	f := newFixture(t)
	s := newStub(t)
	f.put("main.yaml", "steps:\n  - snapshot: home\n")
	D := filepath.Join(f.flows, "__baselines__", "main")
	f.put(filepath.Join(D, "existing.png"), "old")
	f.link(filepath.Join(D, "dangle.png"), "nothing.png")
	outside := f.put(filepath.Join(f.root, "outside", "o.png"), "outside bytes")
	f.link(filepath.Join(D, "out.png"), outside)
	shot := pngBytes(t, 2, 2)
	enc := b64(shot)
	p := func(n string) string { return filepath.Join(D, n) }
	other := filepath.Join(f.flows, "__baselines__", "other", "x.png")
	answerResult(t, s, map[string]any{"flow": "main", "baselineWrites": []any{
		directive(p("new.png"), enc, "base64"),
		directive(p("existing.png"), enc, "base64"),
		directive(p("dangle.png"), enc, "base64"),
		directive(p("out.png"), enc, "base64"),
		directive(other, enc, "base64"),
	}})
	before := treetest.Of(t, f.root)
	var lines []string
	res, err := s.Client("").Call(t.Context(), "flow-execute",
		map[string]any{"name": "main", "project_root": f.proj, "updateBaselines": true},
		client.CallOptions{DryRun: true, FilesLog: func(l string) { lines = append(lines, l) }})
	if err != nil {
		t.Fatal(err)
	}
	plan := func(path string, updated bool) flow.BaselineWrite {
		return flow.BaselineWrite{Path: path, Plan: &flow.BaselinePlan{Bytes: len(shot), Updated: updated}}
	}
	refused := func(path, why string) map[string]any { return map[string]any{"error": why, "path": path} }
	assertJSON(t, "result", res, map[string]any{"flow": "main", "baselineWrites": []any{
		plan(p("new.png"), false),
		plan(p("existing.png"), true),
		refused(p("dangle.png"), p("dangle.png")+" is a symbolic link to a missing file"),
		refused(p("out.png"), p("out.png")+" links out of its directory (to "+outside+")"),
		refused(other, other+" is not in the baseline directory of a run of this call that updates baselines"),
	}})
	treetest.Same(t, before, treetest.Of(t, f.root))
	for _, l := range lines {
		if strings.HasSuffix(l, ": written") {
			t.Errorf("files log: got %q, want no written line", l)
		}
	}
}

// TestApplyDryRunNewDirectory: a dry run of a flow's first update makes
// no baseline directory.
func TestApplyDryRunNewDirectory(t *testing.T) {
	f := newFixture(t)
	s := newStub(t)
	f.put("fresh.yaml", "steps:\n  - snapshot: s\n")
	dir := filepath.Join(f.flows, "__baselines__", "fresh")
	dst := filepath.Join(dir, "s__chromium-1x1.png")
	shot := pngBytes(t, 1, 1)
	answerResult(t, s, map[string]any{"baselineWrites": []any{directive(dst, b64(shot), "base64")}})
	res, err := s.Client("").Call(t.Context(), "flow-execute", map[string]any{"name": "fresh", "project_root": f.proj, "updateBaselines": true}, client.CallOptions{DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	assertJSON(t, "result", res, map[string]any{"baselineWrites": []any{
		flow.BaselineWrite{Path: dst, Plan: &flow.BaselinePlan{Bytes: len(shot)}},
	}})
	if _, err := os.Stat(filepath.Join(f.flows, "__baselines__")); !os.IsNotExist(err) {
		t.Errorf("__baselines__: got %v, want no directory made", err)
	}
}
