package flow_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/toolserver/toolserver/device/cdp"
	"github.com/toolserver/toolserver/flow"
	"github.com/toolserver/toolserver/tool/flowtool"
)

// TestStepErrorsStayTyped: a browser killed under a waiting step makes
// that step an error whose Err matches flow.ErrInfrastructure (and still
// cdp.ErrCrashed), so Report.InfrastructureError finds it; a failed
// assertion on a live page has no such error.
func TestStepErrorsStayTyped(t *testing.T) {
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
	const id = "chromium-cdp-809x600"
	d, err := pool.Device(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pool.Stop(id) })
	run := func(name string, progress func(flow.StepReport)) *flow.Report {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
		defer cancel()
		f, _ := flow.Disk{}.Open(p.flows(), name+".yaml")
		rep, err := flow.Execute(ctx, flow.Options{Device: flowtool.Device{D: d}, Source: flow.Disk{}, Progress: progress}, flow.Entry{File: f, Name: name, StemFallback: name})
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
			if err := d.Kill(); err != nil {
				t.Errorf("kill: %v", err)
			}
		}
	})
	if got, want := lines(rep), "launch:pass await:error echo:skip"; got != want {
		t.Fatalf("steps: got %s, want %s\n%s", got, want, dump(rep))
	}
	ierr := rep.InfrastructureError()
	if !errors.Is(ierr, flow.ErrInfrastructure) || !errors.Is(ierr, cdp.ErrCrashed) || ierr != rep.Steps[1].Err {
		t.Fatalf("infrastructure error: got %v, want the await step's, matching ErrInfrastructure and cdp.ErrCrashed", ierr)
	}
}
