package run_test

import (
	"strings"
	"testing"

	"github.com/toolserver/toolserver/flow"
	"github.com/toolserver/toolserver/flow/run"
)

// twoChangedSnapshots adopts flow two's baselines on app.html ("first"
// not clicked, "second" in a fragment, clicked once) and returns what
// writes the flow so that both compare with a screen clicked one more
// time, its first snapshot step written as first says.
func (p *project) twoChangedSnapshots(t *testing.T, dev run.Device) func(first string) {
	t.Helper()
	p.write(".argent/flows/more.yaml", "steps:\n  - snapshot: second\n")
	p.write(".argent/flows/two.yaml", "steps:\n  - launch: \"{{URL}}/app.html\"\n  - snapshot: first\n  - tap: Go now\n  - run: more\n")
	if rep := p.run(t, dev, "two", true); !rep.OK {
		t.Fatalf("update: %s", dump(rep))
	}
	return func(first string) {
		p.write(".argent/flows/two.yaml", "steps:\n  - launch: \"{{URL}}/app.html\"\n  - tap: Go now\n  - "+first+"\n  - tap: Go now\n  - run: more\n  - echo: the end\n")
	}
}

// A snapshot's mismatch does not stop the flow on a chromium device: the
// later snapshot (in a fragment) is compared too, the flow fails at its
// end with both, and an echo after them still runs. stopOnFailure: true
// on the step, or as the project's default, stops at the first; the
// step's false wins over the project's true for that step only.
func TestEveryChangedSnapshotInOneRun(t *testing.T) {
	t.Parallel()
	p := newProject(t)
	dev := device(t, "chromium-cdp-800x596")
	change := p.twoChangedSnapshots(t, dev)
	change("snapshot: first")
	rep := p.run(t, dev, "two", false)
	want := "launch:pass tap:pass snapshot:fail tap:pass run:pass:more@0 snapshot:fail:more@1 echo:pass"
	if got := lines(rep); got != want || rep.OK || rep.Failed != 2 {
		t.Fatalf("got %s (ok %v, failed %d), want %s\n%s", got, rep.OK, rep.Failed, want, dump(rep))
	}
	for _, i := range []int{2, 5} {
		if s := rep.Steps[i]; s.Mismatch == nil || !strings.Contains(s.Reason, "0 px allowed (default on chromium)") {
			t.Errorf("step %d: %q %+v", i, s.Reason, s.Mismatch)
		}
	}

	stopped := "launch:pass tap:pass snapshot:fail tap:skip run:skip:more@0 echo:skip"
	change("snapshot: { name: first, stopOnFailure: true }")
	if got := lines(p.run(t, dev, "two", false)); got != stopped {
		t.Errorf("stopOnFailure: true: got %s, want %s", got, stopped)
	}

	project := run.Options{Snapshot: flow.SnapshotDefaults{StopOnFailure: ptr(true)}}
	change("snapshot: first")
	if got := lines(p.runOpts(t, dev, "two", project)); got != stopped {
		t.Errorf("the project's stopOnFailure: got %s, want %s", got, stopped)
	}
	// The fragment's snapshot keeps the project's true: it stops there.
	change("snapshot: { name: first, stopOnFailure: false }")
	if got, want := lines(p.runOpts(t, dev, "two", project)), strings.Replace(want, "echo:pass", "echo:skip", 1); got != want {
		t.Errorf("the step's false over the project's true: got %s, want %s", got, want)
	}
}

// Only a failed comparison goes on: a missing baseline is reported and
// the flow goes on to the next snapshot, but a failed step of another
// kind (an assert) stops the flow as before.
func TestOnlySnapshotFailuresGoOn(t *testing.T) {
	t.Parallel()
	p := newProject(t)
	dev := device(t, "chromium-cdp-800x595")
	p.write(".argent/flows/new.yaml", "steps:\n  - launch: \"{{URL}}/app.html\"\n  - snapshot: one\n  - snapshot: { name: two, cropOn: { id: top } }\n  - assert: { visible: { text: nowhere } }\n  - snapshot: three\n")
	rep := p.run(t, dev, "new", false)
	want := "launch:pass snapshot:fail snapshot:fail assert:fail snapshot:skip"
	if got := lines(rep); got != want {
		t.Fatalf("got %s, want %s\n%s", got, want, dump(rep))
	}
	for _, i := range []int{1, 2} {
		if s := rep.Steps[i]; !strings.HasPrefix(s.Reason, "no baseline for ") || s.Baseline == nil || s.Baseline.State != flow.BaselineMissing {
			t.Errorf("step %d: %q", i, s.Reason)
		}
	}
}
