package run_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"syscall"
	"testing"
	"time"

	"github.com/toolserver/toolserver/device/cdp"
	"github.com/toolserver/toolserver/device/cdp/cdptest"
	"github.com/toolserver/toolserver/device/cdprun"
	"github.com/toolserver/toolserver/fault"
	"github.com/toolserver/toolserver/flow"
	"github.com/toolserver/toolserver/flow/run"
)

// TestStepErrorsStayTyped: a browser killed under a waiting step makes
// that step an error whose Err matches fault.ErrInfrastructure (and still
// cdp.ErrCrashed), so Report.InfrastructureError finds it; a failed
// assertion on a live page has no such error.
func TestStepErrorsStayTyped(t *testing.T) {
	t.Parallel()
	p := newProject(t)
	p.write(".argent/flows/dies.yaml", `steps:
  - launch: "{{URL}}/app.html"
  - await: { visible: { id: never-there }, timeout: 60000 }
  - echo: never reached
`)
	p.write(".argent/flows/fails.yaml", `steps:
  - launch: "{{URL}}/app.html"
  - assert: { visible: { text: nothing like this } }
`)
	// A pool of its own, one browser per device: killing the shared
	// rig's browser would fail every other test of the binary.
	const w, h = 809, 600
	pool := cdp.NewPool(cdp.Options{Log: io.Discard})
	t.Cleanup(func() { pool.Close() })
	d, err := pool.Device(context.Background(), fmt.Sprintf("chromium-cdp-%dx%d", w, h))
	if err != nil {
		t.Fatal(err)
	}
	run := func(name string, progress func(flow.StepReport)) *flow.Report {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
		defer cancel()
		f, _ := run.Disk{}.Open(p.flows(), name+".yaml")
		rep, err := run.Execute(ctx, run.Options{Device: cdprun.Device{D: d}, Source: run.Disk{}, Progress: progress}, run.Entry{File: f, Name: name, StemFallback: name})
		if err != nil {
			t.Fatal(err)
		}
		return rep
	}

	rep := run("fails", nil)
	if rep.OK || rep.Steps[1].Status != flow.StatusFail || rep.InfrastructureError() != nil {
		t.Fatalf("failed assertion: got %s, infrastructure error %v; want a failed step and none\n%s", lines(rep), rep.InfrastructureError(), dump(rep))
	}

	// Kill the browser once the launch step is reported: the await step
	// runs next and polls until the browser dies under it.
	rep = run("dies", func(s flow.StepReport) {
		if s.Kind == "launch" {
			pids := cdptest.BrowserPIDs(t, w, h)
			if len(pids) != 1 {
				t.Errorf("browsers of %dx%d: got %v, want one", w, h, pids)
				return
			}
			if err := syscall.Kill(pids[0], syscall.SIGKILL); err != nil {
				t.Errorf("kill: %v", err)
			}
		}
	})
	if got, want := lines(rep), "launch:pass await:error echo:skip"; got != want {
		t.Fatalf("steps: got %s, want %s\n%s", got, want, dump(rep))
	}
	ierr := rep.InfrastructureError()
	if !errors.Is(ierr, fault.ErrInfrastructure) || !errors.Is(ierr, cdp.ErrCrashed) || ierr != rep.Steps[1].Err {
		t.Fatalf("infrastructure error: got %v, want the await step's, matching ErrInfrastructure and cdp.ErrCrashed", ierr)
	}
}
