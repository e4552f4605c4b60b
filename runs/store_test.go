package runs_test

import (
	"bufio"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/toolserver/toolserver/flow"
	"github.com/toolserver/toolserver/internal/pgtest"
	"github.com/toolserver/toolserver/runs"
)

// TestMain doubles as the child process of TestKilledMidRun: with
// RUNS_CHILD set it records a run into that store, says so, and waits to
// be killed.
func TestMain(m *testing.M) {
	if dir := os.Getenv("RUNS_CHILD"); dir != "" {
		child(dir)
		return
	}
	pgtest.Main(m)
}

// The runs the child records: one of a /tools call, two of POST /v1/runs
// (their arguments recorded).
const (
	toolsRun = "11111111-2222-4333-8444-555555555555"
	v1Run    = "21111111-2222-4333-8444-555555555555"
	idleRun  = "31111111-2222-4333-8444-555555555555"
)

func child(dir string) {
	st, err := runs.Open(dir, 0)
	if err != nil {
		fmt.Println("error:", err)
		os.Exit(1)
	}
	for _, b := range []runs.Begin{
		{ID: toolsRun, Flow: "checkout", Source: "tools"},
		{ID: v1Run, Flow: "checkout", Source: "v1", Args: json.RawMessage(`{"name":"checkout"}`)},
		{ID: idleRun, Flow: "basket", Source: "v1", Args: json.RawMessage(`{"name":"basket"}`)},
	} {
		rec, err := st.Start(context.Background(), b)
		if err != nil {
			fmt.Println("error:", err)
			os.Exit(1)
		}
		for i := range 5 {
			rec.Step(flow.StepReport{Index: i, Kind: "tap", Flow: "checkout", Status: flow.StatusPass})
		}
	}
	fmt.Println("recorded")
	select {} // until killed
}

func open(t *testing.T, dir string, keep int) *runs.Store {
	t.Helper()
	st, err := runs.Open(dir, keep)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// finished records a run of flow with labels that ends with rep.
func finished(t *testing.T, st *runs.Store, flowName string, labels map[string]string, rep *flow.Report) string {
	t.Helper()
	rec, err := st.Start(t.Context(), runs.Begin{Flow: flowName, Labels: labels, Source: "tools"})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range rep.Steps {
		if err := rec.Step(s); err != nil {
			t.Fatal(err)
		}
	}
	if err := rec.End(rep, nil, nil); err != nil {
		t.Fatal(err)
	}
	return rec.ID()
}

var (
	passing = &flow.Report{OK: true, Passed: 1, Steps: []flow.StepReport{{Kind: "tap", Status: flow.StatusPass}}}
	failing = &flow.Report{Failed: 1, Steps: []flow.StepReport{{Kind: "assert", Status: flow.StatusFail, Reason: "no"}}}
)

func TestListGetFiltersAndPages(t *testing.T) {
	forEachView(t, 0, func(t *testing.T, st, rd *runs.Store) {
		var ids []string
		for i := range 5 {
			rep := passing
			if i%2 == 1 {
				rep = failing
			}
			ids = append(ids, finished(t, st, fmt.Sprintf("flow-%d", i), map[string]string{"build": fmt.Sprint(i % 2), "env": "ci"}, rep))
		}
		all, err := rd.List(t.Context(), runs.Filter{})
		if err != nil || len(all) != 5 || all[0].ID != ids[4] || all[4].ID != ids[0] {
			t.Fatalf("list: %v %+v, want 5 newest first", err, all)
		}
		failed, _ := rd.List(t.Context(), runs.Filter{Outcome: runs.FailedChecks})
		if len(failed) != 2 || failed[0].Flow != "flow-3" || failed[0].Status.State != runs.Completed || failed[0].Status.Output == nil || failed[0].Status.Output.Failed != 1 {
			t.Errorf("status filter: %+v", failed)
		}
		labelled, _ := rd.List(t.Context(), runs.Filter{Labels: map[string]string{"build": "0", "env": "ci"}})
		if len(labelled) != 3 {
			t.Errorf("label filter: got %d runs, want 3", len(labelled))
		}
		// The pages follow next_before to the end; the last says nothing, and
		// a cursor is found in either case.
		var got []string
		var cursors []string
		f := runs.Filter{Limit: 2}
		for range 4 {
			p, err := rd.ListPage(t.Context(), f)
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range p.Runs {
				got = append(got, r.Flow)
			}
			cursors = append(cursors, p.NextBefore)
			if p.NextBefore == "" {
				break
			}
			if p.NextBefore != p.Runs[len(p.Runs)-1].ID {
				t.Errorf("next_before %s, want the page's last run %s", p.NextBefore, p.Runs[len(p.Runs)-1].ID)
			}
			f.Before = strings.ToUpper(p.NextBefore)
		}
		if strings.Join(got, " ") != "flow-4 flow-3 flow-2 flow-1 flow-0" || len(cursors) != 3 || cursors[2] != "" {
			t.Errorf("pages: %q, cursors %q", got, cursors)
		}
		if p, err := rd.ListPage(t.Context(), runs.Filter{Limit: 5}); err != nil || len(p.Runs) != 5 || p.NextBefore != "" {
			t.Errorf("a page holding every run: %v %d runs, next_before %q, want none", err, len(p.Runs), p.NextBefore)
		}
		for _, before := range []string{"99999999-2222-4333-8444-555555555555", "not-a-uuid"} {
			if _, err := rd.List(t.Context(), runs.Filter{Before: before}); !errors.Is(err, runs.ErrBadCursor) {
				t.Errorf("before=%s: %v, want ErrBadCursor", before, err)
			}
		}
		d, err := rd.Get(t.Context(), ids[1])
		if err != nil || d.Status.State != runs.Completed || d.Outcome != runs.FailedChecks || len(d.Steps) != 1 || d.Steps[0].Reason != "no" || d.EventCount != 3 {
			t.Fatalf("get: %v %+v", err, d)
		}
		if _, err := rd.Get(t.Context(), "99999999-2222-4333-8444-555555555555"); !errors.Is(err, runs.ErrUnknownRun) {
			t.Errorf("get unknown: %v", err)
		}
		evs, _ := rd.Events(t.Context(), ids[1], 0)
		var kinds []string
		for i, e := range evs {
			if e.Seq != int64(i) {
				t.Errorf("event %d has seq %d", i, e.Seq)
			}
			kinds = append(kinds, e.Event.Kind)
		}
		if strings.Join(kinds, " ") != "RunStarted StepCompleted RunCompleted" {
			t.Errorf("events: %q", kinds)
		}
	})
}

func TestStartRefuses(t *testing.T) {
	forEachStore(t, 0, func(t *testing.T, st *runs.Store) {
		id := "11111111-2222-4333-8444-555555555555"
		if _, err := st.Start(t.Context(), runs.Begin{ID: id, Source: "v1"}); err != nil {
			t.Fatal(err)
		}
		if _, err := st.Start(t.Context(), runs.Begin{ID: id, Source: "v1"}); !errors.Is(err, runs.ErrRunExists) {
			t.Errorf("a used id: %v", err)
		}
		many := map[string]string{}
		for i := range 17 {
			many[fmt.Sprint("k", i)] = "v"
		}
		for _, labels := range []map[string]string{many, {strings.Repeat("k", 65): "v"}, {"k": strings.Repeat("v", 257)}, {"": "v"}, {"a\x00b": "v"}, {"a\x1bb": "v"}, {"a\xffb": "v"}} {
			if _, err := st.Start(t.Context(), runs.Begin{Labels: labels, Source: "v1"}); err == nil {
				t.Errorf("labels %v: accepted", labels)
			}
		}
		if _, err := st.Start(t.Context(), runs.Begin{ID: "nope", Source: "v1"}); err == nil {
			t.Error("a run id that is no UUID: accepted")
		}
	})
}

// TestAbandon: abandoning a running run records one terminal
// RunAbandoned event with the reason, stops the run (its context's cause
// is ErrAbandoned) and keeps anything it does later out of its log; a
// terminal run cannot be abandoned, an unknown one is unknown.
func TestAbandon(t *testing.T) {
	forEachStore(t, 0, func(t *testing.T, st *runs.Store) {
		rec, err := st.Start(t.Context(), runs.Begin{Source: "v1"})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := rec.Bind(context.Background())
		defer cancel(nil)
		tail := st.Follow(rec.ID())
		rc, err := st.Abandon(t.Context(), strings.ToUpper(rec.ID()), "the husk is dead")
		if err != nil {
			t.Fatal(err)
		}
		want := runs.Receipt{Run: rec.ID(), Abandoned: true, AppendedSeq: 1, Status: runs.Status{State: runs.Abandoned, Reason: "the husk is dead"}}
		if rc != want {
			t.Errorf("receipt %+v, want %+v", rc, want)
		}
		<-ctx.Done()
		if !errors.Is(context.Cause(ctx), runs.ErrAbandoned) {
			t.Fatalf("cause: %v", context.Cause(ctx))
		}
		for range tail.C {
		}
		if end, ok := tail.Ended(); !ok || end.Status != want.Status || end.Detached {
			t.Errorf("the tail's end: %+v %v", end, ok)
		}
		// What the stopped run does after is not recorded.
		if err := rec.Step(flow.StepReport{Kind: "tap", Status: flow.StatusPass}); err == nil {
			t.Error("a step after the abandonment was recorded")
		}
		rec.End(&flow.Report{Aborted: true, Skipped: 1}, nil, context.Cause(ctx))
		d, _ := st.Get(t.Context(), rec.ID())
		if d.Status != want.Status || d.Driver != "" || d.EventCount != 2 || d.Outcome != "" {
			t.Errorf("the run: %+v", d.Run)
		}
		evs, _ := st.Events(t.Context(), rec.ID(), 0)
		if last := evs[len(evs)-1]; last.Event.Kind != runs.KindRunAbandoned || string(last.Event.Payload) != `{"state":"abandoned","reason":"the husk is dead"}` {
			t.Errorf("the last event: %s %s", last.Event.Kind, last.Event.Payload)
		}
		if _, err := st.Abandon(t.Context(), rec.ID(), ""); !errors.Is(err, runs.ErrWrongState) {
			t.Errorf("abandon an ended run: %v", err)
		}
		if _, err := st.Abandon(t.Context(), "99999999-2222-4333-8444-555555555555", ""); !errors.Is(err, runs.ErrUnknownRun) {
			t.Errorf("abandon an unknown run: %v", err)
		}
		if _, err := st.Abandon(t.Context(), rec.ID(), strings.Repeat("x", runs.MaxReasonBytes+1)); !errors.Is(err, runs.ErrBadRequest) {
			t.Errorf("a reason over its bound: %v", err)
		}
	})
}

// TestRetentionPrunesRunsAndFiles: beyond keep, the oldest finished runs
// go with their images.
func TestRetentionPrunesRunsAndFiles(t *testing.T) {
	forEachView(t, 2, func(t *testing.T, st, rd *runs.Store) {
		img := filepath.Join(t.TempDir(), "current.png")
		os.WriteFile(img, []byte("\x89PNG fake"), 0o644)
		snap := &flow.Report{Failed: 1, Steps: []flow.StepReport{{Kind: "snapshot", Status: flow.StatusFail, SnapshotKey: "home__chromium-10x10.png",
			Artifacts: map[string]flow.Artifact{"current": {Handle: &flow.ArtifactHandle{Artifact: true, ID: "a1", HostPath: img}}}}}}
		first := finished(t, st, "one", nil, snap)
		d, _ := rd.Get(t.Context(), first)
		if len(d.Snapshots) != 1 || d.Snapshots[0].Files["current"] == "" {
			t.Fatalf("the snapshot's image was not kept: %+v", d.Snapshots)
		}
		f, err := rd.File(t.Context(), first, d.Snapshots[0].Files["current"])
		if err != nil {
			t.Fatal(err)
		}
		f.Close()
		if f, err := rd.File(t.Context(), strings.ToUpper(first), d.Snapshots[0].Files["current"]); err != nil {
			t.Errorf("the image by the run id in upper case: %v", err)
		} else {
			f.Close()
		}
		if _, err := rd.File(t.Context(), first, "../../runs.db"); err == nil {
			t.Error("a file name with a path was served")
		}
		finished(t, st, "two", nil, passing)
		finished(t, st, "three", nil, passing)
		if _, err := rd.Get(t.Context(), first); !errors.Is(err, runs.ErrUnknownRun) {
			t.Errorf("the oldest run: %v, want pruned", err)
		}
		if _, err := rd.File(t.Context(), first, d.Snapshots[0].Files["current"]); !errors.Is(err, runs.ErrUnknownRun) {
			t.Errorf("the oldest run's image: %v, want gone", err)
		}
		if all, _ := rd.List(t.Context(), runs.Filter{}); len(all) != 2 {
			t.Errorf("kept %d runs, want 2", len(all))
		}
	})
}

// TestKilledMidRun: a process killed with SIGKILL during its runs loses
// none of their recorded events. The next process ends the run of a
// /tools call failed (nothing can re-drive it) and leaves the runs of
// POST /v1/runs running with no driver: one is resumed (a RunResumed
// event, the steps counted anew, attempt 2) and completes; the other is
// abandoned as it lies.
func TestKilledMidRun(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "RUNS_CHILD="+dir)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || strings.TrimSpace(line) != "recorded" {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("child: %q %v", line, err)
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	st := open(t, dir, 0)
	d, err := st.Get(t.Context(), toolsRun)
	if err != nil {
		t.Fatal(err)
	}
	if d.Status.State != runs.Failed || !strings.Contains(d.Status.Error, "cannot be re-driven") || len(d.Steps) != 5 || d.EventCount != 7 || d.Driver != "" {
		t.Fatalf("the /tools run after kill -9: %+v, %d steps; want failed, 5 steps, 7 events", d.Run, len(d.Steps))
	}
	evs, _ := st.Events(t.Context(), toolsRun, 0)
	if evs[len(evs)-1].Event.Kind != runs.KindRunFailed {
		t.Errorf("last event: %+v", evs[len(evs)-1])
	}
	for _, id := range []string{v1Run, idleRun} {
		r, err := st.Run(t.Context(), id)
		if err != nil || r.Status.State != runs.Running || r.Driver != runs.DriverNone || !r.Resumable || r.EventCount != 6 || r.StepCount != 5 {
			t.Fatalf("the /v1 run after kill -9: %+v, %v; want running, no driver, resumable, 6 events, 5 steps", r, err)
		}
	}

	rec, args, err := st.Resume(t.Context(), v1Run)
	if err != nil || string(args) != `{"name":"checkout"}` {
		t.Fatalf("resume: %v, args %s", err, args)
	}
	if _, _, err := st.Resume(t.Context(), v1Run); !errors.Is(err, runs.ErrAttached) {
		t.Errorf("a second resume while it runs: %v, want ErrAttached", err)
	}
	r, _ := st.Run(t.Context(), v1Run)
	if r.Driver != runs.DriverAttached || r.StepCount != 0 || r.Attempt != 2 || r.Resumable {
		t.Errorf("the resumed run: %+v", r)
	}
	rec.Step(flow.StepReport{Index: 0, Kind: "tap", Flow: "checkout", Status: flow.StatusPass})
	if err := rec.End(&flow.Report{OK: true, Passed: 1}, nil, nil); err != nil {
		t.Fatal(err)
	}
	d, _ = st.Get(t.Context(), v1Run)
	if d.Status.State != runs.Completed || d.Outcome != runs.Passed || len(d.Steps) != 1 || d.StepCount != 1 || d.EventCount != 9 {
		t.Errorf("the resumed run at its end: %+v with %d steps; want completed, passed, 1 step, 9 events", d.Run, len(d.Steps))
	}
	evs, _ = st.Events(t.Context(), v1Run, 0)
	if evs[6].Event.Kind != runs.KindRunResumed || string(evs[6].Event.Payload) != `{"attempt":2}` {
		t.Errorf("event 6: %s %s, want RunResumed of attempt 2", evs[6].Event.Kind, evs[6].Event.Payload)
	}
	if _, _, err := st.Resume(t.Context(), v1Run); !errors.Is(err, runs.ErrWrongState) {
		t.Errorf("resume of a completed run: %v, want ErrWrongState", err)
	}
	rc, err := st.Abandon(t.Context(), idleRun, "")
	if err != nil || rc.AppendedSeq != 6 || rc.Status != (runs.Status{State: runs.Abandoned}) {
		t.Errorf("abandon of the run with no driver: %+v, %v", rc, err)
	}
}

// TestResumeRefusesAToolsRun: the run of a /tools call records no
// arguments, so nothing can re-drive it.
func TestResumeRefusesAToolsRun(t *testing.T) {
	forEachStore(t, 0, func(t *testing.T, st *runs.Store) {
		rec, err := st.Start(t.Context(), runs.Begin{Flow: "home", Source: "tools"})
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := st.Resume(t.Context(), rec.ID()); !errors.Is(err, runs.ErrAttached) {
			t.Errorf("resume of a driven run: %v", err)
		}
		rec.End(nil, errors.New("x"), runs.ErrStopping)
		r, _ := st.Run(t.Context(), rec.ID())
		if r.Status.State != runs.Failed || r.Status.Error != "the tool-server stopped while the run was going on" {
			t.Errorf("a /tools run the server stopped under: %+v, want failed", r.Status)
		}
	})
}

// TestStoppingLeavesAResumableRunRunning: a run of POST /v1/runs that the
// server stops under stays running, with no driver and a RunInterrupted
// event; its followers' end frame says detached.
func TestStoppingLeavesAResumableRunRunning(t *testing.T) {
	forEachStore(t, 0, func(t *testing.T, st *runs.Store) {
		rec, err := st.Start(t.Context(), runs.Begin{Flow: "home", Source: "v1", Args: json.RawMessage(`{"name":"home"}`)})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := rec.Bind(context.Background())
		defer cancel(nil)
		tail := st.Follow(rec.ID())
		st.Stopping()
		<-ctx.Done()
		if err := rec.End(nil, ctx.Err(), context.Cause(ctx)); err != nil {
			t.Fatal(err)
		}
		var kinds []string
		for e := range tail.C {
			kinds = append(kinds, e.Event.Event.Kind)
		}
		end, ok := tail.Ended()
		if !ok || !end.Detached || end.Status.State != runs.Running || !slices.Equal(kinds, []string{runs.KindRunInterrupted}) {
			t.Errorf("the tail: %v, end %+v %v; want RunInterrupted then a detached end", kinds, end, ok)
		}
		r, _ := st.Run(t.Context(), rec.ID())
		if r.Status.State != runs.Running || r.Driver != runs.DriverNone || !r.Resumable || r.End() != end {
			t.Errorf("the run: %+v", r)
		}
	})
}

// TestOneProcessPerDirectory: a second store on the same directory is
// refused while the first is open.
func TestOneProcessPerDirectory(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	open(t, dir, 0)
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "RUNS_CHILD="+dir)
	b, _ := cmd.CombinedOutput()
	if !strings.Contains(string(b), "in use by another toolserver process") {
		t.Fatalf("a second process: %q", b)
	}
}

// TestOpenLowersOldIDs: a run an older store kept under an id in upper
// case (before ids were kept lower-case) is found by its id after the
// next Open, with its events and its kept image.
func TestOpenLowersOldIDs(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	st := open(t, dir, 0)
	img := filepath.Join(t.TempDir(), "current.png")
	os.WriteFile(img, []byte("\x89PNG fake"), 0o644)
	snap := &flow.Report{Failed: 1, Steps: []flow.StepReport{{Kind: "snapshot", Status: flow.StatusFail, SnapshotKey: "home__chromium-10x10.png",
		Artifacts: map[string]flow.Artifact{"current": {Handle: &flow.ArtifactHandle{Artifact: true, ID: "a1", HostPath: img}}}}}}
	id := finished(t, st, "old", nil, snap)
	d, err := st.Get(t.Context(), id)
	if err != nil {
		t.Fatal(err)
	}
	name := d.Snapshots[0].Files["current"]
	st.Close()

	// The store as an older release left it: the id in upper case.
	db, err := sql.Open("sqlite", "file:"+filepath.Join(dir, "runs.db")+"?_pragma=foreign_keys(OFF)")
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{`UPDATE runs SET id = upper(id)`, `UPDATE events SET run_id = upper(run_id)`} {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()
	upper := strings.ToUpper(id)
	if err := os.Rename(filepath.Join(dir, "files", id), filepath.Join(dir, "files", upper)); err != nil {
		t.Fatal(err)
	}

	st = open(t, dir, 0)
	got, err := st.Get(t.Context(), id)
	if err != nil || got.ID != id || len(got.Steps) != 1 || len(got.Snapshots) != 1 {
		t.Fatalf("the old run by its id: %+v, %v", got, err)
	}
	f, err := st.File(t.Context(), id, name)
	if err != nil {
		t.Fatalf("its kept image: %v", err)
	}
	f.Close()
}

// TestReaderBesideTheHolder: a reader opened on the store another Store
// holds (no lock taken) lists its runs and follows a live one to its end,
// every event once and in order; it writes nothing.
func TestReaderBesideTheHolder(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	st := open(t, dir, 0)
	rec, err := st.Start(t.Context(), runs.Begin{Flow: "live", Source: "v1"})
	if err != nil {
		t.Fatal(err)
	}
	rd, err := runs.OpenReader(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	list, err := rd.List(t.Context(), runs.Filter{})
	if err != nil || len(list) != 1 || list[0].ID != rec.ID() || list[0].Status.State != runs.Running || list[0].Driver != runs.DriverAttached {
		t.Fatalf("the reader's list: %+v, %v", list, err)
	}
	type result struct {
		seqs []int64
		end  runs.EndFrame
		err  error
	}
	done := make(chan result, 1)
	seen := make(chan struct{}, 1)
	go func() {
		var r result
		r.end, r.err = rd.FollowEvents(t.Context(), rec.ID(), 0, func(e runs.Event) error {
			r.seqs = append(r.seqs, e.Seq)
			select {
			case seen <- struct{}{}:
			default:
			}
			return nil
		})
		done <- r
	}()
	<-seen // run_started reached the reader before the run goes on
	for i := range 3 {
		if err := rec.Step(flow.StepReport{Index: i, Kind: "echo", Status: flow.StatusPass}); err != nil {
			t.Fatal(err)
		}
	}
	if err := rec.End(&flow.Report{OK: true, Passed: 3}, nil, nil); err != nil {
		t.Fatal(err)
	}
	r := <-done
	if r.err != nil || r.end.Status.Outcome() != runs.Passed || !slices.Equal(r.seqs, []int64{0, 1, 2, 3, 4}) {
		t.Fatalf("followed: %v %+v %v; want seqs 0..4 and passed", r.err, r.end, r.seqs)
	}
	if _, err := rd.Start(t.Context(), runs.Begin{Flow: "x", Source: "v1"}); err == nil {
		t.Error("a reader started a run")
	}
	if _, err := runs.OpenReader(t.TempDir()); !errors.Is(err, runs.ErrNoStore) {
		t.Errorf("a directory without a store: %v, want ErrNoStore", err)
	}
}

// forEachStore runs test on a store of each database, in parallel: the
// embedded SQLite and a PostgreSQL of its own (the behaviour suite both
// pass).
func forEachStore(t *testing.T, keep int, test func(t *testing.T, st *runs.Store)) {
	forEach(t, keep, false, func(t *testing.T, st, _ *runs.Store) { test(t, st) })
}

// forEachView is forEachStore for a test that writes through st and
// reads what it wrote through rd, with a third row: rd is a reader
// (OpenReader) beside the SQLite holder st, as the runs commands read a
// serve's store. In the other rows rd is st.
func forEachView(t *testing.T, keep int, test func(t *testing.T, st, rd *runs.Store)) {
	forEach(t, keep, true, test)
}

func forEach(t *testing.T, keep int, reader bool, test func(t *testing.T, st, rd *runs.Store)) {
	t.Parallel()
	t.Run("sqlite", func(t *testing.T) {
		t.Parallel()
		st := open(t, t.TempDir(), keep)
		test(t, st, st)
	})
	t.Run("postgres", func(t *testing.T) {
		t.Parallel()
		st := openPostgres(t, pgtest.DSN(t), keep)
		test(t, st, st)
	})
	if !reader {
		return
	}
	t.Run("reader", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		st := open(t, dir, keep)
		rd, err := runs.OpenReader(dir)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { rd.Close() })
		test(t, st, rd)
	})
}

func openPostgres(t *testing.T, dsn string, keep int) *runs.Store {
	t.Helper()
	st, err := runs.OpenPostgres(t.Context(), dsn, runs.PostgresOptions{Keep: keep})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// TestOpenStoreDecidesByAddress: OpenStore opens a PostgreSQL address as
// the fleet's store, a directory as its holder, or beside it as a
// reader, and names nothing it cannot open.
func TestOpenStoreDecidesByAddress(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	st, err := runs.OpenStore(t.Context(), dir, runs.Options{Keep: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if st.Shared() {
		t.Error("a directory's store is shared")
	}
	if _, err := runs.OpenStore(t.Context(), dir, runs.Options{}); !errors.Is(err, runs.ErrHeld) {
		t.Errorf("a second holder of the directory: %v, want ErrHeld", err)
	}
	id := finished(t, st, "one", nil, passing)
	rd, err := runs.OpenStore(t.Context(), dir, runs.Options{Reader: true})
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	if _, err := rd.Get(t.Context(), id); err != nil {
		t.Errorf("the reader's get: %v", err)
	}
	if _, err := rd.Start(t.Context(), runs.Begin{Flow: "x", Source: "v1"}); err == nil {
		t.Error("a reader started a run")
	}
	if _, err := runs.OpenStore(t.Context(), t.TempDir(), runs.Options{Reader: true}); !errors.Is(err, runs.ErrNoStore) {
		t.Errorf("a reader of a directory without a store: %v, want ErrNoStore", err)
	}
	if _, err := runs.OpenStore(t.Context(), "", runs.Options{}); err == nil {
		t.Error("no address: opened")
	}
	pg, err := runs.OpenStore(t.Context(), pgtest.DSN(t), runs.Options{Reader: true})
	if err != nil {
		t.Fatal(err)
	}
	defer pg.Close()
	if !pg.Shared() {
		t.Error("a PostgreSQL store is not shared")
	}
	if _, err := pg.Start(t.Context(), runs.Begin{Flow: "x", Source: "v1"}); err != nil {
		t.Errorf("a PostgreSQL store opened with Reader: %v (any process writes it)", err)
	}
}
