package v1_test

import (
	"bytes"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/toolserver/toolserver/flow"
	"github.com/toolserver/toolserver/internal/pgtest"
	"github.com/toolserver/toolserver/runs"
	v1 "github.com/toolserver/toolserver/runs/v1"
	"github.com/toolserver/toolserver/server"
	"github.com/toolserver/toolserver/tool"
)

// forEachStore runs test over a SQLite store and a PostgreSQL one, as
// runs' own suite does.
func forEachStore(t *testing.T, test func(t *testing.T, st *runs.Store)) {
	t.Parallel()
	t.Run("sqlite", func(t *testing.T) {
		t.Parallel()
		st, err := runs.Open(t.TempDir(), 0)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		test(t, st)
	})
	t.Run("postgres", func(t *testing.T) {
		t.Parallel()
		st, err := runs.OpenPostgres(t.Context(), pgtest.DSN(t), runs.PostgresOptions{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		test(t, st)
	})
}

// passed records a run that passes and returns its id.
func passed(t *testing.T, st *runs.Store) string {
	t.Helper()
	rec, err := st.Start(t.Context(), runs.Begin{Flow: "f", Source: "tools"})
	if err != nil {
		t.Fatal(err)
	}
	if err := rec.End(&flow.Report{OK: true, Passed: 1}, nil, nil); err != nil {
		t.Fatal(err)
	}
	return rec.ID()
}

// cutter aborts its connection after limit frames of an event stream.
type cutter struct {
	http.ResponseWriter
	frames, limit int
}

func (c *cutter) Write(b []byte) (int, error) {
	c.frames += bytes.Count(b, []byte("\n\n"))
	n, err := c.ResponseWriter.Write(b)
	if c.frames >= c.limit {
		http.NewResponseController(c.ResponseWriter).Flush()
		panic(http.ErrAbortHandler) // the connection drops
	}
	return n, err
}

func (c *cutter) Unwrap() http.ResponseWriter { return c.ResponseWriter }

// TestFollowReconnectsWithItsCursor: a stream dropped mid-run is
// reconnected with Last-Event-ID; every event arrives once, in order.
func TestFollowReconnectsWithItsCursor(t *testing.T) {
	forEachStore(t, func(t *testing.T, st *runs.Store) {
		h := server.New(server.Config{Addr: "127.0.0.1:0", Tools: tool.NewRegistry(), Runs: st, Token: "tok"}).Handler()
		var streams atomic.Int32
		var resumedFrom sync.Map
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if strings.HasSuffix(r.URL.Path, "/events") {
				n := streams.Add(1)
				resumedFrom.Store(n, r.Header.Get("Last-Event-ID"))
				if n == 1 {
					w = &cutter{ResponseWriter: w, limit: 3}
				}
			}
			h.ServeHTTP(w, r)
		}))
		defer srv.Close()

		rec, err := st.Start(t.Context(), runs.Begin{Flow: "f", Source: "v1"})
		if err != nil {
			t.Fatal(err)
		}
		for i := range 4 {
			rec.Step(flow.StepReport{Index: i, Kind: "tap", Status: flow.StatusPass})
		}
		c := v1.NewClient(srv.URL, "tok")
		c.Backoff = 1
		var seqs []int64
		drops := 0
		fourth := make(chan struct{})
		done := make(chan runs.EndFrame, 1)
		go func() {
			status, err := c.Follow(t.Context(), rec.ID(), 0, func(e runs.Event) error {
				seqs = append(seqs, e.Seq)
				if e.Seq == 4 {
					close(fourth)
				}
				return nil
			}, func(error) { drops++ })
			if err != nil {
				t.Error(err)
			}
			done <- status
		}()
		<-fourth // the first connection dropped after seq 2; the second has 3 and 4
		rec.Step(flow.StepReport{Index: 4, Kind: "tap", Status: flow.StatusPass})
		rec.End(&flow.Report{OK: true, Passed: 5}, nil, nil)
		if end := <-done; end.Status.Outcome() != runs.Passed {
			t.Fatalf("final status %+v", end)
		}
		for i, s := range seqs {
			if s != int64(i) {
				t.Fatalf("seqs %v: want 0..%d once each in order", seqs, len(seqs)-1)
			}
		}
		if len(seqs) != 7 || drops != 1 {
			t.Fatalf("got %d events and %d drops, want 7 and 1", len(seqs), drops)
		}
		if v, _ := resumedFrom.Load(int32(2)); v != "2" {
			t.Errorf("the second connection resumed from Last-Event-ID %q, want 2", v)
		}
		// An unknown run is the API's error, not a reconnect loop.
		if _, err := c.Follow(t.Context(), "99999999-2222-4333-8444-555555555555", 0, func(runs.Event) error { return nil }, nil); !errors.Is(err, runs.ErrUnknownRun) {
			t.Errorf("follow an unknown run: %v", err)
		}
	})
}

// TestFollowWaitsOutAFullServer: a server at its cap of event streams
// answers 503 with Retry-After; Follow asks again when it says, and gets
// the run once a stream is free.
func TestFollowWaitsOutAFullServer(t *testing.T) {
	forEachStore(t, func(t *testing.T, st *runs.Store) {
		id := passed(t, st)
		srv := httptest.NewServer(server.New(server.Config{Addr: "127.0.0.1:0", Tools: tool.NewRegistry(), Runs: st, MaxStreams: 1}).Handler())
		defer srv.Close()
		held, err := http.Get(srv.URL + "/v1/events")
		if err != nil || held.StatusCode != http.StatusOK {
			t.Fatalf("the stream that takes the one slot: %v %v", held, err)
		}
		// Closed before the server is, on every path: Close waits for it.
		defer held.Body.Close()
		refused := make(chan error, 1)
		c := v1.NewClient(srv.URL, "")
		done := make(chan error, 1)
		var status runs.EndFrame
		go func() {
			var err error
			status, err = c.Follow(t.Context(), id, 0, func(runs.Event) error { return nil }, func(err error) {
				select {
				case refused <- err:
				default:
				}
			})
			done <- err
		}()
		var api *v1.APIError
		select {
		case err := <-refused:
			if !errors.As(err, &api) || api.Status != http.StatusServiceUnavailable || api.RetryAfter <= 0 {
				t.Fatalf("the refusal Follow heard of: %v, want 503 with Retry-After", err)
			}
		case err := <-done:
			t.Fatalf("Follow ended at the full server (%+v, %v) instead of waiting for room", status, err)
		}
		held.Body.Close() // the slot frees; Follow's next try gets it
		if err := <-done; err != nil || status.Status.Outcome() != runs.Passed {
			t.Fatalf("Follow after the server had room: %+v, %v", status, err)
		}
	})
}
