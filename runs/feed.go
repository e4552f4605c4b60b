package runs

import (
	"context"
	"errors"
	"sync"
	"time"
)

// The run list's followers (open dashboards) share one listing per
// change: while any of them watches, one goroutine lists the newest runs
// after each change, at most once per FeedInterval, and every follower
// reads that view (docs/control-plane.md, "The event stream").

// FeedSize is how many of the newest runs a view holds.
const FeedSize = 100

// FeedInterval is the least time between two listings: the changes of a
// burst (a run recording its steps) come out as one view.
const FeedInterval = 100 * time.Millisecond

// errClosed is the error of a view of a store that is closed.
var errClosed = errors.New("the run store is closed")

// View is the newest runs at one moment, shared by every follower of the
// run list.
type View struct {
	// Runs are the newest FeedSize runs, newest first, and Err why they
	// could not be listed.
	Runs []Run
	Err  error
	// listed is false for the view a watch starts with before the first
	// listing is out.
	listed bool
	// done is closed when next, the newer view, is out.
	done chan struct{}
	next *View
}

// Listed reports whether v holds a listing; the first view of a watch
// may only wait for one.
func (v *View) Listed() bool { return v.listed }

// Changed is closed when a newer view is out.
func (v *View) Changed() <-chan struct{} { return v.done }

// Next is the newer view, once Changed is closed.
func (v *View) Next() *View { return v.next }

// feed is the state of the run list's listings.
type feed struct {
	mu       sync.Mutex
	head     *View
	watchers int
	// stop is closed when the last watcher leaves; it names the
	// goroutine listing for the watchers of the time.
	stop   chan struct{}
	closed bool
	wg     sync.WaitGroup
}

// wait waits for the listing goroutine to end, and starts no other: the
// store is closing.
func (f *feed) wait() {
	f.mu.Lock()
	f.closed = true
	f.mu.Unlock()
	f.wg.Wait()
}

// Watch starts following the run list: it returns the newest view (one
// that waits for the first listing when nobody was watching) and the
// function that ends the watch.
func (s *Store) Watch() (*View, func()) {
	f := &s.feed
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return &View{Err: errClosed, listed: true, done: make(chan struct{})}, func() {}
	}
	if f.watchers == 0 {
		f.head = &View{done: make(chan struct{})}
		f.stop = make(chan struct{})
		f.wg.Add(1)
		go s.list(f.stop)
	}
	f.watchers++
	var once sync.Once
	return f.head, func() { once.Do(s.unwatch) }
}

func (s *Store) unwatch() {
	f := &s.feed
	f.mu.Lock()
	defer f.mu.Unlock()
	f.watchers--
	if f.watchers == 0 {
		close(f.stop)
	}
}

// list lists the newest runs for the watchers of stop: at once, then
// after each change, no sooner than FeedInterval after the last listing.
func (s *Store) list(stop chan struct{}) {
	defer s.feed.wg.Done()
	for {
		changed := s.Changed()
		runs, err := s.List(context.Background(), Filter{Limit: FeedSize})
		s.publishView(stop, &View{Runs: runs, Err: err, listed: true, done: make(chan struct{})})
		next := time.NewTimer(FeedInterval)
		select {
		case <-changed:
		case <-stop:
		case <-s.closed:
		}
		select {
		case <-next.C:
		case <-stop:
		case <-s.closed:
		}
		next.Stop()
		select {
		case <-stop:
			return
		case <-s.closed:
			return
		default:
		}
	}
}

// publishView makes v the newest view, unless the watch of stop is over.
func (s *Store) publishView(stop chan struct{}, v *View) {
	f := &s.feed
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.stop != stop {
		return
	}
	f.head.next = v
	close(f.head.done)
	f.head = v
}
