package mcp_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolserver/toolserver/control"
	"github.com/toolserver/toolserver/device/cdp/cdptest"
	"github.com/toolserver/toolserver/fault"
	"github.com/toolserver/toolserver/flow"
	"github.com/toolserver/toolserver/runs"
	"github.com/toolserver/toolserver/server/mcp"
	"github.com/toolserver/toolserver/store"
	"github.com/toolserver/toolserver/tool"
	"github.com/toolserver/toolserver/tool/flowtool"
)

// runsRig is an MCP session over a run store, the real flow tools on the
// shared browser and a control plane over both, as `toolserver mcp
// --state-dir` has them; root is a project whose flow press passes.
type runsRig struct {
	cs   *sdk.ClientSession
	st   *runs.Store
	root string
}

func newRunsRig(t *testing.T) *runsRig {
	t.Helper()
	dir := t.TempDir()
	arts, err := store.NewArtifacts(filepath.Join(dir, "artifacts"), 100, 1<<30)
	if err != nil {
		t.Fatal(err)
	}
	st, err := runs.Open(filepath.Join(dir, "state"), 0)
	if err != nil {
		t.Fatal(err)
	}
	reg := tool.NewRegistry()
	(&flowtool.Tools{Pool: cdptest.Pool(t), Artifacts: arts, TempDir: dir}).Register(reg)
	plane := control.New(control.Config{Runs: st, Tools: reg, TempDir: dir})
	t.Cleanup(func() {
		st.Stopping()
		plane.Wait()
		st.Close()
		arts.Close()
	})
	root := t.TempDir()
	flows := filepath.Join(root, ".argent", "flows")
	if err := os.MkdirAll(flows, 0o755); err != nil {
		t.Fatal(err)
	}
	press := fmt.Sprintf("steps:\n  - launch: %q\n  - tap: Go now\n  - assert: { text: { in: { id: out }, equals: clicked 1 } }\n", cdptest.Pages(t)+"/app.html")
	if err := os.WriteFile(filepath.Join(flows, "press.yaml"), []byte(press), 0o644); err != nil {
		t.Fatal(err)
	}
	cs, _ := connect(t, mcp.Config{Tools: reg, Artifacts: arts, TempDir: dir, Version: "test", Runs: plane})
	return &runsRig{cs: cs, st: st, root: root}
}

// answer calls name and decodes its JSON answer into out; the call must
// not be a tool error.
func answer(t *testing.T, cs *sdk.ClientSession, name string, args map[string]any, out any) {
	t.Helper()
	res := call(t, cs, name, args, nil)
	if res.IsError {
		t.Fatalf("%s %v: tool error %s", name, args, text(t, res, 0))
	}
	if err := json.Unmarshal([]byte(text(t, res, 0)), out); err != nil {
		t.Fatalf("%s %v: %v in %s", name, args, err, text(t, res, 0))
	}
}

// refused calls name and returns the message of its tool error; the call
// must be one.
func refused(t *testing.T, cs *sdk.ClientSession, name string, args map[string]any) string {
	t.Helper()
	res := call(t, cs, name, args, nil)
	if !res.IsError {
		t.Fatalf("%s %v: got %s, want a tool error", name, args, text(t, res, 0))
	}
	return text(t, res, 0)
}

// seed records a run of flow that ends with rep, or with err when rep is
// nil, or not at all when both are nil; it returns its id.
func (r *runsRig) seed(t *testing.T, flowName string, labels map[string]string, rep *flow.Report, err error) string {
	t.Helper()
	rec, serr := r.st.Start(t.Context(), runs.Begin{Flow: flowName, Source: "tools", Labels: labels})
	if serr != nil {
		t.Fatal(serr)
	}
	if rep != nil || err != nil {
		if err := rec.End(rep, err, nil); err != nil {
			t.Fatal(err)
		}
	}
	return rec.ID()
}

// names is the runs of a page as "flow state[/outcome], …".
func names(p runs.Page) string {
	var out []string
	for _, r := range p.Runs {
		s := r.Flow + " " + r.Status.State
		if r.Outcome != "" {
			s += "/" + r.Outcome
		}
		out = append(out, s)
	}
	return strings.Join(out, ", ")
}

// TestRunToolsListed: with a run store the six run tools are listed, and
// without one none is (TestToolsListed).
func TestRunToolsListed(t *testing.T) {
	t.Parallel()
	r := newRunsRig(t)
	var got []string
	for tl, err := range r.cs.Tools(t.Context(), nil) {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, tl.Name)
	}
	for _, want := range []string{"list_runs", "get_run", "get_run_events", "start_run", "abandon_run", "resume_run", "flow-execute"} {
		if !slices.Contains(got, want) {
			t.Errorf("tools: %s missing from %v", want, got)
		}
	}
}

// TestListRunsFilters: list_runs answers GET /v1/runs's page and filters
// as it does: state, outcome, labels (all of them), a limit with the
// next_before cursor and before; a filter /v1 refuses is a bad_request
// tool error.
func TestListRunsFilters(t *testing.T) {
	t.Parallel()
	r := newRunsRig(t)
	passed := r.seed(t, "home", map[string]string{"team": "web"}, &flow.Report{OK: true, Passed: 1}, nil)
	r.seed(t, "home", nil, &flow.Report{Failed: 1}, nil)
	failed := r.seed(t, "login", map[string]string{"team": "web", "ci": "yes"}, nil, &fault.Error{Kind: fault.Validation, Message: "no such flow"})
	r.seed(t, "login", nil, nil, nil)
	for _, tc := range []struct {
		args map[string]any
		want string
		next string
	}{
		{map[string]any{}, "login running, login failed, home completed/failed, home completed/passed", ""},
		{map[string]any{"status": "completed"}, "home completed/failed, home completed/passed", ""},
		{map[string]any{"status": "failed"}, "login failed", ""},
		{map[string]any{"outcome": "passed"}, "home completed/passed", ""},
		{map[string]any{"label": []string{"team:web"}}, "login failed, home completed/passed", ""},
		{map[string]any{"label": []string{"team:web", "ci:yes"}}, "login failed", ""},
		{map[string]any{"limit": 2}, "login running, login failed", failed},
		{map[string]any{"limit": 2, "before": failed}, "home completed/failed, home completed/passed", ""},
		{map[string]any{"before": passed}, "", ""},
	} {
		var p runs.Page
		answer(t, r.cs, "list_runs", tc.args, &p)
		if got := names(p); got != tc.want || p.NextBefore != tc.next {
			t.Errorf("list_runs %v: got %q next_before %q, want %q next_before %q", tc.args, got, p.NextBefore, tc.want, tc.next)
		}
	}
	var p runs.Page
	answer(t, r.cs, "list_runs", map[string]any{"status": "failed"}, &p)
	if len(p.Runs) != 1 || p.Runs[0].Status.Error == "" || p.Runs[0].ID != failed || p.Runs[0].Labels["ci"] != "yes" {
		t.Errorf("the failed run: got %+v, want its error and labels", p.Runs)
	}
	for _, tc := range []struct {
		args map[string]any
		want string
	}{
		{map[string]any{"status": "lost"}, "status: want one of"},
		{map[string]any{"outcome": "so-so"}, "outcome: want one of"},
		{map[string]any{"limit": 0}, "limit: 0 is below the minimum"},
		{map[string]any{"limit": 501}, "limit: 501 is above the maximum"},
		{map[string]any{"label": []string{"team"}}, `bad_request: label "team": want KEY:VALUE`},
		{map[string]any{"before": "x"}, `bad_request: bad cursor: before="x" is not a run id`},
		{map[string]any{"before": "99999999-2222-4333-8444-555555555555"}, "bad_request: bad cursor: before=99999999-2222-4333-8444-555555555555 names no run"},
	} {
		if msg := refused(t, r.cs, "list_runs", tc.args); !strings.Contains(msg, tc.want) {
			t.Errorf("list_runs %v: got %q, want %q", tc.args, msg, tc.want)
		}
	}
}

// TestListRunsDefaultLimit: list_runs without a limit answers 50 runs and
// the cursor of the rest, as GET /v1/runs and runs list do.
func TestListRunsDefaultLimit(t *testing.T) {
	t.Parallel()
	r := newRunsRig(t)
	for range 51 {
		r.seed(t, "home", nil, &flow.Report{OK: true, Passed: 1}, nil)
	}
	var p runs.Page
	answer(t, r.cs, "list_runs", map[string]any{}, &p)
	if len(p.Runs) != 50 || p.NextBefore != p.Runs[49].ID {
		t.Fatalf("list_runs of 51 runs without a limit: %d runs, next_before %q; want 50 and the 50th's id", len(p.Runs), p.NextBefore)
	}
}

// TestAbandonAndResumeRun: abandon_run retires a running run with its
// reason (the receipt, then get_run, show it) and refuses it once it is
// terminal (wrong_state); resume_run of a finished run changes nothing
// and answers its state as the outcome, its status object as the status.
func TestAbandonAndResumeRun(t *testing.T) {
	t.Parallel()
	r := newRunsRig(t)
	done := r.seed(t, "home", nil, &flow.Report{OK: true, Passed: 2}, nil)
	live := r.seed(t, "login", nil, nil, nil)

	var rc runs.Receipt
	answer(t, r.cs, "abandon_run", map[string]any{"id": strings.ToUpper(live), "reason": "done by hand"}, &rc)
	want := runs.Receipt{Run: live, Abandoned: true, AppendedSeq: 1, Status: runs.Status{State: runs.Abandoned, Reason: "done by hand"}}
	if rc != want {
		t.Errorf("abandon_run: got %+v, want %+v", rc, want)
	}
	var d runs.Detail
	answer(t, r.cs, "get_run", map[string]any{"id": live}, &d)
	if d.Status != want.Status || d.Driver != "" || d.EventCount != 2 {
		t.Errorf("get_run of the abandoned run: got %+v, want abandoned with its reason, no driver, 2 events", d.Run)
	}
	for _, tc := range []struct {
		name string
		args map[string]any
		want string
	}{
		{"abandon_run", map[string]any{"id": live}, "wrong_state: wrong state: run " + live + " is abandoned"},
		{"abandon_run", map[string]any{"id": done}, "wrong_state: wrong state: run " + done + " is completed"},
		{"abandon_run", map[string]any{"id": "99999999-2222-4333-8444-555555555555"}, "unknown_run: unknown run: no run 99999999-2222-4333-8444-555555555555"},
		{"abandon_run", map[string]any{"id": "not-a-run"}, `bad_request: id "not-a-run" is not a run id`},
		{"abandon_run", map[string]any{"id": done, "reason": strings.Repeat("x", runs.MaxReasonBytes+1)}, "bad_request: bad request: a reason of 2049 bytes"},
		{"abandon_run", map[string]any{}, "id: required"},
		{"resume_run", map[string]any{"id": "99999999-2222-4333-8444-555555555555"}, "unknown_run: "},
		{"get_run", map[string]any{"id": "99999999-2222-4333-8444-555555555555"}, "unknown_run: unknown run: no run 99999999-2222-4333-8444-555555555555"},
		{"get_run_events", map[string]any{"id": "99999999-2222-4333-8444-555555555555"}, "unknown_run: "},
	} {
		if msg := refused(t, r.cs, tc.name, tc.args); !strings.Contains(msg, tc.want) {
			t.Errorf("%s %v: got %q, want %q", tc.name, tc.args, msg, tc.want)
		}
	}

	for _, tc := range []struct {
		id    string
		state string
	}{{done, runs.Completed}, {live, runs.Abandoned}} {
		var out runs.Resumed
		answer(t, r.cs, "resume_run", map[string]any{"id": tc.id}, &out)
		var st runs.Status
		if err := json.Unmarshal(out.Status, &st); err != nil || out.Run != tc.id || out.Outcome != tc.state || st.State != tc.state {
			t.Errorf("resume_run of a %s run: got %+v (%v), want outcome and status %s", tc.state, out, err, tc.state)
		}
		if tc.state == runs.Completed && (st.Output == nil || st.Output.Passed != 2) {
			t.Errorf("resume_run of the completed run: status %s, want its output", out.Status)
		}
	}
	if got, err := r.st.Run(t.Context(), done); err != nil || got.Attempt != 0 || got.EventCount != 2 {
		t.Errorf("after resume_run of a finished run: %+v %v, want it unchanged", got, err)
	}
}

// TestStartRun: start_run of a real flow on real Chromium answers at once
// with the run, which goes on to completed with the labels given;
// get_run has its steps, get_run_events pages through its log from a
// cursor to the end. A request the plane refuses (a flow that does not
// exist, a bad run id or labels) is a bad_request tool error and creates
// no run.
func TestStartRun(t *testing.T) {
	t.Parallel()
	r := newRunsRig(t)
	const device = "chromium-cdp-651x411"
	cdptest.Claim(t, device)
	t.Cleanup(func() { cdptest.Stop(t, device) })
	args := map[string]any{"name": "press", "project_root": r.root, "device": device}

	for _, tc := range []struct {
		args map[string]any
		want string
	}{
		{map[string]any{"tool_args": map[string]any{"name": "nope", "project_root": r.root, "device": device}}, "bad_request: tool_args: "},
		{map[string]any{"tool_args": args, "run_id": "x"}, `bad_request: run_id "x" is not a UUID`},
		{map[string]any{"tool_args": args, "labels": map[string]any{"a:b": "c"}}, "bad_request: labels: "},
		{map[string]any{"tool_args": args, "labels": map[string]any{"n": 1}}, "labels"},
		{map[string]any{"tool_args": "press"}, "tool_args: want object"},
		{map[string]any{}, "tool_args: required"},
	} {
		if msg := refused(t, r.cs, "start_run", tc.args); !strings.Contains(msg, tc.want) {
			t.Errorf("start_run %v: got %q, want %q", tc.args, msg, tc.want)
		}
	}
	if msg := refused(t, r.cs, "start_run", map[string]any{"tool_args": map[string]any{"name": "nope", "project_root": r.root}}); !strings.Contains(msg, "nope") {
		t.Errorf("start_run of a flow that does not exist: %q does not name it", msg)
	}
	if got, err := r.st.List(t.Context(), runs.Filter{}); err != nil || len(got) != 0 {
		t.Fatalf("the refused starts created runs: %+v %v", got, err)
	}

	var started runs.Started
	answer(t, r.cs, "start_run", map[string]any{"tool_args": args, "labels": map[string]string{"suite": "mcp"}}, &started)
	if started.Status != runs.Running || !runs.ValidID(started.Run) {
		t.Fatalf("start_run: got %+v, want a run id and running", started)
	}
	var followed []runs.Event
	end, err := r.st.FollowEvents(t.Context(), started.Run, 0, func(e runs.Event) error {
		followed = append(followed, e)
		return nil
	})
	if err != nil || end.Status.State != runs.Completed || end.Status.Outcome() != runs.Passed {
		t.Fatalf("the run ended %+v (%v), want completed and passed", end, err)
	}

	var d runs.Detail
	answer(t, r.cs, "get_run", map[string]any{"id": started.Run}, &d)
	if d.Status.State != runs.Completed || d.Outcome != runs.Passed || d.Source != "v1" || d.Flow != "press" || d.Device != device ||
		d.Labels["suite"] != "mcp" || len(d.Steps) != 3 || d.StepCount != 3 {
		t.Errorf("get_run: got %+v with %d steps, want the completed run of press with its label and 3 steps", d.Run, len(d.Steps))
	}
	var p runs.Page
	answer(t, r.cs, "list_runs", map[string]any{"label": []string{"suite:mcp"}, "outcome": "passed"}, &p)
	if len(p.Runs) != 1 || p.Runs[0].ID != started.Run {
		t.Errorf("list_runs by its label: got %s, want the run", names(p))
	}

	// From a cursor, two at a time, to the end: the log as followed.
	var paged []runs.Event
	from, pages := int64(1), 0
	for {
		var ep mcp.EventPage
		answer(t, r.cs, "get_run_events", map[string]any{"id": started.Run, "from_seq": from, "limit": 2}, &ep)
		pages++
		if ep.Status.State != runs.Completed || len(ep.Events) > 2 || pages > len(followed) {
			t.Fatalf("get_run_events from %d: got %+v", from, ep)
		}
		paged = append(paged, ep.Events...)
		if ep.End {
			if ep.NextSeq != int64(len(followed)) {
				t.Errorf("the last page: next_seq %d, want %d", ep.NextSeq, len(followed))
			}
			break
		}
		if len(ep.Events) != 2 || ep.NextSeq != ep.Events[1].Seq+1 {
			t.Fatalf("a page that is not the end: got %+v, want 2 events and the seq after them", ep)
		}
		from = ep.NextSeq
	}
	want, _ := json.Marshal(followed[1:])
	if got, _ := json.Marshal(paged); string(got) != string(want) {
		t.Errorf("get_run_events from seq 1: got %s, want %s", got, want)
	}
	if first, last := followed[0].Event.Kind, followed[len(followed)-1].Event.Kind; first != runs.KindRunStarted || last != runs.KindRunCompleted {
		t.Errorf("the log runs from %s to %s, want %s to %s", first, last, runs.KindRunStarted, runs.KindRunCompleted)
	}
	// The default page holds the whole log; past its end, none, and the end.
	var all, past mcp.EventPage
	answer(t, r.cs, "get_run_events", map[string]any{"id": started.Run}, &all)
	answer(t, r.cs, "get_run_events", map[string]any{"id": started.Run, "from_seq": 1000}, &past)
	if len(all.Events) != len(followed) || !all.End || all.Events[0].SchemaVersion != runs.SchemaVersion || all.Events[0].RunID != started.Run {
		t.Errorf("get_run_events from 0: got %d events end=%v, want all %d and the end", len(all.Events), all.End, len(followed))
	}
	if len(past.Events) != 0 || past.NextSeq != 1000 || !past.End {
		t.Errorf("get_run_events past the end: got %+v, want no events, next_seq 1000, the end", past)
	}
	if b, _ := json.Marshal(past); !strings.Contains(string(b), `"events":[]`) {
		t.Errorf("an empty page: %s, want events []", b)
	}
}
