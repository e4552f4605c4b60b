package flow

import (
	"encoding/json"
	"errors"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// writeConfig writes data as the config file of a new project and
// returns the project root.
func writeConfig(t *testing.T, data string) string {
	t.Helper()
	root := t.TempDir()
	p := filepath.Join(root, ".argent", "toolserver.yaml")
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	return root
}

func TestLoadConfig(t *testing.T) {
	root := writeConfig(t, "# the CI gate\nsnapshot:\n  maxMismatch: 0.01\n  maxDiffPixels: 100\n  threshold: 0.05\n")
	d, err := LoadConfig(root)
	if err != nil {
		t.Fatal(err)
	}
	if d.MaxMismatch == nil || *d.MaxMismatch != 0.01 || d.MaxDiffPixels == nil || *d.MaxDiffPixels != 100 || d.Threshold == nil || *d.Threshold != 0.05 {
		t.Errorf("LoadConfig: got %+v, want 0.01, 100, 0.05", d)
	}
	want := map[string]string{"maxMismatch": ".argent/toolserver.yaml", "maxDiffPixels": ".argent/toolserver.yaml", "threshold": ".argent/toolserver.yaml"}
	if !maps.Equal(d.Sources, want) {
		t.Errorf("Sources: got %v, want %v", d.Sources, want)
	}

	part, err := LoadConfig(writeConfig(t, "snapshot: { maxDiffPixels: 0 }\n"))
	if err != nil {
		t.Fatal(err)
	}
	if part.MaxMismatch != nil || part.Threshold != nil || *part.MaxDiffPixels != 0 || len(part.Sources) != 1 {
		t.Errorf("one key: got %+v, want only maxDiffPixels 0", part)
	}
	for name, src := range map[string]string{"empty": "", "comment": "# nothing yet\n", "null snapshot": "snapshot:\n", "empty snapshot": "snapshot: {}\n"} {
		d, err := LoadConfig(writeConfig(t, src))
		if err != nil || d.MaxMismatch != nil || d.MaxDiffPixels != nil || d.Threshold != nil || len(d.Sources) != 0 {
			t.Errorf("%s: got %+v, %v, want no defaults and no error", name, d, err)
		}
	}
	d, err = LoadConfig(t.TempDir())
	if err != nil || d.MaxMismatch != nil || d.Sources != nil {
		t.Errorf("no config file: got %+v, %v, want no defaults and no error", d, err)
	}
}

// TestConfigErrors: a config file is read as strictly as a flow file:
// every problem names the file and, where it has one, the line.
func TestConfigErrors(t *testing.T) {
	cases := []struct {
		name, src string
		line      int
		msg       string
	}{
		{"unknown top-level key", "snapshot: {}\nsnapshots:\n  maxMismatch: 1\n", 2, `unknown top-level key "snapshots" (did you mean "snapshot"?) (allowed: snapshot, baseURL, expose, exposeOnly)`},
		{"unknown snapshot key", "snapshot:\n  maxMismatch: 1\n  maxMismatsh: 2\n", 3, `snapshot: unknown option "maxMismatsh" (did you mean "maxMismatch"?) (allowed: maxMismatch, maxDiffPixels, threshold, metric, windowSize, stopOnFailure)`},
		{"flow option not a limit", "snapshot:\n  mask: [a]\n", 2, `snapshot: unknown option "mask"`},
		{"maxMismatch range", "snapshot:\n  maxMismatch: 101\n", 2, "snapshot.maxMismatch must be a percent from 0 to 100, got the number 101"},
		{"maxMismatch percent sign", "snapshot:\n  maxMismatch: 1%\n", 2, `snapshot.maxMismatch must be a percent from 0 to 100, got "1%"`},
		{"maxDiffPixels fraction", "snapshot:\n  maxDiffPixels: 2.5\n", 2, "snapshot.maxDiffPixels must be a whole number of pixels from 0 to 2147483647, got the number 2.5"},
		{"maxDiffPixels negative", "snapshot:\n  maxDiffPixels: -1\n", 2, "snapshot.maxDiffPixels must be a whole number of pixels"},
		{"threshold range", "snapshot:\n  threshold: 1.1\n", 2, "snapshot.threshold must be a number from 0 to 1"},
		{"snapshot list", "snapshot: [1]\n", 1, "snapshot must be a map of the project's snapshot limits (maxMismatch, maxDiffPixels, threshold), got a list"},
		{"root list", "- snapshot: {}\n", 1, "a config file is a map (snapshot: { maxMismatch, maxDiffPixels, threshold }), got a list"},
		{"duplicate key", "snapshot:\n  threshold: 0.1\n  threshold: 0.2\n", 3, `duplicate key "threshold" (first at line 2)`},
		{"syntax", "snapshot:\n\tthreshold: 0.1\n", 2, "invalid YAML"},
		{"two documents", "snapshot: {}\n---\nsnapshot: {}\n", 2, "the file holds more than one YAML document (---); a config file is one document"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			root := writeConfig(t, c.src)
			_, err := LoadConfig(root)
			var ce *ConfigError
			if !errors.As(err, &ce) || !errors.Is(err, ErrInvalidConfig) {
				t.Fatalf("LoadConfig: got %v, want a *ConfigError", err)
			}
			if want := filepath.Join(root, ".argent", "toolserver.yaml"); ce.File != want {
				t.Errorf("File: got %q, want %q", ce.File, want)
			}
			if ce.Line != c.line {
				t.Errorf("Line: got %d, want %d (%v)", ce.Line, c.line, err)
			}
			if !strings.Contains(ce.Msg, c.msg) {
				t.Errorf("Msg: got %q, want it to contain %q", ce.Msg, c.msg)
			}
			if errors.Is(err, ErrInvalid) {
				t.Errorf("a config error matches ErrInvalid (a bad flow file); want it told apart")
			}
		})
	}
	root := writeConfig(t, "snapshot:\n  maxMismatch: 101\n")
	_, err := LoadConfig(root)
	if want := filepath.Join(root, ".argent", "toolserver.yaml") + ": line 2: snapshot.maxMismatch must be a percent from 0 to 100, got the number 101"; err == nil || err.Error() != want {
		t.Errorf("Error(): got %v, want %q", err, want)
	}
}

func TestConfigFileShapes(t *testing.T) {
	big := writeConfig(t, "# "+strings.Repeat("x", MaxConfigBytes)+"\n")
	if _, err := LoadConfig(big); !errors.Is(err, ErrInvalidConfig) || !strings.Contains(err.Error(), "a config file is at most 65536 bytes (64 KiB)") {
		t.Errorf("over the cap: got %v, want the size refused", err)
	}
	if _, err := ParseConfig("x.yaml", []byte(strings.Repeat(" ", MaxConfigBytes+1))); !errors.Is(err, ErrInvalidConfig) {
		t.Errorf("ParseConfig over the cap: got %v, want ErrInvalidConfig", err)
	}
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, ".argent", "toolserver.yaml"), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadConfig(dir); !errors.Is(err, ErrInvalidConfig) || !strings.Contains(err.Error(), "is a directory") {
		t.Errorf("a directory: got %v, want it refused", err)
	}
	bomb := "a: &a [x, x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]\nc: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]\nd: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]\ne: [*d, *d, *d, *d, *d, *d, *d, *d, *d, *d]\n"
	if _, err := ParseConfig("bomb.yaml", []byte(bomb)); !errors.Is(err, ErrInvalidConfig) || !strings.Contains(err.Error(), "YAML aliases add more than") {
		t.Errorf("alias bomb: got %v, want it refused before anything is read", err)
	}
}

// TestSnapshotDefaultsOver: the flags of flow run win over the config
// file, field by field, with their sources; what they leave unset keeps
// the file's value and source.
func TestSnapshotDefaultsOver(t *testing.T) {
	f1, f2, n := 0.1, 0.0, 5
	file := SnapshotDefaults{MaxMismatch: &f1, MaxDiffPixels: &n, Sources: map[string]string{"maxMismatch": ConfigFile, "maxDiffPixels": ConfigFile}}
	flags := SnapshotDefaults{MaxMismatch: &f2, Sources: map[string]string{"maxMismatch": "flag --max-mismatch"}}
	got := file.Over(flags)
	if *got.MaxMismatch != 0 || *got.MaxDiffPixels != 5 || got.Threshold != nil {
		t.Errorf("Over: got %+v, want maxMismatch 0 from the flag, 5 pixels from the file", got)
	}
	want := map[string]string{"maxMismatch": "flag --max-mismatch", "maxDiffPixels": ConfigFile}
	if !maps.Equal(got.Sources, want) {
		t.Errorf("Sources: got %v, want %v", got.Sources, want)
	}
	if file.Sources["maxMismatch"] != ConfigFile {
		t.Errorf("Over changed its receiver's sources: %v", file.Sources)
	}
	if empty := (SnapshotDefaults{}).Over(SnapshotDefaults{}); empty.MaxMismatch != nil || len(empty.Sources) != 0 {
		t.Errorf("nothing over nothing: got %+v", empty)
	}
}

// TestConfigSchema: the config file's schema allows exactly the keys the
// parser reads, accepts a valid file and refuses what it can express.
func TestConfigSchema(t *testing.T) {
	var s map[string]any
	if err := json.Unmarshal(ConfigSchema(), &s); err != nil {
		t.Fatalf("ConfigSchema is not JSON: %v", err)
	}
	if out := ConfigSchema(); !strings.HasSuffix(string(out), "}\n") || strings.HasSuffix(string(out), "\n\n") {
		t.Errorf("ConfigSchema: want one trailing newline")
	}
	props := s["properties"].(map[string]any)
	if got := slices.Sorted(maps.Keys(props)); !slices.Equal(got, slices.Sorted(slices.Values(configKeys))) {
		t.Errorf("top-level keys: got %v, want %v", got, configKeys)
	}
	snap := props["snapshot"].(map[string]any)["properties"].(map[string]any)
	if got := slices.Sorted(maps.Keys(snap)); !slices.Equal(got, slices.Sorted(slices.Values(configSnapshotKeys))) {
		t.Errorf("snapshot keys: got %v, want %v", got, configSnapshotKeys)
	}
	for k, v := range snap {
		if d, _ := v.(map[string]any)["description"].(string); d == "" {
			t.Errorf("snapshot.%s has no description", k)
		}
	}
	valid := []string{"", "snapshot: { maxMismatch: 0.01, maxDiffPixels: 100, threshold: 0.05 }", "snapshot: { threshold: 0 }", "snapshot: { stopOnFailure: true }"}
	invalid := []string{"snapshots: {}", "snapshot: { maxMismatch: 101 }", "snapshot: { maxDiffPixels: 1.5 }", "snapshot: { threshold: -1 }", "snapshot: { mask: [a] }", "snapshot: [1]", "snapshot: { stopOnFailure: 1 }"}
	for _, src := range valid {
		v := &validator{root: s}
		var x any = map[string]any{}
		if src != "" {
			x = yamlToJSON(t, []byte(src))
		}
		if errs := v.validate(s, x, "$"); len(errs) > 0 || v.unknown != nil {
			t.Errorf("%q: got schema errors %v (unknown keywords %v), want none", src, errs, v.unknown)
		}
		if _, err := ParseConfig("c.yaml", []byte(src)); err != nil {
			t.Errorf("%q: ParseConfig: %v", src, err)
		}
	}
	for _, src := range invalid {
		v := &validator{root: s}
		if errs := v.validate(s, yamlToJSON(t, []byte(src)), "$"); len(errs) == 0 {
			t.Errorf("%q: got no schema errors, want some", src)
		}
		if _, err := ParseConfig("c.yaml", []byte(src)); err == nil {
			t.Errorf("%q: ParseConfig accepted it", src)
		}
	}
}

// TestConfigStopOnFailure: the project's stopOnFailure is read as a
// boolean, names no source (it is no limit), and a level above wins.
func TestConfigStopOnFailure(t *testing.T) {
	d, err := ParseConfig("c.yaml", []byte("snapshot:\n  stopOnFailure: true\n"))
	if err != nil || d.StopOnFailure == nil || !*d.StopOnFailure || len(d.Sources) != 0 {
		t.Fatalf("got %+v, %v; want stopOnFailure true and no sources", d, err)
	}
	off := false
	if got := d.Over(SnapshotDefaults{StopOnFailure: &off}); got.StopOnFailure == nil || *got.StopOnFailure {
		t.Errorf("Over: got %v, want false", got.StopOnFailure)
	}
	if got := d.Over(SnapshotDefaults{}); got.StopOnFailure == nil || !*got.StopOnFailure {
		t.Errorf("Over nothing: got %v, want true kept", got.StopOnFailure)
	}
	_, err = ParseConfig("c.yaml", []byte("snapshot:\n  stopOnFailure: sometimes\n"))
	if err == nil || !strings.Contains(err.Error(), `c.yaml: line 2: snapshot.stopOnFailure must be true or false, got "sometimes"`) {
		t.Errorf("a bad value: %v", err)
	}
}

// TestConfigMetricAndWindow: the project's metric and windowSize are read
// with their source, refused out of range, and a level above wins.
func TestConfigMetricAndWindow(t *testing.T) {
	d, err := ParseConfig("c.yaml", []byte("snapshot:\n  metric: oklab\n  windowSize: 16\n"))
	if err != nil || d.Metric == nil || *d.Metric != "oklab" || d.WindowSize == nil || *d.WindowSize != 16 || d.Sources["metric"] != ConfigFile || d.Sources["windowSize"] != ConfigFile {
		t.Fatalf("got %+v, %v; want oklab and 16 from %s", d, err, ConfigFile)
	}
	yiq, eight := "yiq", 8
	got := d.Over(SnapshotDefaults{Metric: &yiq, WindowSize: &eight, Sources: map[string]string{"metric": "flag", "windowSize": "flag"}})
	if *got.Metric != "yiq" || *got.WindowSize != 8 || got.Sources["metric"] != "flag" {
		t.Errorf("Over: got %+v", got)
	}
	for _, c := range []struct{ yaml, want string }{
		{"snapshot:\n  metric: lab\n", `c.yaml: line 2: snapshot.metric must be one of yiq, oklab`},
		{"snapshot:\n  windowSize: 5000\n", `c.yaml: line 2: snapshot.windowSize must be a whole number of pixels from 1 to 4096`},
	} {
		if _, err := ParseConfig("c.yaml", []byte(c.yaml)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: got %v, want %q", c.yaml, err, c.want)
		}
	}
}
