package run_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolserver/toolserver/device/cdp"
	"github.com/toolserver/toolserver/device/cdp/cdptest"
	"github.com/toolserver/toolserver/device/cdprun"
	"github.com/toolserver/toolserver/flow"
	"github.com/toolserver/toolserver/flow/run"
)

func TestMain(m *testing.M) { cdptest.Main(m) }

// project is a temp project with .argent/flows.
type project struct {
	t    *testing.T
	root string
}

func newProject(t *testing.T) *project {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(filepath.Join(root, ".argent", "flows"), 0o755)
	return &project{t: t, root: root}
}

func (p *project) flows() string { return filepath.Join(p.root, ".argent", "flows") }

// write puts a file under the project; {{URL}} is the test page server.
func (p *project) write(rel, body string) string {
	p.t.Helper()
	path := filepath.Join(p.root, rel)
	os.MkdirAll(filepath.Dir(path), 0o755)
	body = strings.ReplaceAll(body, "{{URL}}", cdptest.Pages(p.t))
	body = strings.ReplaceAll(body, "{{ROOT}}", p.root)
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		p.t.Fatal(err)
	}
	return path
}

func device(t *testing.T, id string) run.Device {
	t.Helper()
	return cdprun.Device{D: cdptest.Device(t, id)}
}

// run runs <project>/.argent/flows/<name>.yaml.
func (p *project) run(t *testing.T, dev run.Device, name string, update bool) *flow.Report {
	t.Helper()
	rep, err := p.runErr(dev, name, update)
	if err != nil {
		t.Fatalf("run %s: %v", name, err)
	}
	return rep
}

// startAtOnce starts the flows names[i] on the devices devs[i], all at
// once, and returns a function that waits for their reports, in order.
// It is for flows that wait out a timeout: a test calls it before
// t.Parallel, so the waits run while the package's other tests start,
// rather than after the test is given a parallel slot, which often comes
// last (then the package ends with the CPUs idle, waiting).
func (p *project) startAtOnce(t *testing.T, devs []run.Device, names ...string) (wait func() []*flow.Report) {
	t.Helper()
	reps := make([]*flow.Report, len(names))
	errs := make([]error, len(names))
	var wg sync.WaitGroup
	for i, name := range names {
		wg.Go(func() { reps[i], errs[i] = p.runErr(devs[i], name, false) })
	}
	return func() []*flow.Report {
		t.Helper()
		wg.Wait()
		for i, err := range errs {
			if err != nil {
				t.Fatalf("run %s: %v", names[i], err)
			}
		}
		return reps
	}
}

func (p *project) runErr(dev run.Device, name string, update bool) (*flow.Report, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	f, err := run.Disk{}.Open(p.flows(), name+".yaml")
	if err != nil {
		return nil, err
	}
	return run.Execute(ctx, run.Options{Device: dev, Source: run.Disk{}, UpdateBaselines: update}, run.Entry{File: f, Name: name, StemFallback: name})
}

// lines renders a report compactly: "kind:status[:flow@depth]" per step.
func lines(rep *flow.Report) string {
	var out []string
	for _, s := range rep.Steps {
		l := s.Kind + ":" + s.Status
		if s.Flow != rep.Flow || s.Depth > 0 {
			l += fmt.Sprintf(":%s@%d", s.Flow, s.Depth)
		}
		out = append(out, l)
	}
	return strings.Join(out, " ")
}

func dump(rep *flow.Report) string {
	b, _ := json.MarshalIndent(rep, "", "  ")
	return string(b)
}

func TestRunPassesAndCounts(t *testing.T) {
	t.Parallel()
	p := newProject(t)
	p.write(".argent/flows/basic.yaml", `steps:
  - echo: starting
  - launch: "{{URL}}/app.html"
  - tap: Go now
  - assert: { text: { in: { id: out }, equals: clicked 1 } }
  - type: { into: { id: username }, text: Ada, submit: false }
  - await: { visible: { text: hello Ada } }
  - wait: 10
`)
	rep := p.run(t, device(t, "chromium-cdp-800x600"), "basic", false)
	if !rep.OK || rep.Passed != 6 || rep.Failed+rep.Errored+rep.Skipped != 0 {
		t.Fatalf("got %s\n%s", lines(rep), dump(rep))
	}
	if rep.Steps[0].Kind != "echo" || rep.Steps[0].Message != "starting" || rep.Steps[0].Index != 0 || rep.Steps[6].Index != 6 {
		t.Fatalf("echo line or indices wrong: %s", dump(rep))
	}
	if rep.Device != "chromium-cdp-800x600" || rep.Flow != "basic" {
		t.Fatalf("device/flow: got %q %q", rep.Device, rep.Flow)
	}
}

func TestFailureStopsAndSkips(t *testing.T) {
	p := newProject(t)
	p.write(".argent/flows/stop.yaml", `steps:
  - launch: "{{URL}}/app.html"
  - assert: { visible: { text: not on this page } }
  - tap: Go now
  - when:
      visible: { text: Go now }
    steps:
      - tap: Go now
  - echo: never said
`)
	// A tap on a renamed button says what was looked for and what is there.
	p.write(".argent/flows/renamed.yaml", `steps:
  - launch: "{{URL}}/app.html"
  - tap: { text: Go later, role: button }
`)
	// Each waits out the default await timeout on a device of its own.
	wait := p.startAtOnce(t, []run.Device{device(t, "chromium-cdp-801x600"), device(t, "chromium-cdp-801x601")}, "stop", "renamed")
	t.Parallel()
	reps := wait()
	t.Run("stop", func(t *testing.T) {
		rep := reps[0]
		want := "launch:pass assert:fail tap:skip when:skip tap:skip:stop@1 echo:skip"
		if got := lines(rep); got != want || rep.OK {
			t.Fatalf("got %s, want %s", got, want)
		}
		if !strings.Contains(rep.Steps[1].Reason, `no element matched selector text="not on this page"`) {
			t.Fatalf("assert reason: %q", rep.Steps[1].Reason)
		}
		for _, s := range rep.Steps[2:] {
			if s.Reason != "" {
				t.Fatalf("a skip after a stop has no reason, got %q", s.Reason)
			}
		}
		if rep.Failed != 1 || rep.Skipped != 3 || rep.Passed != 1 {
			t.Fatalf("counts: %+v", rep)
		}
	})
	t.Run("renamed", func(t *testing.T) {
		renamed := reps[1]
		if s := renamed.Steps[1]; s.Status != "fail" || !strings.Contains(s.Reason, `no visible element matched selector text="Go later" role="button"; similar elements on the page: id="top" role="button" text="Go now"`) {
			t.Fatalf("not found: %s %q", s.Status, s.Reason)
		}
	})
}

func TestWhenBlocks(t *testing.T) {
	t.Parallel()
	p := newProject(t)
	p.write(".argent/flows/when.yaml", `steps:
  - launch: "{{URL}}/app.html"
  - when: { platform: chromium }
    steps:
      - tap: Go now
  - when: { visible: { text: nowhere to be seen } }
    steps:
      - tap: nowhere to be seen
      - echo: skipped too
  - assert: { text: { in: { id: out }, equals: clicked 1 } }
`)
	rep := p.run(t, device(t, "chromium-cdp-802x600"), "when", false)
	want := "launch:pass when:pass tap:pass:when@1 when:skip tap:skip:when@1 echo:skip:when@1 assert:pass"
	if got := lines(rep); got != want || !rep.OK {
		t.Fatalf("got %s, want %s\n%s", got, want, dump(rep))
	}
	if !strings.HasPrefix(rep.Steps[3].Reason, "condition not met (") || !strings.HasSuffix(rep.Steps[3].Reason, "block skipped (2 steps)") || rep.Steps[4].Reason != "when block skipped" {
		t.Fatalf("when reasons: %q / %q", rep.Steps[3].Reason, rep.Steps[4].Reason)
	}
}

func TestRunFragments(t *testing.T) {
	t.Parallel()
	p := newProject(t)
	// The fragment lives elsewhere and is reached through a symlink: its
	// own run: resolves beside its real file, not beside the link.
	p.write("shared/login.yaml", `steps:
  - tap: Go now
  - run: more
`)
	p.write("shared/more.yaml", `steps:
  - assert: { text: { in: { id: out }, contains: clicked } }
`)
	os.Symlink(filepath.Join(p.root, "shared", "login.yaml"), filepath.Join(p.flows(), "login.yaml"))
	p.write(".argent/flows/main.yaml", `steps:
  - launch: "{{URL}}/app.html"
  - run: login
`)
	rep := p.run(t, device(t, "chromium-cdp-803x600"), "main", false)
	want := "launch:pass run:pass:login@0 tap:pass:login@1 run:pass:more@1 assert:pass:more@2"
	if got := lines(rep); got != want || !rep.OK {
		t.Fatalf("got %s, want %s\n%s", got, want, dump(rep))
	}
}

func TestRunErrors(t *testing.T) {
	t.Parallel()
	p := newProject(t)
	p.write(".argent/flows/missing.yaml", "steps:\n  - run: nothere\n")
	p.write(".argent/flows/a.yaml", "steps:\n  - run: b\n")
	p.write(".argent/flows/b.yaml", "steps:\n  - run: a.yaml\n")
	p.write(".argent/flows/Upper.yaml", "steps:\n  - echo: hi\n")
	p.write(".argent/flows/folded.yaml", "steps:\n  - run: upper\n")
	p.write(".argent/flows/bad.yaml", "steps:\n  - run: broken\n")
	p.write(".argent/flows/broken.yaml", "steps:\n  - frobnicate: 1\n")
	for _, tc := range []struct{ flow, want string }{
		{"missing", `could not load fragment "nothere.yaml": ENOENT: no such file or directory, open '` + filepath.Join(p.flows(), "nothere.yaml") + `'`},
		{"a", "cyclic flow reference: a → b → ./a"},
		{"folded", `mis-cased fragment reference "upper.yaml": no directory entry is named "upper.yaml" (this filesystem matched it case-insensitively to "Upper.yaml")`},
		{"bad", `could not load fragment "broken.yaml": ` + filepath.Join(p.flows(), "broken.yaml") + ": step 1"},
	} {
		t.Run(tc.flow, func(t *testing.T) {
			rep := p.run(t, nil, tc.flow, false)
			last := rep.Steps[len(rep.Steps)-1]
			if last.Status != "error" || !strings.HasPrefix(last.Reason, tc.want) {
				t.Fatalf("got %s %q, want error starting %q", last.Status, last.Reason, tc.want)
			}
		})
	}
}

func TestDepthLimit(t *testing.T) {
	t.Parallel()
	p := newProject(t)
	// f0 → f1 → … ; level 20 runs, level 21 does not.
	for i := 0; i <= 21; i++ {
		p.write(fmt.Sprintf(".argent/flows/f%d.yaml", i), fmt.Sprintf("steps:\n  - echo: level %d\n  - run: f%d\n", i, i+1))
	}
	rep := p.run(t, nil, "f0", false)
	var echoes []string
	for _, s := range rep.Steps {
		if s.Kind == "echo" {
			echoes = append(echoes, s.Message)
		}
	}
	last := rep.Steps[len(rep.Steps)-1]
	if echoes[len(echoes)-1] != "level 20" || last.Status != "error" || last.Reason != "max run depth exceeded" {
		t.Fatalf("last echo %q, last step %s %q; want level 20 then max run depth exceeded", echoes[len(echoes)-1], last.Status, last.Reason)
	}
}

func TestCaseFoldedEntryIsRejected(t *testing.T) {
	t.Parallel()
	p := newProject(t)
	p.write(".argent/flows/Home.yaml", "steps:\n  - echo: hi\n")
	_, err := p.runErr(nil, "home", false)
	if err == nil || !strings.HasPrefix(err.Error(), `Invalid flow name "home": no saved flow is named "home.yaml"`) {
		t.Fatalf("got %v", err)
	}
	_, err = p.runErr(nil, "absent", false)
	if err == nil || err.Error() != "ENOENT: no such file or directory, open '"+filepath.Join(p.flows(), "absent.yaml")+"'" {
		t.Fatalf("got %v", err)
	}
}

func TestSecretsAreRedacted(t *testing.T) {
	t.Setenv("ARGENT_SECRET_PW", "hunter2")
	p := newProject(t)
	p.write(".argent/flows/secret.yaml", `steps:
  - launch: "{{URL}}/app.html"
  - type: { into: { id: username }, text: "{{secret:PW}}", submit: false }
  - assert: { text: { in: { id: echo }, equals: "hello nope" } }
`)
	dev := device(t, "chromium-cdp-804x600")
	rep := p.run(t, dev, "secret", false)
	b, _ := json.Marshal(rep)
	if strings.Contains(string(b), "hunter2") {
		t.Fatalf("the secret leaked into the report: %s", b)
	}
	if rep.Steps[2].Status != "fail" || !strings.Contains(rep.Steps[2].Reason, "{{secret:PW}}") {
		t.Fatalf("want the failing assert to show the placeholder, got %q", rep.Steps[2].Reason)
	}
	// The secret is looked up before the page is touched: the page of the
	// run above will do.
	p.write(".argent/flows/nosecret.yaml", `steps:
  - type: { into: { id: username }, text: "{{secret:NOPE_NOT_SET}}" }
`)
	rep = p.run(t, dev, "nosecret", false)
	if s := rep.Steps[0]; s.Status != "error" || !strings.Contains(s.Reason, `unknown secret "NOPE_NOT_SET"`) {
		t.Fatalf("missing secret: %s %q", s.Status, s.Reason)
	}
}

func TestIdleNeverFails(t *testing.T) {
	t.Parallel()
	p := newProject(t)
	p.write(".argent/flows/idle.yaml", `steps:
  - launch: "{{URL}}/busy.html"
  - await: { idle: true, stableFor: 200, timeout: 600 }
`)
	rep := p.run(t, device(t, "chromium-cdp-805x600"), "idle", false)
	if s := rep.Steps[1]; !rep.OK || s.Kind != "idle" || s.Status != "pass" || !strings.Contains(s.Warning, "never held still") {
		t.Fatalf("got %s\n%s", lines(rep), dump(rep))
	}
}

func devAdapter(d *cdp.Device) run.Device { return cdprun.Device{D: d} }

// TestHungPageNeverHangsTheRun: a page whose script never returns fails
// its step after the step's budget; the run ends, and the next launch on
// the same device works.
func TestHungPageNeverHangsTheRun(t *testing.T) {
	t.Parallel()
	p := newProject(t)
	d := cdptest.Device(t, "chromium-cdp-807x600")
	dev := devAdapter(d)
	// The page is opened before the run, outside the budget of its steps
	// (1s: the hung page keeps a CPU busy until it is replaced), which a
	// busy machine's page load could exceed.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := d.Launch(ctx, cdptest.Pages(t)+"/hang.html"); err != nil {
		t.Fatal(err)
	}
	p.write(".argent/flows/hang.yaml", `steps:
  - tap: Freeze
  - assert: { visible: { text: Freeze } }
`)
	f, _ := run.Disk{}.Open(p.flows(), "hang.yaml")
	rep, err := run.Execute(ctx, run.Options{Device: dev, Source: run.Disk{}, StepTimeout: time.Second}, run.Entry{File: f, Name: "hang", StemFallback: "hang"})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := lines(rep), "tap:error assert:skip"; got != want {
		t.Fatalf("got %s, want %s\n%s", got, want, dump(rep))
	}
	for _, s := range rep.Steps {
		if s.Status == "error" && !strings.Contains(s.Reason, "did not finish within 1s") {
			t.Fatalf("reason: %q", s.Reason)
		}
	}
	p.write(".argent/flows/after.yaml", "steps:\n  - launch: \"{{URL}}/app.html\"\n  - tap: Go now\n")
	if rep := p.run(t, dev, "after", false); !rep.OK {
		t.Fatalf("the device did not recover: %s", dump(rep))
	}
}

func TestIsLaunchURL(t *testing.T) {
	t.Parallel()
	for t2, want := range map[string]bool{
		"https://shop.example/": true, "file:///tmp/a.html": true, "about:blank": true, "data:text/html,hi": true,
		"../site/index.html": false, "site/index.html": false, "/abs/index.html": false, `C:\site\a.html`: false, "C:/site/a.html": false,
	} {
		if got := flow.IsLaunchURL(t2); got != want {
			t.Errorf("IsLaunchURL(%q): got %v, want %v", t2, got, want)
		}
	}
}
