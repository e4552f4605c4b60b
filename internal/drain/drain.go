// Package drain counts the work in flight of a process that stops
// gracefully: once it drains it refuses new work and tells when the last
// piece has ended. The HTTP server counts its calls with it and the
// control plane the runs it drives, each with its own counter, so that a
// stopping server waits for both.
package drain

import "sync"

// Counter counts work in flight. Its zero value is ready to use.
type Counter struct {
	mu       sync.Mutex
	n        int
	draining bool
	idle     chan struct{}
}

// Enter counts a piece of work in, or refuses it (false) while draining.
func (d *Counter) Enter() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.draining {
		return false
	}
	d.n++
	return true
}

// Leave counts a piece of work out.
func (d *Counter) Leave() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.n--
	if d.draining && d.n == 0 {
		close(d.idleChan())
	}
}

// Start begins the drain and returns a channel closed when nothing is in
// flight. A second Start returns the same channel.
func (d *Counter) Start() <-chan struct{} {
	d.mu.Lock()
	defer d.mu.Unlock()
	idle := d.idleChan()
	if !d.draining {
		d.draining = true
		if d.n == 0 {
			close(idle)
		}
	}
	return idle
}

// Draining reports whether the drain has begun.
func (d *Counter) Draining() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.draining
}

// InFlight returns how much work is in flight.
func (d *Counter) InFlight() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.n
}

// idleChan is the channel Start returns, made on first use (d.mu held).
func (d *Counter) idleChan() chan struct{} {
	if d.idle == nil {
		d.idle = make(chan struct{})
	}
	return d.idle
}
