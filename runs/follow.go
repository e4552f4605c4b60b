package runs

import (
	"context"
	"encoding/json"
	"sync"
	"time"
)

// A live run's events reach its followers without a query: the recorder
// hands each event, once committed, to every tail of the run, and a
// follower reads from the store only what was recorded before its tail
// began (docs/control-plane.md, "The event stream"). A run never waits for
// a follower.

// TailBuffer is how many events a tail holds for a follower that has not
// taken them yet; a follower that falls further behind is cut off the
// tail and catches up from the store.
const TailBuffer = 1024

// Recorded is an event as its run recorded it, handed to every tail of
// the run: its JSON is encoded once for all of them.
type Recorded struct {
	Event
	once sync.Once
	data []byte
}

// JSON is the event encoded as the API sends it.
func (e *Recorded) JSON() []byte {
	e.once.Do(func() { e.data, _ = json.Marshal(e.Event) })
	return e.data
}

// recorded is the event a run recorded at seq, at ms (Unix milliseconds),
// as a read of the store returns it.
func recorded(id string, seq, ms int64, kind string, payload []byte) Event {
	return Event{RunID: id, Seq: seq, SchemaVersion: SchemaVersion, RecordedAt: time.UnixMilli(ms).UTC(), Event: Body{Kind: kind, Payload: json.RawMessage(payload)}}
}

// Tail is one follower's feed of a live run's events as they are
// recorded, from From on; the events before From are in the store.
type Tail struct {
	// From is the sequence number of the first event C brings.
	From int64
	// C brings the events in order. It is closed after the run's last
	// event (its terminal event, or the RunInterrupted of a driver that
	// stopped), or when the follower fell TailBuffer events behind: Ended
	// tells which.
	C  <-chan *Recorded
	ch chan *Recorded
	r  *Recorder
	// end is the run's end frame, set before ch is closed when its
	// driver stopped; nil when the tail was cut off.
	end *EndFrame
}

// Ended returns, once C is closed, the run's end frame, and false when
// the tail was cut off instead (catch up from the store).
func (t *Tail) Ended() (EndFrame, bool) {
	if t.end == nil {
		return EndFrame{}, false
	}
	return *t.end, true
}

// Close stops the tail; the recorder forgets it.
func (t *Tail) Close() {
	t.r.mu.Lock()
	defer t.r.mu.Unlock()
	if _, ok := t.r.tails[t]; ok {
		delete(t.r.tails, t)
		close(t.ch)
	}
}

// Follow returns a tail of run id while this process records it, and nil
// when it does not (the run has ended, or has not started here): then the
// store has every event it will have.
func (s *Store) Follow(id string) *Tail {
	s.mu.Lock()
	r := s.live[CanonicalID(id)]
	s.mu.Unlock()
	if r == nil {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.untailed {
		return nil
	}
	ch := make(chan *Recorded, TailBuffer)
	t := &Tail{From: r.seq, C: ch, ch: ch, r: r}
	if r.tails == nil {
		r.tails = map[*Tail]struct{}{}
	}
	r.tails[t] = struct{}{}
	return t
}

// publish hands an event the run has just committed to every tail,
// cutting off a tail that is full rather than waiting for it. r.mu is
// held.
func (r *Recorder) publish(e Event) {
	if len(r.tails) == 0 {
		return
	}
	rec := &Recorded{Event: e}
	for t := range r.tails {
		select {
		case t.ch <- rec:
		default:
			delete(r.tails, t)
			close(t.ch)
		}
	}
}

// untail ends every tail after the run's last event (nil when it could
// not be recorded: the followers look in the store), with the end frame,
// and takes no new ones.
func (r *Recorder) untail(last *Event, end *EndFrame) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.untailLocked(last, end)
}

func (r *Recorder) untailLocked(last *Event, end *EndFrame) {
	if last != nil {
		r.publish(*last)
	}
	for t := range r.tails {
		t.end = end
		delete(r.tails, t)
		close(t.ch)
	}
	r.untailed = true
}

// readerPoll is how often a reader of a store another process writes
// looks for a run's new events: it has no in-process wake-up.
const readerPoll = 200 * time.Millisecond

// FollowEvents hands each of a run's events from seq from on to each, in
// order, until the run has ended or no driver runs it, and returns its
// end frame. Written by this process, the run's events arrive as they
// are recorded; written by another (a reader), they are looked for every
// readerPoll.
func (s *Store) FollowEvents(ctx context.Context, id string, from int64, each func(Event) error) (EndFrame, error) {
	for {
		changed := s.Changed()
		run, err := s.Run(ctx, id)
		if err != nil {
			return EndFrame{}, err
		}
		evs, err := s.Events(ctx, id, from)
		if err != nil {
			return EndFrame{}, err
		}
		for _, e := range evs {
			if err := each(e); err != nil {
				return EndFrame{}, err
			}
			from = e.Seq + 1
		}
		if Terminal(run.Status.State) || (s.Stalled(run) && from >= run.EventCount) {
			return run.End(), nil
		}
		t := time.NewTimer(readerPoll)
		select {
		case <-ctx.Done():
			t.Stop()
			return EndFrame{}, ctx.Err()
		case <-changed:
		case <-t.C:
		}
		t.Stop()
	}
}

// Stalled reports whether a running run waits for a resume by hand: no
// driver runs it, and nothing will by itself. A fleet's store (Shared)
// has none: another replica takes over a run whose driver was lost, or
// fails it, so its followers wait for that.
func (s *Store) Stalled(r Run) bool {
	return !Terminal(r.Status.State) && r.Driver == DriverNone && !s.Shared()
}
