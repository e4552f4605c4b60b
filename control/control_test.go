package control_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/toolserver/toolserver/control"
	"github.com/toolserver/toolserver/fault"
	"github.com/toolserver/toolserver/flow"
	"github.com/toolserver/toolserver/runs"
	"github.com/toolserver/toolserver/tool"
)

// fakeExecute is the plane's own input, a flow-execute of the test's: it
// says its flow and device as flowtool does (tool.FlowNamed,
// tool.DeviceHeld), reports one step per steps, and answers a report.
// block holds the call until its context ends (an abandonment, a stop);
// refuse makes its Check refuse the call; nest calls flow-execute again
// inside itself, as a tool: step would.
func fakeExecute(reg *tool.Registry) *tool.Tool {
	return &tool.Tool{
		Name: flow.ToolFlowExecute,
		InputSchema: tool.Object(map[string]*tool.Schema{
			"name":   tool.String("the flow"),
			"steps":  tool.Integer("steps to report", 0, 10),
			"block":  tool.Bool("hold until the context ends"),
			"refuse": tool.Bool("refused by the check"),
			"nest":   tool.Bool("call flow-execute inside"),
		}),
		Check: func(ctx context.Context, call *tool.Call) error {
			a, _ := tool.Decode[struct{ Refuse bool }](call)
			if a.Refuse {
				return &fault.Error{Kind: fault.Validation, Field: "name", Message: "no such flow"}
			}
			return nil
		},
		Run: func(ctx context.Context, call *tool.Call) (any, error) {
			a, err := tool.Decode[struct {
				Name  string
				Steps int
				Block bool
				Nest  bool
			}](call)
			if err != nil {
				return nil, err
			}
			call.Progress(tool.FlowNamed{Name: a.Name})
			call.Progress(tool.DeviceHeld{Device: "chromium-cdp-1280x800"})
			for i := range a.Steps {
				call.Progress(flow.StepReport{Index: i, Kind: "echo", Flow: a.Name, Status: flow.StatusPass})
			}
			if a.Nest {
				if _, err := reg.Invoke(ctx, flow.ToolFlowExecute, []byte(`{"name":"inner","steps":1}`), tool.Options{}); err != nil {
					return nil, err
				}
			}
			if a.Block {
				<-ctx.Done()
				return nil, context.Cause(ctx)
			}
			return &flow.Report{Flow: a.Name, OK: true, Passed: a.Steps}, nil
		},
	}
}

// rig is a plane over a SQLite store in a temp dir and a registry whose
// flow-execute is fakeExecute.
type rig struct {
	st    *runs.Store
	reg   *tool.Registry
	plane *control.Plane
}

func newRig(t *testing.T) *rig {
	t.Helper()
	st, err := runs.Open(t.TempDir(), 0)
	if err != nil {
		t.Fatal(err)
	}
	r := &rig{st: st}
	r.plane = r.newPlane(control.Config{Runs: st})
	t.Cleanup(func() {
		r.plane.Stop()
		st.Close()
	})
	return r
}

// newPlane is a plane of cfg over a registry of its own (the plane wraps
// its flow-execute).
func (r *rig) newPlane(cfg control.Config) *control.Plane {
	r.reg = tool.NewRegistry()
	r.reg.Add(fakeExecute(r.reg))
	cfg.Tools = r.reg
	return control.New(cfg)
}

// start starts a run of args and waits for it to end, unless block.
func (r *rig) start(t *testing.T, args string) string {
	t.Helper()
	out, err := r.plane.Start(t.Context(), runs.StartRequest{ToolArgs: json.RawMessage(args)})
	if err != nil {
		t.Fatalf("start %s: %v", args, err)
	}
	if out.Status != runs.Running {
		t.Errorf("start answered %+v, want running", out)
	}
	if !strings.Contains(args, `"block"`) {
		r.plane.Wait()
	}
	return out.Run
}

// kinds are the kinds of the events of run id.
func (r *rig) kinds(t *testing.T, id string) string {
	t.Helper()
	evs, err := r.st.Events(t.Context(), id, 0)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range evs {
		out = append(out, e.Event.Kind)
	}
	return strings.Join(out, " ")
}

// interrupted records a run of POST /v1/runs whose server stopped under
// it: running, with no driver, its arguments recorded for a resume.
func (r *rig) interrupted(t *testing.T, args string) string {
	t.Helper()
	rec, err := r.st.Start(t.Context(), runs.Begin{Flow: "f", Source: "v1", Args: json.RawMessage(args)})
	if err != nil {
		t.Fatal(err)
	}
	if err := rec.End(nil, nil, runs.ErrStopping); err != nil {
		t.Fatal(err)
	}
	return rec.ID()
}

// TestStartRefusals: a request the plane refuses is a bad request (or,
// stopping, unavailable) and creates no run.
func TestStartRefusals(t *testing.T) {
	r := newRig(t)
	for _, tc := range []struct {
		name string
		req  runs.StartRequest
		want *fault.Error
		msg  string
	}{
		{"args not an object", runs.StartRequest{ToolArgs: json.RawMessage(`[1]`)}, runs.ErrBadRequest, "tool_args must be an object"},
		{"no args", runs.StartRequest{}, runs.ErrBadRequest, "tool_args must be an object"},
		{"a label over its bound", runs.StartRequest{ToolArgs: json.RawMessage(`{}`), Labels: map[string]string{strings.Repeat("k", runs.MaxLabelKey+1): "v"}}, runs.ErrBadRequest, "labels: "},
		{"a run id that is not a UUID", runs.StartRequest{ToolArgs: json.RawMessage(`{}`), RunID: "nope"}, runs.ErrBadRequest, `run_id "nope" is not a UUID`},
		{"an argument over its cap", runs.StartRequest{ToolArgs: json.RawMessage(fmt.Sprintf(`{"name":%q}`, strings.Repeat("n", 200)))}, runs.ErrBadRequest, "tool_args: "},
		{"the schema", runs.StartRequest{ToolArgs: json.RawMessage(`{"steps":"many"}`)}, runs.ErrBadRequest, "tool_args: "},
		{"the tool's check", runs.StartRequest{ToolArgs: json.RawMessage(`{"refuse":true}`)}, runs.ErrBadRequest, "tool_args: name: no such flow"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := r.plane.Start(t.Context(), tc.req)
			if !errors.Is(err, tc.want) || !strings.HasPrefix(err.Error(), tc.msg) {
				t.Errorf("got %v, want %s starting %q", err, tc.want.Code, tc.msg)
			}
		})
	}
	r.plane.Drain()
	if _, err := r.plane.Start(t.Context(), runs.StartRequest{ToolArgs: json.RawMessage(`{"name":"late"}`)}); !errors.Is(err, runs.ErrUnavailable) || !strings.Contains(err.Error(), "is stopping and starts no run") {
		t.Errorf("a start while draining: got %v, want unavailable", err)
	}
	if page, err := r.plane.List(t.Context(), runs.Filter{Limit: 50}); err != nil || len(page.Runs) != 0 {
		t.Errorf("the refused starts left runs: %+v %v", page.Runs, err)
	}
}

// TestStartRecords: a started run is driven to its end, its flow, device
// and steps recorded from the tool's notes and progress.
func TestStartRecords(t *testing.T) {
	r := newRig(t)
	id := r.start(t, `{"name":"greet","steps":2}`)
	run, err := r.st.Run(t.Context(), id)
	if err != nil {
		t.Fatal(err)
	}
	if run.Outcome != runs.Passed || run.Flow != "greet" || run.Device != "chromium-cdp-1280x800" || run.Source != "v1" || run.StepCount != 2 {
		t.Errorf("the run: %+v", run)
	}
	if got, want := r.kinds(t, id), "RunStarted StepCompleted StepCompleted RunCompleted"; got != want {
		t.Errorf("events %s, want %s", got, want)
	}
}

// TestToolsCallsRecorded: a flow-execute called as a tool (POST /tools,
// MCP) is a run of its own, source tools; one nested in it is part of it.
func TestToolsCallsRecorded(t *testing.T) {
	r := newRig(t)
	res, err := r.reg.Invoke(t.Context(), flow.ToolFlowExecute, []byte(`{"name":"outer","steps":1,"nest":true}`), tool.Options{})
	if rep, ok := res.(*flow.Report); err != nil || !ok || !rep.OK {
		t.Fatalf("the call: %v %v", res, err)
	}
	page, err := r.plane.List(t.Context(), runs.Filter{Limit: 50})
	if err != nil || len(page.Runs) != 1 {
		t.Fatalf("runs %+v %v: want the outer call's alone", page.Runs, err)
	}
	run := page.Runs[0]
	if run.Source != "tools" || run.Flow != "outer" || run.Outcome != runs.Passed || run.Resumable {
		t.Errorf("the run: %+v", run)
	}
	if got, want := r.kinds(t, run.ID), "RunStarted StepCompleted RunCompleted"; got != want {
		t.Errorf("events %s, want %s (the nested call records nothing of its own)", got, want)
	}
}

// TestResumeOutcomes: a finished run is left alone and reported, a run
// driving needs nothing, a /tools run cannot be re-driven, an unknown
// run is unknown, and a run no driver runs is re-driven as its next
// attempt.
func TestResumeOutcomes(t *testing.T) {
	r := newRig(t)
	done := r.start(t, `{"name":"done","steps":1}`)
	if out, err := r.plane.Resume(t.Context(), done); err != nil || out.Outcome != runs.Completed || !strings.Contains(string(out.Status), `"ok":true`) {
		t.Errorf("resume a finished run: %+v %v", out, err)
	}

	held := r.start(t, `{"name":"held","block":true}`)
	if out, err := r.plane.Resume(t.Context(), held); err != nil || out.Outcome != runs.ResumeDriving || string(out.Status) != `"running"` {
		t.Errorf("resume a run driving: %+v %v", out, err)
	}
	if _, err := r.plane.Abandon(t.Context(), held, "done with it"); err != nil {
		t.Fatal(err)
	}
	r.plane.Wait()

	if _, err := r.plane.Resume(t.Context(), "99999999-2222-4333-8444-555555555555"); !errors.Is(err, runs.ErrUnknownRun) {
		t.Errorf("resume an unknown run: %v", err)
	}

	lone := r.interrupted(t, `{"name":"again","steps":1}`)
	out, err := r.plane.Resume(t.Context(), lone)
	if err != nil || out.Outcome != runs.ResumeDriving {
		t.Fatalf("resume a run with no driver: %+v %v", out, err)
	}
	r.plane.Wait()
	run, err := r.st.Run(t.Context(), lone)
	if err != nil || run.Attempt != 2 || run.Outcome != runs.Passed {
		t.Errorf("the resumed run: %+v %v, want attempt 2, passed", run, err)
	}
	if got, want := r.kinds(t, lone), "RunStarted RunInterrupted RunResumed StepCompleted RunCompleted"; got != want {
		t.Errorf("events %s, want %s", got, want)
	}
}

// TestTakeOverAttempts: a run of a shared store that lost its driver is
// taken over as its next attempt while it has attempts left, and fails
// once it has had them all.
func TestTakeOverAttempts(t *testing.T) {
	r := newRig(t)
	// spent lost its driver on its second attempt: the first plane
	// resumed it, then stopped under it.
	spent := r.interrupted(t, `{"name":"spent","block":true}`)
	if out, err := r.plane.Resume(t.Context(), spent); err != nil || out.Outcome != runs.ResumeDriving {
		t.Fatalf("resume: %+v %v", out, err)
	}
	r.plane.Stop()
	fresh := r.interrupted(t, `{"name":"fresh","steps":1}`)

	r.plane = r.newPlane(control.Config{Runs: r.st})
	ids, err := r.plane.TakeOver(t.Context(), 2)
	if err != nil || len(ids) != 1 || ids[0] != fresh {
		t.Fatalf("take over: %v %v, want %s alone", ids, err, fresh)
	}
	r.plane.Wait()
	evs, err := r.st.Events(t.Context(), fresh, 0)
	if err != nil {
		t.Fatal(err)
	}
	var resumed map[string]any
	for _, e := range evs {
		if e.Event.Kind == runs.KindRunResumed {
			json.Unmarshal(e.Event.Payload, &resumed)
		}
	}
	if resumed["takeover"] != true || resumed["attempt"] != 2.0 {
		t.Errorf("the take-over's RunResumed: %v, want attempt 2, takeover", resumed)
	}
	if run, _ := r.st.Run(t.Context(), fresh); run.Outcome != runs.Passed || run.Attempt != 2 {
		t.Errorf("the run taken over: %+v", run)
	}
	run, err := r.st.Run(t.Context(), spent)
	if err != nil || run.Status.State != runs.Failed || !strings.Contains(run.Status.Error, "after 2 attempts") {
		t.Errorf("the run out of attempts: %+v %v, want failed after 2 attempts", run.Status, err)
	}
	if ids, err := r.plane.TakeOver(t.Context(), 2); err != nil || len(ids) != 0 {
		t.Errorf("a second take-over: %v %v, want nothing left", ids, err)
	}
}

// TestStop: Stop stops the runs the plane drives, waits for them, and
// leaves a run a resume can re-drive running with no driver; starts are
// refused from then on.
func TestStop(t *testing.T) {
	r := newRig(t)
	id := r.start(t, `{"name":"long","block":true,"steps":1}`)
	if n := r.plane.InFlight(); n != 1 {
		t.Errorf("in flight: %d, want 1", n)
	}
	idle := r.plane.Drain()
	select {
	case <-idle:
		t.Fatal("the drain was idle with a run in flight")
	default:
	}
	stopped := make(chan struct{})
	go func() { r.plane.Stop(); close(stopped) }()
	select {
	case <-stopped:
	case <-time.After(10 * time.Second):
		t.Fatal("Stop did not return")
	}
	<-idle
	run, err := r.st.Run(t.Context(), id)
	if err != nil || run.Status.State != runs.Running || run.Driver != runs.DriverNone || !run.Resumable {
		t.Errorf("the run after Stop: %+v %v, want running with no driver, resumable", run, err)
	}
	if got, want := r.kinds(t, id), "RunStarted StepCompleted RunInterrupted"; got != want {
		t.Errorf("events %s, want %s", got, want)
	}
	if _, err := r.plane.Start(t.Context(), runs.StartRequest{ToolArgs: json.RawMessage(`{}`)}); !errors.Is(err, runs.ErrUnavailable) {
		t.Errorf("a start after Stop: %v, want unavailable", err)
	}
}
