package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/toolserver/toolserver/device/cdp/cdptest"
	"github.com/toolserver/toolserver/fault"
	"github.com/toolserver/toolserver/flow"
)

// exitProject writes the flows of the exit-code tests: "dies" awaits an
// element that never comes (so the browser can be killed under it),
// "fails" asserts a text the page does not have.
func exitProject(t *testing.T) string {
	t.Helper()
	return writeProject(t, map[string]string{
		"dies.yaml":  "steps:\n  - launch: \"{{URL}}/app.html\"\n  - await: { visible: { id: never-there }, timeout: 60000 }\n",
		"fails.yaml": "steps:\n  - launch: \"{{URL}}/app.html\"\n  - assert: { visible: { text: nothing like this } }\n",
	})
}

// awaitLaunch waits until the run's output shows its launch step passed;
// the run ending first, or a minute going by, fails the test.
func awaitLaunch(t *testing.T, out, errOut *lineWatch, done <-chan int) {
	t.Helper()
	select {
	case <-out.seen:
	case code := <-done:
		t.Fatalf("flow run exited %d before the launch step passed\n%s\n%s", code, out, errOut)
	case <-time.After(time.Minute):
		t.Fatalf("no launch step reported\n%s\n%s", out, errOut)
	}
}

// lineWatch is a goroutine-safe writer that closes seen once its output
// holds a line with every one of want.
type lineWatch struct {
	mu   sync.Mutex
	buf  bytes.Buffer
	want []string
	seen chan struct{}
	once sync.Once
}

func newLineWatch(want ...string) *lineWatch {
	return &lineWatch{want: want, seen: make(chan struct{})}
}

func (w *lineWatch) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	n, err := w.buf.Write(p)
	for line := range strings.Lines(w.buf.String()) {
		all := true
		for _, s := range w.want {
			all = all && strings.Contains(line, s)
		}
		if all {
			w.once.Do(func() { close(w.seen) })
		}
	}
	return n, err
}

func (w *lineWatch) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

// runAsync runs the CLI in a goroutine; the channel gets its exit code.
func runAsync(args []string, s streams) <-chan int {
	done := make(chan int, 1)
	go func() { done <- run(context.Background(), args, s) }()
	return done
}

// waitExit waits for the CLI to return, or fails the test.
func waitExit(t *testing.T, done <-chan int, out, errOut interface{ String() string }) int {
	t.Helper()
	select {
	case code := <-done:
		return code
	case <-time.After(2 * time.Minute):
		t.Fatalf("flow run did not return\nstdout:\n%s\nstderr:\n%s", out, errOut)
		return 0
	}
}

// runAndKillBrowser runs flow run "dies" of root with the environment e
// and the extra args on a device of w×h, on a browser of its own (not the
// shared one), and kills that device's browser once the launch step is
// reported, while the await step polls for an element that never comes.
// It returns the exit code and the output.
func runAndKillBrowser(t *testing.T, root string, w, h int, e env, extra ...string) (int, *lineWatch, *lineWatch) {
	t.Helper()
	if pids := cdptest.BrowserPIDs(t, w, h); len(pids) > 0 {
		t.Fatalf("browsers of %dx%d before the run: got %v, want none", w, h, pids)
	}
	out, errOut := newLineWatch("✓", "launch"), newLineWatch()
	args := append([]string{"flow", "run", "dies", "--project", root, "--device", fmt.Sprintf("chromium-cdp-%dx%d", w, h)}, extra...)
	s := testStreams(t, e, out, errOut)
	s.pool = nil
	done := runAsync(args, s)
	awaitLaunch(t, out, errOut, done)
	pids := cdptest.BrowserPIDs(t, w, h)
	if len(pids) != 1 {
		t.Fatalf("browsers of %dx%d: got %v, want one", w, h, pids)
	}
	if err := syscall.Kill(pids[0], syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	return waitExit(t, done, out, errOut), out, errOut
}

// TestFlowRunExitsTwoWhenChromiumDies kills the browser while a step
// waits on a condition: the machinery failed, so flow run exits 2 (not 1,
// as for a failed assertion) and says why.
func TestFlowRunExitsTwoWhenChromiumDies(t *testing.T) {
	t.Parallel()
	code, out, errOut := runAndKillBrowser(t, exitProject(t), 613, 419, nil)
	if code != exitInfra {
		t.Fatalf("exit: got %d, want %d\nstdout:\n%s\nstderr:\n%s", code, exitInfra, out, errOut)
	}
	if !strings.Contains(errOut.String(), "chromium exited") || !strings.Contains(out.String(), "await") {
		t.Errorf("output: got\n%s\n%s\nwant the await step failed and \"chromium exited\" on stderr", out, errOut)
	}
}

// TestFlowRunExitsOneWhenAssertionFails: a flow that fails on its own is
// exit 1.
func TestFlowRunExitsOneWhenAssertionFails(t *testing.T) {
	t.Parallel()
	root := exitProject(t)
	code, out, errOut := runCLI(t, "flow", "run", "fails", "--project", root, "--device", sharedDevice(t, "chromium-cdp-611x417"))
	if code != exitFailed || !strings.Contains(out, "no visible element matched") && !strings.Contains(out, "no element matched") {
		t.Fatalf("exit: got %d, want %d and the assertion's reason\n%s\n%s", code, exitFailed, out, errOut)
	}
}

// TestLinkedFlowRunExitsTwoWhenServerGoesAway runs a flow on a real
// `toolserver serve` over a link and cuts the server off while the flow
// streams (after its first progress line): the link broke, so flow run
// exits 2 with the "closed before … finished" text of docs/link-protocol.md
// ("The call").
func TestLinkedFlowRunExitsTwoWhenServerGoesAway(t *testing.T) {
	t.Parallel()
	root := exitProject(t)
	e := env{envAuthToken: "exit-token"}
	dev := sharedDevice(t, "chromium-cdp-617x421")
	srv := newTCPProxy(t, strings.TrimPrefix(startServe(t, e, false), "http://"))
	out, errOut := newLineWatch("✓", "launch"), newLineWatch()
	done := runAsync([]string{"flow", "run", "dies", "--project", root, "--link", srv.URL(), "--device", dev}, testStreams(t, e, out, errOut))
	awaitLaunch(t, out, errOut, done)
	srv.Cut()
	code := waitExit(t, done, out, errOut)
	if code != exitInfra || !strings.Contains(errOut.String(), "closed before flow-execute finished") {
		t.Fatalf("exit: got %d, want %d and the closed-connection text\nstdout:\n%s\nstderr:\n%s", code, exitInfra, out, errOut)
	}
}

// TestLinkedFlowRunExitsTwoWhenServerChromiumDies kills the tool-server's
// browser while a linked flow waits on a condition: the server's step
// errors and is marked as the machinery's failure on the wire, so the
// client exits 2 as a local run does, not 1 as for a failed flow.
func TestLinkedFlowRunExitsTwoWhenServerChromiumDies(t *testing.T) {
	t.Parallel()
	root := exitProject(t)
	e := env{envAuthToken: "exit-token"}
	code, out, errOut := runAndKillBrowser(t, root, 619, 423, e, "--link", startServe(t, e, true))
	if code != exitInfra {
		t.Fatalf("exit: got %d, want %d\nstdout:\n%s\nstderr:\n%s", code, exitInfra, out, errOut)
	}
	if !strings.Contains(errOut.String(), "step 2 (await)") {
		t.Errorf("stderr: got\n%s\nwant the await step named as the machinery's failure", errOut)
	}
}

// TestFlowExit maps outcomes to exit codes by their kind alone.
func TestFlowExit(t *testing.T) {
	t.Parallel()
	report := func(ok bool, stepErr error) *flow.Report {
		r := &flow.Report{Flow: "f", OK: ok, Steps: []flow.StepReport{{Status: flow.StatusPass}}}
		if stepErr != nil {
			r.Steps[0].Status, r.Steps[0].Err = flow.StatusError, stepErr
		}
		return r
	}
	crashed := report(false, fault.Infrastructure(errors.New("chromium exited")))
	failed := report(false, errors.New("no element matched"))
	passed := report(true, nil)
	for _, tc := range []struct {
		name    string
		reports []*flow.Report
		err     error
		want    int
	}{
		{"all passed", []*flow.Report{passed, passed}, nil, exitOK},
		{"one failed", []*flow.Report{passed, failed}, nil, exitFailed},
		{"browser died in a step", []*flow.Report{failed, crashed}, nil, exitInfra},
		{"baseline not written", []*flow.Report{passed}, errors.New("a baseline was not written"), exitFailed},
		{"server unreachable", nil, fault.Infrastructure(errors.New("connection refused")), exitInfra},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := exitCode(flowRunError(tc.reports, tc.err)); got != tc.want {
				t.Fatalf("got %d, want %d", got, tc.want)
			}
		})
	}
}
