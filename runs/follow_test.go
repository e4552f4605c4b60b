package runs_test

import (
	"fmt"
	"sync"
	"testing"

	"github.com/toolserver/toolserver/flow"
	"github.com/toolserver/toolserver/runs"
)

// TestAppendNeverWaitsForATail: a tail nobody reads does not hold the
// run: every Append returns, and the tail, full, is cut off (closed, not
// ended) so that its follower catches up from the store.
func TestAppendNeverWaitsForATail(t *testing.T) {
	forEachStore(t, 0, func(t *testing.T, st *runs.Store) {
		rec, err := st.Start(t.Context(), runs.Begin{Source: "v1"})
		if err != nil {
			t.Fatal(err)
		}
		tail := st.Follow(rec.ID())
		if tail == nil || tail.From != 1 {
			t.Fatalf("a tail of a live run after run_started: %+v, want one from seq 1", tail)
		}
		defer tail.Close()
		for i := range runs.TailBuffer + 10 {
			if err := rec.Append(runs.KindStepCompleted, map[string]int{"i": i}); err != nil {
				t.Fatal(err)
			}
		}
		n := 0
		for e := range tail.C {
			if e.Seq != int64(1+n) {
				t.Fatalf("event %d of the tail has seq %d", n, e.Seq)
			}
			n++
		}
		if _, ended := tail.Ended(); ended || n != runs.TailBuffer {
			t.Fatalf("the full tail: %d events, ended %v; want %d and cut off", n, ended, runs.TailBuffer)
		}
		if err := rec.End(&flow.Report{OK: true}, nil, nil); err != nil {
			t.Fatal(err)
		}
		if st.Follow(rec.ID()) != nil {
			t.Error("a tail of an ended run: want nil (the store has it all)")
		}
	})
}

// TestFollowersSeeEveryEventOnce: followers that start while a run
// records, each reading the store up to its tail and then the tail, see
// every event once and in order, then the run's end with its status.
func TestFollowersSeeEveryEventOnce(t *testing.T) {
	forEachStore(t, 0, func(t *testing.T, st *runs.Store) {
		rec, err := st.Start(t.Context(), runs.Begin{Source: "v1"})
		if err != nil {
			t.Fatal(err)
		}
		const events = 500
		started := make(chan struct{})
		go func() {
			for i := range events {
				if i == 50 {
					close(started)
				}
				rec.Append(runs.KindStepCompleted, map[string]int{"i": i})
			}
			rec.End(&flow.Report{OK: true}, nil, nil)
		}()
		<-started
		var wg sync.WaitGroup
		errs := make(chan error, 8)
		for range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				errs <- follow(t, st, rec.ID(), events+2)
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				t.Error(err)
			}
		}
	})
}

// follow reads run id as a stream does: the store before the tail, then
// the tail, again from the store when it is cut off; it wants seqs 0 to
// want-1 and the end.
func follow(t *testing.T, st *runs.Store, id string, want int64) error {
	next := int64(0)
	for {
		tail := st.Follow(id)
		evs, err := st.Events(t.Context(), id, next)
		if err != nil {
			return err
		}
		for _, e := range evs {
			if tail != nil && e.Seq >= tail.From {
				break
			}
			if e.Seq != next {
				return fmt.Errorf("from the store: seq %d, want %d", e.Seq, next)
			}
			next++
		}
		if tail == nil {
			if r, _ := st.Run(t.Context(), id); r.Outcome != runs.Passed || next != want {
				return fmt.Errorf("the end: %+v after %d events, want passed after %d", r.Status, next, want)
			}
			return nil
		}
		for e := range tail.C {
			if e.Seq < next {
				continue
			}
			if e.Seq != next {
				return fmt.Errorf("from the tail: seq %d, want %d", e.Seq, next)
			}
			next++
		}
		tail.Close()
		if s, ended := tail.Ended(); ended {
			if s.Status.Outcome() != runs.Passed || next != want {
				return fmt.Errorf("the tail's end: %+v after %d events, want passed after %d", s, next, want)
			}
			return nil
		}
	}
}
