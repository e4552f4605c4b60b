package runs_test

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
	"github.com/toolserver/toolserver/runs"
	"github.com/toolserver/toolserver/server"
	"github.com/toolserver/toolserver/tool"
)

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
	t.Parallel()
	st := open(t, t.TempDir(), 0)
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
	c := runs.NewClient(srv.URL, "tok")
	c.Backoff = 1
	var seqs []int64
	drops := 0
	fourth := make(chan struct{})
	done := make(chan string, 1)
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
	if status := <-done; status != runs.Passed {
		t.Fatalf("final status %q", status)
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
}
