package linked

import (
	"path/filepath"
	"reflect"
	"slices"
	"testing"

	"github.com/toolserver/toolserver/flow"
	flowrun "github.com/toolserver/toolserver/flow/run"
	linkclient "github.com/toolserver/toolserver/link/client"
	"github.com/toolserver/toolserver/suite"
	"github.com/toolserver/toolserver/wire"
)

// nopPrinter shows nothing.
type nopPrinter struct{}

func (nopPrinter) Start(string, string)                 {}
func (nopPrinter) Progress(flow.StepReport)             {}
func (nopPrinter) Waiting(string)                       {}
func (nopPrinter) Warn(string)                          {}
func (nopPrinter) Kept(int, string, string)             {}
func (nopPrinter) Resent(string, string, string, error) {}

func newRun(t *testing.T, arg string, o Options) *Run {
	t.Helper()
	r, err := New(linkclient.NewClient("http://127.0.0.1:1", "", nil), arg, o, nopPrinter{})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestArgs: a flow named by its name goes by name with the project's
// root, one named by a path goes by its path; the update mode is sent as
// updateBaselines only for all, and as our updateOnly otherwise.
func TestArgs(t *testing.T) {
	project := t.TempDir()
	target := suite.Target{Name: "checkout", Path: filepath.Join(project, "checkout.yaml")}
	for _, tc := range []struct {
		name   string
		arg    string
		o      Options
		want   map[string]any
		absent []string
	}{
		{name: "by name", arg: "checkout", o: Options{Project: project, Device: "chromium-cdp-1280x800"},
			want:   map[string]any{wire.ArgName: "checkout", wire.ArgProjectRoot: project, wire.ArgDevice: "chromium-cdp-1280x800", wire.ArgPrerequisiteAcknowledged: true},
			absent: []string{wire.ArgFlowPath, wire.ArgUpdateBaselines, wire.ArgUpdateOnly, wire.ArgStrict, wire.ArgBaseURL}},
		{name: "by path", arg: "flows/checkout.yaml", o: Options{Project: project, Update: flowrun.UpdateAll, Strict: true},
			want:   map[string]any{wire.ArgFlowPath: target.Path, wire.ArgUpdateBaselines: true, wire.ArgStrict: true, wire.ArgDevice: ""},
			absent: []string{wire.ArgName, wire.ArgUpdateOnly}},
		{name: "update missing", arg: "checkout", o: Options{Project: project, Update: flowrun.Update("missing"), BaseURL: "http://localhost:3000"},
			want:   map[string]any{wire.ArgUpdateOnly: "missing", wire.ArgBaseURL: "http://localhost:3000"},
			absent: []string{wire.ArgUpdateBaselines}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := newRun(t, tc.arg, tc.o).Args(target)
			for k, v := range tc.want {
				if !reflect.DeepEqual(got[k], v) {
					t.Errorf("%s: got %v, want %v", k, got[k], v)
				}
			}
			for _, k := range tc.absent {
				if v, ok := got[k]; ok {
					t.Errorf("%s: got %v, want it absent", k, v)
				}
			}
		})
	}
}

// TestTargetDevice: a target's own device wins over the run's.
func TestTargetDevice(t *testing.T) {
	got := newRun(t, "checkout", Options{Device: "a"}).Args(suite.Target{Name: "checkout", Device: "b"})
	if got[wire.ArgDevice] != "b" {
		t.Errorf("device: got %v, want b", got[wire.ArgDevice])
	}
}

func TestByName(t *testing.T) {
	dir := t.TempDir()
	for arg, want := range map[string]bool{
		"checkout":      true,
		"checkout.yaml": false,
		dir:             false,
		"not a name!":   false,
	} {
		if got := ByName(arg); got != want {
			t.Errorf("ByName(%q): got %v, want %v", arg, got, want)
		}
	}
}

func TestURLs(t *testing.T) {
	for v, want := range map[string][]string{
		"":                       nil,
		"http://a":               {"http://a"},
		" http://a , http://b,,": {"http://a", "http://b"},
	} {
		if got := URLs(v); !slices.Equal(got, want) {
			t.Errorf("URLs(%q): got %q, want %q", v, got, want)
		}
	}
}

// TestArtifactPath: an image goes under its flow as <key>-<role>.png; a
// nested run's under the nested flow; names that would leave the
// directory are refused.
func TestArtifactPath(t *testing.T) {
	for _, tc := range []struct {
		name, key, filename string
		want                string
		ok                  bool
	}{
		{name: "key", key: "basket.png", filename: "checkout-basket-diff.png", want: filepath.Join("art", "checkout", "basket-diff.png"), ok: true},
		{name: "nested run", key: "login", filename: "sign-in-login-diff.png", want: filepath.Join("art", "sign-in", "login-diff.png"), ok: true},
		{name: "no key", filename: "x/shot.png", want: filepath.Join("art", "checkout", "shot.png"), ok: true},
		{name: "key leaves", key: "../evil", filename: "checkout-evil-diff.png", ok: false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := artifactPath("art", "checkout", "checkout", tc.key, "diff", tc.filename)
			if ok != tc.ok || got != tc.want {
				t.Errorf("got %q, %v; want %q, %v", got, ok, tc.want, tc.ok)
			}
		})
	}
}

func TestWarnRefusals(t *testing.T) {
	var lines []string
	n := WarnRefusals([]flow.BaselineWrite{{Path: "a.png"}, {Path: "b.png", Error: "outside the project"}}, func(l string) { lines = append(lines, l) })
	want := []string{"✗ baseline not written: b.png: outside the project"}
	if n != 1 || !slices.Equal(lines, want) {
		t.Errorf("got %d %q, want 1 %q", n, lines, want)
	}
}
