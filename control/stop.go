package control

import (
	"sync"

	"github.com/toolserver/toolserver/runs"
)

// drainer counts the runs a plane drives in flight and, once it drains,
// refuses new ones and tells when the last has ended.
type drainer struct {
	mu       sync.Mutex
	n        int
	draining bool
	idle     chan struct{}
}

// enter counts a run in, or refuses it while draining.
func (d *drainer) enter() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.draining {
		return false
	}
	d.n++
	return true
}

// leave counts a run out.
func (d *drainer) leave() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.n--
	if d.draining && d.n == 0 {
		close(d.idle)
	}
}

// start begins the drain and returns a channel closed when no run is in
// flight.
func (d *drainer) start() <-chan struct{} {
	d.mu.Lock()
	defer d.mu.Unlock()
	if !d.draining {
		d.draining = true
		if d.n == 0 {
			close(d.idle)
		}
	}
	return d.idle
}

func (d *drainer) inFlight() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.n
}

// Drain refuses the starts and resumes asked from now on (their answer
// is unavailable: another replica takes them) and returns a channel
// closed once no run the plane drives is in flight. A stopping server
// drains its calls and the plane together.
func (p *Plane) Drain() <-chan struct{} { return p.drain.start() }

// InFlight is how many runs the plane drives now.
func (p *Plane) InFlight() int { return p.drain.inFlight() }

// Stop is the one stop sequence of a process that drives runs: every
// run of the store this process drives is stopped (a run a resume can
// re-drive stays running with no driver, a RunInterrupted event says
// so; any other ends failed: runs.Store.Stopping), the runs' context
// and the take-over watch end, and Stop waits for the runs to end. New
// starts are refused from then on. A second Stop stops what came since
// and waits again.
func (p *Plane) Stop() {
	p.drain.start()
	if p.cfg.Runs != nil {
		p.cfg.Runs.Stopping()
	}
	// The runs' context ends with the same cause, for a run that had
	// not bound its own yet.
	p.stopOnce.Do(func() { p.cancel(runs.ErrStopping) })
	p.wg.Wait()
}
