package main

import (
	"encoding/json"
	"io"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/toolserver/toolserver/flow"
)

// writeConfig writes the project config file of root.
func writeConfig(t *testing.T, root, data string) {
	t.Helper()
	p := filepath.Join(root, ".argent", "toolserver.yaml")
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

// limitsOf parses args as flow run's limit flags and returns the run's
// snapshot limits for the project at root.
func limitsOf(t *testing.T, root string, args ...string) flow.SnapshotDefaults {
	t.Helper()
	var l snapshotLimitFlags
	f := pflag.NewFlagSet("run", pflag.ContinueOnError)
	f.SetOutput(io.Discard)
	l.register(f)
	if err := f.Parse(args); err != nil {
		t.Fatalf("flags %v: %v", args, err)
	}
	d, err := l.snapshotDefaults(root)
	if err != nil {
		t.Fatalf("snapshotDefaults: %v", err)
	}
	return d
}

// TestSnapshotLimitPrecedence: a flag wins over the config file, limit
// by limit, and each limit names where it came from; what no flag sets
// keeps the file's value, and what neither sets stays unset (the
// built-in default, applied by the runner).
func TestSnapshotLimitPrecedence(t *testing.T) {
	t.Parallel()
	conf := t.TempDir()
	writeConfig(t, conf, "snapshot:\n  maxMismatch: 0.02\n  maxDiffPixels: 500\n")
	bare := t.TempDir()
	type want struct {
		maxMismatch   *float64
		maxDiffPixels *int
		threshold     *float64
		sources       map[string]string
	}
	f, i := func(v float64) *float64 { return &v }, func(v int) *int { return &v }
	cases := []struct {
		name string
		root string
		args []string
		want want
	}{
		{"nothing", bare, nil, want{}},
		{"config only", conf, nil, want{f(0.02), i(500), nil, map[string]string{"maxMismatch": flow.ConfigFile, "maxDiffPixels": flow.ConfigFile}}},
		{"flags only", bare, []string{"--max-mismatch", "0.01", "--max-diff-pixels=0", "--threshold", "0.2"},
			want{f(0.01), i(0), f(0.2), map[string]string{"maxMismatch": "flag --max-mismatch", "maxDiffPixels": "flag --max-diff-pixels", "threshold": "flag --threshold"}}},
		{"a flag over the config", conf, []string{"--max-mismatch", "0"},
			want{f(0), i(500), nil, map[string]string{"maxMismatch": "flag --max-mismatch", "maxDiffPixels": flow.ConfigFile}}},
		{"a flag beside the config", conf, []string{"--threshold=1"},
			want{f(0.02), i(500), f(1), map[string]string{"maxMismatch": flow.ConfigFile, "maxDiffPixels": flow.ConfigFile, "threshold": "flag --threshold"}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := limitsOf(t, c.root, c.args...)
			got := want{d.MaxMismatch, d.MaxDiffPixels, d.Threshold, d.Sources}
			if !equalPtr(got.maxMismatch, c.want.maxMismatch) || !equalPtr(got.maxDiffPixels, c.want.maxDiffPixels) || !equalPtr(got.threshold, c.want.threshold) {
				t.Errorf("limits: got %s, want %s", show(d), show(flow.SnapshotDefaults{MaxMismatch: c.want.maxMismatch, MaxDiffPixels: c.want.maxDiffPixels, Threshold: c.want.threshold}))
			}
			if !maps.Equal(got.sources, c.want.sources) {
				t.Errorf("sources: got %v, want %v", got.sources, c.want.sources)
			}
		})
	}
}

func equalPtr[T comparable](a, b *T) bool {
	return a == nil && b == nil || a != nil && b != nil && *a == *b
}

func show(d flow.SnapshotDefaults) string {
	b, _ := json.Marshal(d)
	return string(b)
}

// TestSnapshotLimitFlagErrors: a bad value is a usage error (exit 2) that
// says what the flag takes, before anything runs; so is a config file that
// does not parse, named with its line.
func TestSnapshotLimitFlagErrors(t *testing.T) {
	t.Parallel()
	root := flowProject(t)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--max-mismatch", "150"}, `invalid argument "150" for "--max-mismatch" flag: want a percent of pixels from 0 to 100, e.g. 0.01, got "150"`},
		{[]string{"--max-mismatch", "1%"}, `invalid argument "1%" for "--max-mismatch" flag: want a percent of pixels from 0 to 100`},
		{[]string{"--max-mismatch=NaN"}, `invalid argument "NaN" for "--max-mismatch" flag`},
		{[]string{"--max-diff-pixels", "-1"}, `invalid argument "-1" for "--max-diff-pixels" flag: want a whole number of pixels from 0 to 2147483647, got "-1"`},
		{[]string{"--max-diff-pixels", "2.5"}, `invalid argument "2.5" for "--max-diff-pixels" flag: want a whole number of pixels`},
		{[]string{"--threshold", "1.5"}, `invalid argument "1.5" for "--threshold" flag: want a number from 0 to 1 (pixelmatch's colour threshold), got "1.5"`},
	} {
		args := append([]string{"flow", "run", "good", "--project", root}, c.args...)
		code, out, errOut := runCLI(t, args...)
		if code != 2 || !strings.Contains(errOut, c.want) || !strings.Contains(errOut, "Run 'toolserver flow run --help' for usage.") {
			t.Errorf("%v: exit %d\n%s%s\nwant exit 2 and %q", c.args, code, out, errOut, c.want)
		}
	}
	writeConfig(t, root, "snapshot:\n  maxMismatch: 0.1\n  maxDifPixels: 3\n")
	code, out, errOut := runCLI(t, "flow", "run", "good", "--project", root, "--max-mismatch", "0.2")
	want := filepath.Join(root, ".argent", "toolserver.yaml") + `: line 3: snapshot: unknown option "maxDifPixels" (did you mean "maxDiffPixels"?)`
	if code != 2 || !strings.Contains(errOut, want) || strings.Contains(out, "Flow ") {
		t.Errorf("a bad config file: exit %d\n%s%s\nwant exit 2, %q and no flow run", code, out, errOut, want)
	}
}

// TestFlowRunLinkedSendsSnapshotDefaults: a linked run sends the limits
// it resolved (the client's config file under its flags) with the call,
// as flow-execute's snapshotDefaults with their sources; with none it
// sends no such argument, as Argent's clients never do.
func TestFlowRunLinkedSendsSnapshotDefaults(t *testing.T) {
	t.Parallel()
	root, _ := linkProject(t)
	s := newLinkStub(t, func(w http.ResponseWriter, body []byte) {
		stream(w, map[string]any{"event": "result", "data": linkReport(true)})
	})
	code, out, errOut := runCLI(t, "flow", "run", "home", "--project", root, "--link", s.URL)
	if code != 0 {
		t.Fatalf("exit: got %d, want 0\n%s\n%s", code, out, errOut)
	}
	if got, ok := s.LastCall(t)["snapshotDefaults"]; ok {
		t.Errorf("without limits: got snapshotDefaults %s, want none", got)
	}
	writeConfig(t, root, "snapshot:\n  maxMismatch: 0.01\n  threshold: 0.05\n")
	code, out, errOut = runCLI(t, "flow", "run", "home", "--project", root, "--link", s.URL, "--max-diff-pixels", "0", "--threshold", "0.2")
	if code != 0 {
		t.Fatalf("exit: got %d, want 0\n%s\n%s", code, out, errOut)
	}
	want := `{"maxMismatch":0.01,"maxDiffPixels":0,"threshold":0.2,"sources":{"maxDiffPixels":"flag --max-diff-pixels","maxMismatch":".argent/toolserver.yaml","threshold":"flag --threshold"}}`
	if got := string(s.LastCall(t)["snapshotDefaults"]); got != want {
		t.Errorf("snapshotDefaults: got %s, want %s", got, want)
	}
}

func TestFlowSchemaConfig(t *testing.T) {
	t.Parallel()
	code, out, errOut := runCLI(t, "flow", "schema", "--config")
	if code != 0 || string(flow.ConfigSchema()) != out {
		t.Fatalf("flow schema --config: exit %d, got\n%s%s\nwant the config schema", code, out, errOut)
	}
	code, out, _ = runCLI(t, "flow", "schema")
	if code != 0 || string(flow.Schema()) != out || !strings.Contains(out, `"stylePath"`) {
		t.Errorf("flow schema: exit %d, want the flow schema with the snapshot options", code)
	}
}

// TestSnapshotLimitsApplied: the config file, a flag over it and a
// step's own limit decide a real comparison in that order, and the
// output says which limit failed it and where it came from. The change is
// "not clicked" becoming "clicked 1": the strict default fails it, 0.5 %
// from a flag or the config passes it.
func TestSnapshotLimitsApplied(t *testing.T) {
	t.Parallel()
	root := writeProject(t, map[string]string{
		"home.yaml":   "steps:\n  - launch: \"{{URL}}/app.html\"\n  - snapshot: home\n",
		"strict.yaml": "steps:\n  - launch: \"{{URL}}/app.html\"\n  - snapshot: { name: home, maxDiffPixels: 0 }\n",
	})
	dev := "--device=" + sharedDevice(t, "chromium-cdp-700x501")
	for _, name := range []string{"home", "strict"} {
		if code, out, _ := runCLI(t, "flow", "run", name, "--project", root, dev, "--update-baselines"); code != 0 {
			t.Fatalf("update %s: exit %d\n%s", name, code, out)
		}
	}
	flows := filepath.Join(root, ".argent", "flows")
	for _, name := range []string{"home", "strict"} {
		p := filepath.Join(flows, name+".yaml")
		b, _ := os.ReadFile(p)
		os.WriteFile(p, []byte(strings.Replace(string(b), "\n  - snapshot", "\n  - tap: Go now\n  - snapshot", 1)), 0o644)
	}
	if code, out, _ := runCLI(t, "flow", "run", "home", "--project", root, dev); code != 1 || !strings.Contains(out, "pixels differ, 0 px allowed (default on chromium) (home__chromium-700x501.png)") {
		t.Fatalf("the strict default: exit %d\n%s", code, out)
	}
	if code, out, _ := runCLI(t, "flow", "run", "home", "--project", root, dev, "--max-mismatch", "0.5"); code != 0 || !strings.Contains(out, "differ within the tolerance") || !strings.Contains(out, "maxMismatch 0.5% (flag --max-mismatch)") {
		t.Fatalf("within a flag's 0.5%%: exit %d\n%s", code, out)
	}
	writeConfig(t, root, "snapshot:\n  maxMismatch: 0.5\n")
	if code, out, _ := runCLI(t, "flow", "run", "home", "--project", root, dev); code != 0 || !strings.Contains(out, "maxMismatch 0.5% (.argent/toolserver.yaml)") {
		t.Fatalf("within the config's 0.5%%: exit %d\n%s", code, out)
	}
	writeConfig(t, root, "snapshot:\n  maxDiffPixels: 0\n")
	if code, out, _ := runCLI(t, "flow", "run", "home", "--project", root, dev); code != 1 || !strings.Contains(out, "maxDiffPixels 0 (.argent/toolserver.yaml)") {
		t.Fatalf("the config's maxDiffPixels: exit %d\n%s", code, out)
	}
	if code, out, _ := runCLI(t, "flow", "run", "home", "--project", root, dev, "--max-diff-pixels", "100000"); code != 0 || !strings.Contains(out, "maxDiffPixels 100000 (flag --max-diff-pixels)") {
		t.Fatalf("a flag over the config: exit %d\n%s", code, out)
	}
	if code, out, _ := runCLI(t, "flow", "run", "strict", "--project", root, dev, "--max-diff-pixels", "100000"); code != 1 || !strings.Contains(out, "maxDiffPixels 0 (the step)") {
		t.Fatalf("the step over a flag: exit %d\n%s", code, out)
	}
}
