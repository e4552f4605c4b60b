package control

import (
	"github.com/toolserver/toolserver/runs"
)

// Drain refuses the starts and resumes asked from now on (their answer
// is unavailable: another replica takes them) and returns a channel
// closed once no run the plane drives is in flight. A stopping server
// drains its calls and the plane together.
func (p *Plane) Drain() <-chan struct{} { return p.drain.Start() }

// InFlight is how many runs the plane drives now.
func (p *Plane) InFlight() int { return p.drain.InFlight() }

// Stop is the one stop sequence of a process that drives runs: every
// run of the store this process drives is stopped (a run a resume can
// re-drive stays running with no driver, a RunInterrupted event says
// so; any other ends failed: runs.Store.Stopping), the runs' context
// and the take-over watch end, and Stop waits for the runs to end. New
// starts are refused from then on. A second Stop stops what came since
// and waits again.
func (p *Plane) Stop() {
	p.drain.Start()
	if p.cfg.Runs != nil {
		p.cfg.Runs.Stopping()
	}
	// The runs' context ends with the same cause, for a run that had
	// not bound its own yet.
	p.cancel(runs.ErrStopping) // a cancel keeps its first cause
	p.wg.Wait()
}
