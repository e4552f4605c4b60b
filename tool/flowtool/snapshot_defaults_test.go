package flowtool

import (
	"encoding/json"
	"errors"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolserver/toolserver/fault"
	"github.com/toolserver/toolserver/flow"
	"github.com/toolserver/toolserver/tool/tooltest"
	"github.com/toolserver/toolserver/wire"
)

func TestSnapshotDefaultsArg(t *testing.T) {
	if a := DefaultsArg(flow.SnapshotDefaults{Sources: map[string]string{"maxMismatch": "x"}}); a != nil {
		t.Errorf("DefaultsArg of no limits: got %+v, want nil (the argument is left out)", a)
	}
	m, n := 0.01, 100
	d := flow.SnapshotDefaults{MaxMismatch: &m, MaxDiffPixels: &n, Sources: map[string]string{"maxMismatch": "flag --max-mismatch", "maxDiffPixels": flow.ConfigFile}}
	b, err := json.Marshal(DefaultsArg(d))
	if err != nil {
		t.Fatal(err)
	}
	want := `{"maxMismatch":0.01,"maxDiffPixels":100,"sources":{"maxDiffPixels":".argent/toolserver.yaml","maxMismatch":"flag --max-mismatch"}}`
	if string(b) != want {
		t.Errorf("the argument: got %s, want %s", b, want)
	}
	var back wire.SnapshotDefaults
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	got := argDefaults(&back)
	if *got.MaxMismatch != 0.01 || *got.MaxDiffPixels != 100 || got.Threshold != nil || !maps.Equal(got.Sources, d.Sources) {
		t.Errorf("Defaults after the wire: got %+v, want %+v", got, d)
	}
	th := 0.2
	odd := &wire.SnapshotDefaults{Threshold: &th, Sources: map[string]string{"maxMismatch": "flag --max-mismatch"}}
	if got := argDefaults(odd); !maps.Equal(got.Sources, map[string]string{"threshold": "flow-execute snapshotDefaults"}) {
		t.Errorf("sources: got %v, want the unset limit's dropped and the set one named after the argument", got.Sources)
	}
}

// TestSnapshotDefaultsOfARun: the argument wins; without it a flow read
// from this machine's disk takes its project's config file, a linked one
// nothing; a config file that does not parse rejects the run.
func TestSnapshotDefaultsOfARun(t *testing.T) {
	root := t.TempDir()
	writeFile(t, filepath.Join(root, ".argent", "toolserver.yaml"), "snapshot:\n  maxMismatch: 0.02\n")
	bad := t.TempDir()
	writeFile(t, filepath.Join(bad, ".argent", "toolserver.yaml"), "snapshot:\n  maxMismatch: 0.02\n  treshold: 0.1\n")
	th := 0.3
	arg := &wire.SnapshotDefaults{Threshold: &th, Sources: map[string]string{"threshold": "flag --threshold"}}

	d, err := snapshotDefaults(arg, false, bad)
	if err != nil || d.MaxMismatch != nil || *d.Threshold != 0.3 || d.Sources["threshold"] != "flag --threshold" {
		t.Errorf("with the argument: got %+v, %v, want its threshold only, the config file unread", d, err)
	}
	d, err = snapshotDefaults(nil, false, root)
	if err != nil || d.MaxMismatch == nil || *d.MaxMismatch != 0.02 || d.Sources["maxMismatch"] != flow.ConfigFile {
		t.Errorf("from disk: got %+v, %v, want the project's 0.02 from %s", d, err, flow.ConfigFile)
	}
	d, err = snapshotDefaults(nil, true, root)
	if err != nil || d.MaxMismatch != nil || d.Sources != nil {
		t.Errorf("linked: got %+v, %v, want nothing (the project is on the client)", d, err)
	}
	if d, err = snapshotDefaults(nil, false, t.TempDir()); err != nil || d.MaxMismatch != nil {
		t.Errorf("no config file: got %+v, %v, want nothing", d, err)
	}
	_, err = snapshotDefaults(nil, false, bad)
	te := tooltest.WantCode(t, err, "FLOW_CONFIG_INVALID")
	if te.Kind != fault.Validation || !strings.Contains(te.Message, `line 3: snapshot: unknown option "treshold" (did you mean "threshold"?)`) || !errors.Is(err, flow.ErrInvalidConfig) {
		t.Errorf("bad config: got %v (kind %s), want the file's line and the did-you-mean", te, te.Kind)
	}
}

func writeFile(t *testing.T, p, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestFlowExecuteSnapshotDefaults: flow-execute takes snapshotDefaults,
// checked against its schema before anything runs, and without it reads
// the config file of a flow's project on this machine.
func TestFlowExecuteSnapshotDefaults(t *testing.T) {
	t.Parallel()
	reg := newRegistry(t)
	root := t.TempDir()
	writeFile(t, filepath.Join(root, ".argent", "flows", "notes.yaml"), "steps:\n  - echo: no device needed\n")
	args := func(extra map[string]any) map[string]any {
		a := map[string]any{"name": "notes", "project_root": root}
		maps.Copy(a, extra)
		return a
	}
	res := tooltest.Call(t, reg, "flow-execute", args(map[string]any{"snapshotDefaults": map[string]any{
		"maxMismatch": 0.01, "maxDiffPixels": 0, "threshold": 0.2, "sources": map[string]any{"maxMismatch": "flag --max-mismatch"}}}))
	if res["ok"] != true {
		t.Errorf("with snapshotDefaults: got %v, want the flow run", res)
	}
	for _, c := range []struct {
		defaults map[string]any
		msg      string
	}{
		{map[string]any{"maxMismatch": 150}, "snapshotDefaults.maxMismatch: 150 is above the maximum 100"},
		{map[string]any{"maxDiffPixels": 1.5}, "snapshotDefaults.maxDiffPixels: want integer, got number"},
		{map[string]any{"threshold": -0.1}, "snapshotDefaults.threshold: -0.1 is below the minimum 0"},
		{map[string]any{"maxMismatch": "1%"}, "snapshotDefaults.maxMismatch: want number, got string"},
		{map[string]any{"mask": []any{"a"}}, "snapshotDefaults.mask: unknown argument"},
		{map[string]any{"sources": map[string]any{"cropOn": "x"}}, "snapshotDefaults.sources.cropOn: unknown argument"},
		{map[string]any{"sources": map[string]any{"threshold": strings.Repeat("x", 201)}}, "snapshotDefaults.sources.threshold: longer than 200 characters"},
	} {
		_, err := tooltest.Invoke(t, reg, "flow-execute", args(map[string]any{"snapshotDefaults": c.defaults}), false)
		var te *fault.Error
		if !errors.As(err, &te) || te.Kind != fault.Validation || te.Message != c.msg {
			t.Errorf("snapshotDefaults %v: got %v, want the validation error %q", c.defaults, err, c.msg)
		}
	}
	writeFile(t, filepath.Join(root, ".argent", "toolserver.yaml"), "snapshot: { maxMismatch: 200 }\n")
	_, err := tooltest.Invoke(t, reg, "flow-execute", args(nil), false)
	if te := tooltest.WantCode(t, err, "FLOW_CONFIG_INVALID"); !strings.Contains(te.Message, "toolserver.yaml: line 1: snapshot.maxMismatch must be a percent from 0 to 100, got the number 200") {
		t.Errorf("a bad config file: got %q, want its line and value", te.Message)
	}
	// The argument stands for the client's resolved defaults: the file is
	// not read then.
	res = tooltest.Call(t, reg, "flow-execute", args(map[string]any{"snapshotDefaults": map[string]any{"threshold": 0.1}}))
	if res["ok"] != true {
		t.Errorf("with the argument over a bad config file: got %v, want the flow run", res)
	}
}
