package runs_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/toolserver/toolserver/flow"
	"github.com/toolserver/toolserver/internal/pgtest"
	"github.com/toolserver/toolserver/runs"
)

// TestTwoReplicasShareOneStore: two stores over one PostgreSQL (two
// replicas of a fleet) see each other's runs: the one that does not
// drive a run lists it as attached, follows its events live as the other
// records them (woken by the database's notifications), every event once
// and in order, and reads its images.
func TestTwoReplicasShareOneStore(t *testing.T) {
	t.Parallel()
	dsn := pgtest.DSN(t)
	a, b := openPostgres(t, dsn, 0), openPostgres(t, dsn, 0)
	rec, err := a.Start(t.Context(), runs.Begin{Flow: "shared", Source: "v1", Args: json.RawMessage(`{}`)})
	if err != nil {
		t.Fatal(err)
	}
	r, err := b.Run(t.Context(), rec.ID())
	if err != nil || r.Driver != runs.DriverAttached || r.Resumable {
		t.Fatalf("the other replica's view: %+v %v; want attached", r, err)
	}
	type followed struct {
		seqs []int64
		end  runs.EndFrame
		err  error
	}
	done := make(chan followed, 1)
	seen := make(chan struct{}, 1)
	go func() {
		var f followed
		f.end, f.err = b.FollowEvents(t.Context(), rec.ID(), 0, func(e runs.Event) error {
			f.seqs = append(f.seqs, e.Seq)
			select {
			case seen <- struct{}{}:
			default:
			}
			return nil
		})
		done <- f
	}()
	<-seen
	for i := range 3 {
		if err := rec.Step(flow.StepReport{Index: i, Kind: "echo", Status: flow.StatusPass}); err != nil {
			t.Fatal(err)
		}
	}
	rec.End(&flow.Report{OK: true, Passed: 3}, nil, nil)
	f := <-done
	if f.err != nil || f.end.Status.Outcome() != runs.Passed || !slices.Equal(f.seqs, []int64{0, 1, 2, 3, 4}) {
		t.Fatalf("followed from the other replica: %v %+v %v", f.err, f.end, f.seqs)
	}
	page, err := b.ListPage(t.Context(), runs.Filter{Outcome: runs.Passed})
	if err != nil || len(page.Runs) != 1 || page.Runs[0].ID != rec.ID() || page.Runs[0].Driver != "" {
		t.Errorf("the other replica's list: %+v %v", page.Runs, err)
	}
}

// TestLapsedLeaseIsTakenOver: a replica that stops renewing its lease (a
// process paused past it) loses its run: another takes it over (a new
// attempt), and the first, when it goes on, writes nothing more to the
// run; its run's context ends with ErrLostRun.
func TestLapsedLeaseIsTakenOver(t *testing.T) {
	t.Parallel()
	dsn := pgtest.DSN(t)
	a, err := runs.OpenPostgres(t.Context(), dsn, runs.PostgresOptions{Lease: 600 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b := openPostgres(t, dsn, 0)
	rec, err := a.Start(t.Context(), runs.Begin{Flow: "leased", Source: "v1", Args: json.RawMessage(`{"name":"leased"}`)})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := rec.Bind(context.Background())
	defer cancel(nil)
	rec.Step(flow.StepReport{Index: 0, Kind: "echo", Status: flow.StatusPass})
	if _, _, err := b.Resume(t.Context(), rec.ID()); !errors.Is(err, runs.ErrAttached) {
		t.Fatalf("a take-over while the lease holds: %v, want ErrAttached", err)
	}
	runs.StopBackground(a) // the replica pauses: its leases lapse
	var taken *runs.Recorder
	for taken == nil {
		lapsed, err := b.Lapsed(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if len(lapsed) == 1 && lapsed[0].Driver == runs.DriverNone {
			if taken, _, err = b.Resume(t.Context(), rec.ID()); err != nil {
				t.Fatal(err)
			}
			break
		}
		select {
		case <-time.After(100 * time.Millisecond):
		case <-t.Context().Done():
			t.Fatal("the lease never lapsed")
		}
	}
	// The first replica goes on: its writes are refused, and it stops.
	if err := rec.Step(flow.StepReport{Index: 1, Kind: "echo", Status: flow.StatusPass}); !errors.Is(err, runs.ErrLostRun) {
		t.Errorf("an append of the replica that lost the run: %v, want ErrLostRun", err)
	}
	<-ctx.Done()
	if !errors.Is(context.Cause(ctx), runs.ErrLostRun) {
		t.Errorf("its run's cause: %v", context.Cause(ctx))
	}
	if !rec.Lost() || taken.Lost() {
		t.Errorf("Lost: %v for the replica that lost the run, %v for the one that took it over; want true, false", rec.Lost(), taken.Lost())
	}
	rec.End(&flow.Report{OK: true}, nil, nil)
	taken.Step(flow.StepReport{Index: 0, Kind: "echo", Status: flow.StatusPass})
	if err := taken.End(&flow.Report{OK: true, Passed: 1}, nil, nil); err != nil {
		t.Fatal(err)
	}
	evs, _ := b.Events(t.Context(), rec.ID(), 0)
	var kinds []string
	for _, e := range evs {
		kinds = append(kinds, e.Event.Kind)
	}
	if want := []string{runs.KindRunStarted, runs.KindStepCompleted, runs.KindRunResumed, runs.KindStepCompleted, runs.KindRunCompleted}; !slices.Equal(kinds, want) {
		t.Errorf("the log: %v, want %v", kinds, want)
	}
	if r, _ := b.Run(t.Context(), rec.ID()); r.Attempt != 2 || r.Outcome != runs.Passed {
		t.Errorf("the run: %+v", r)
	}
}

// TestPostgresMigrations: a database as the previous schema version left
// it (with a run in it) is brought to the current one at the next open,
// its run kept; an empty database gets the whole schema; replicas
// opening at once migrate once.
func TestPostgresMigrations(t *testing.T) {
	t.Parallel()
	dsn := pgtest.DSN(t)
	if err := runs.MigratePostgres(t.Context(), dsn, 1); err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	id := "a1111111-2222-4333-8444-555555555555"
	if _, err := db.Exec(`INSERT INTO runs (id, flow, source, status, started_at, last_at, event_count, args) VALUES ($1, 'old', 'v1', 'running', 1000, 1000, 1, '{}')`, id); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`INSERT INTO events VALUES ($1, 0, 1000, 'RunStarted', '{"flow":"old","linked":false,"source":"v1"}')`, id); err != nil {
		t.Fatal(err)
	}
	errs := make(chan error, 3)
	for range 3 {
		go func() {
			st, err := runs.OpenPostgres(context.Background(), dsn, runs.PostgresOptions{})
			if err == nil {
				err = st.Close()
			}
			errs <- err
		}()
	}
	for range 3 {
		if err := <-errs; err != nil {
			t.Fatalf("a replica opening the old database: %v", err)
		}
	}
	var version int
	if err := db.QueryRow(`SELECT version FROM toolserver_schema`).Scan(&version); err != nil || version != 2 {
		t.Fatalf("schema version %d %v, want 2", version, err)
	}
	st := openPostgres(t, dsn, 0)
	r, err := st.Run(t.Context(), id)
	if err != nil || r.Flow != "old" || r.Status.State != runs.Running || r.Driver != runs.DriverNone || !r.Resumable {
		t.Errorf("the old run: %+v %v", r, err)
	}
	openPostgres(t, pgtest.DSN(t), 0) // an empty database
}

// TestPostgresErrorsHideThePassword: a wrong password and an unreachable
// database are errors that name the database, never the password.
func TestPostgresErrorsHideThePassword(t *testing.T) {
	t.Parallel()
	c := pgtest.Get(t)
	good := c.TCPDSN("postgres")
	for _, dsn := range []string{
		strings.Replace(good, pgtest.Password, pgtest.Password+"-wrong", 1),
		"postgres://" + pgtest.PasswordUser + ":" + pgtest.Password + "@127.0.0.1:1/nowhere?sslmode=disable&connect_timeout=2",
	} {
		_, err := runs.OpenPostgres(t.Context(), dsn, runs.PostgresOptions{})
		if err == nil || strings.Contains(err.Error(), pgtest.Password) || !strings.Contains(err.Error(), "127.0.0.1") {
			t.Errorf("%s: %v; want an error naming the host, not the password", runs.RedactDSN(dsn), err)
		}
	}
	if got := runs.RedactDSN(good); strings.Contains(got, pgtest.Password) || !strings.Contains(got, "127.0.0.1") {
		t.Errorf("RedactDSN: %s", got)
	}
	st, err := runs.OpenPostgres(t.Context(), good, runs.PostgresOptions{})
	if err != nil {
		t.Fatalf("the right password: %v", err)
	}
	st.Close()
}

// TestPostgresRestartMidRun: the database restarts while a run records:
// the append that meets it waits it out, and nothing is lost. (Not
// parallel: the cluster is every test's.)
func TestPostgresRestartMidRun(t *testing.T) {
	c := pgtest.Get(t)
	st := openPostgres(t, pgtest.DSN(t), 0)
	rec, err := st.Start(t.Context(), runs.Begin{Flow: "restart", Source: "v1"})
	if err != nil {
		t.Fatal(err)
	}
	rec.Step(flow.StepReport{Index: 0, Kind: "echo", Status: flow.StatusPass})
	c.Stop(t)
	appended := make(chan error, 1)
	go func() { appended <- rec.Step(flow.StepReport{Index: 1, Kind: "echo", Status: flow.StatusPass}) }()
	select {
	case err := <-appended:
		c.Start(t)
		t.Fatalf("an append with the database down returned at once: %v", err)
	case <-time.After(time.Second):
	}
	c.Start(t)
	if err := <-appended; err != nil {
		t.Fatalf("the append across the restart: %v", err)
	}
	if err := rec.End(&flow.Report{OK: true, Passed: 2}, nil, nil); err != nil {
		t.Fatal(err)
	}
	d, err := st.Get(t.Context(), rec.ID())
	if err != nil || len(d.Steps) != 2 || d.EventCount != 4 || d.Outcome != runs.Passed {
		t.Errorf("after the restart: %+v, %d steps, %v", d.Run, len(d.Steps), err)
	}
}

// TestPostgresLostMidRun: a database that stays away past RetryFor
// stops the run that meets it (its context's cause says so); once the
// database is back, the run ends failed with that reason and every event
// recorded before is kept. (Not parallel: the cluster is every test's.)
func TestPostgresLostMidRun(t *testing.T) {
	c := pgtest.Get(t)
	st := openPostgres(t, pgtest.DSN(t), 0)
	runs.SetRetryFor(st, 500*time.Millisecond)
	rec, err := st.Start(t.Context(), runs.Begin{Flow: "lost", Source: "v1"})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := rec.Bind(context.Background())
	defer cancel(nil)
	rec.Step(flow.StepReport{Index: 0, Kind: "echo", Status: flow.StatusPass})
	c.Stop(t)
	err = rec.Step(flow.StepReport{Index: 1, Kind: "echo", Status: flow.StatusPass})
	if !errors.Is(err, runs.ErrStoreLost) || strings.Contains(err.Error(), pgtest.Password) {
		c.Start(t)
		t.Fatalf("an append past RetryFor: %v, want ErrStoreLost", err)
	}
	<-ctx.Done()
	c.Start(t)
	runs.SetRetryFor(st, runs.RetryFor)
	if !errors.Is(context.Cause(ctx), runs.ErrStoreLost) {
		t.Errorf("the run's cause: %v", context.Cause(ctx))
	}
	if err := rec.End(&flow.Report{Aborted: true}, nil, context.Cause(ctx)); err != nil {
		t.Fatal(err)
	}
	d, err := st.Get(t.Context(), rec.ID())
	if err != nil || d.Status.State != runs.Failed || !strings.Contains(d.Status.Error, "unreachable") || len(d.Steps) != 1 {
		t.Errorf("the run after the database came back: %+v, %d steps, %v", d.Status, len(d.Steps), err)
	}
}
