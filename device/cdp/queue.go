package cdp

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"
)

// A server's pool (Options.Evict) shares MaxDevices devices among the
// calls of many clients. The rule:
//
//   - A call uses its device from Acquire until it releases it; a device
//     several calls use is busy until the last one lets go (the calls of
//     one device take turns above the pool: tool.Call.HoldDevice).
//   - A call for a booted device gets it at once, whoever uses it.
//   - A call for a device that is not booted boots it when the pool has
//     room; a full pool makes room by stopping the idle device that was
//     used least recently (its next call boots it afresh, on a blank
//     page). Idle devices are what a server has most of between the runs
//     of its clients, and nothing else would ever free their places.
//   - When every device is busy the call waits in one FIFO queue, and is
//     told its place each time it changes. The queue is served strictly
//     in arrival order as devices free up; a call whose caller goes away
//     leaves it. A call that would make the queue longer than
//     Options.Queue is refused at once (ErrQueueFull), with an estimate
//     of when to come back.

// ErrQueueFull means every device of the pool is in use and the queue of
// calls waiting for one is full; the error is a *QueueFullError.
var ErrQueueFull = errors.New("every device is busy and the queue is full")

// QueueFullError is the refusal of a call that found every device busy
// and the queue full.
type QueueFullError struct {
	// Waiting is how many calls wait in the queue, MaxDevices how many
	// devices the pool boots at most.
	Waiting    int
	MaxDevices int
	// RetryAfter is an estimate of when the call would find a place:
	// the time a device stays busy on average, times the turns ahead of
	// it (see retryAfterLocked).
	RetryAfter time.Duration
}

func (e *QueueFullError) Error() string {
	if e.Waiting == 0 {
		return fmt.Sprintf("all %d devices are busy and calls do not wait for one", e.MaxDevices)
	}
	return fmt.Sprintf("all %d devices are busy and the queue is full: %d %s ahead of this one",
		e.MaxDevices, e.Waiting, plural(e.Waiting, "call waits", "calls wait"))
}

// Is makes a QueueFullError match ErrQueueFull.
func (e *QueueFullError) Is(target error) bool { return target == ErrQueueFull }

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// QueuePosition is where a call waits in the queue.
type QueuePosition struct {
	// Position is the call's place, 1 for the next call to get a device.
	Position int
	// Waiting counts the calls in the queue, this one included.
	Waiting int
	// MaxDevices is how many devices the pool boots at most: all busy.
	MaxDevices int
}

// queueNotice is how often a waiting call is told its place again when
// it has not changed: a stream that says nothing for 60 s is cut off by
// a proxy such as nginx.
const queueNotice = 15 * time.Second

// defaultBusy stands for the time a device stays busy until the pool has
// seen one freed; busyWeight is the weight of each new busy period in the
// running mean.
const (
	defaultBusy = 10 * time.Second
	busyWeight  = 0.25
)

// waiter is one call in the queue.
type waiter struct {
	id    string
	w, h  int
	moved chan struct{} // its place changed; buffered
	// granted is closed when the call's turn came: d is its device, to
	// boot with life when life is set, or err says why it has none.
	granted chan struct{}
	d       *Device
	life    context.Context
	err     error
}

func (w *waiter) grant(d *Device, life context.Context, err error) {
	w.d, w.life, w.err = d, life, err
	close(w.granted)
}

// Acquire returns device id, booting it on first use, and marks it used
// until release is called (once the call is over; calling it again does
// nothing). In a pool that evicts (Options.Evict) a call that finds every
// device busy waits in the queue, calling waiting with its place at once,
// whenever it changes and every queueNotice meanwhile; with waiting nil it
// does not wait and gets ErrTooManyDevices (a call inside a call that
// holds a device, which could otherwise wait for itself). A full queue
// answers a *QueueFullError. A pool that does not evict refuses at once
// with ErrTooManyDevices when full, as Device does.
func (p *Pool) Acquire(ctx context.Context, id string, waiting func(QueuePosition)) (d *Device, release func(), err error) {
	if p.missing != nil {
		return nil, nil, p.missing
	}
	w, h, err := ParseID(id)
	if err != nil {
		return nil, nil, err
	}
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil, nil, ErrClosed
	}
	if d := p.devices[id]; d != nil && d.Dead() {
		p.dropLocked(d)
	}
	if d := p.devices[id]; d != nil {
		p.useLocked(d)
		p.mu.Unlock()
		return p.ready(ctx, d, nil)
	}
	// The queue is served first: while calls wait there is no room.
	if len(p.queue) == 0 && p.roomLocked() {
		d, life := p.addLocked(id, w, h)
		p.mu.Unlock()
		return p.ready(ctx, d, life)
	}
	switch {
	case !p.evict:
		err = p.tooManyLocked()
	case waiting == nil:
		err = fmt.Errorf("%w: all %d devices are busy, and a call inside one that holds a device does not wait for another", ErrTooManyDevices, p.max)
	case len(p.queue) >= p.queueMax:
		err = &QueueFullError{Waiting: len(p.queue), MaxDevices: p.max, RetryAfter: p.retryAfterLocked()}
	}
	if err != nil {
		p.mu.Unlock()
		return nil, nil, err
	}
	wt := &waiter{id: id, w: w, h: h, moved: make(chan struct{}, 1), granted: make(chan struct{})}
	p.queue = append(p.queue, wt)
	pos := p.positionLocked(wt)
	p.mu.Unlock()

	waiting(pos)
	tick := time.NewTicker(queueNotice)
	defer tick.Stop()
	for {
		select {
		case <-wt.granted:
			return p.granted(ctx, wt)
		case <-wt.moved:
			p.mu.Lock()
			now := p.positionLocked(wt)
			p.mu.Unlock()
			if now.Position > 0 && now != pos {
				pos = now
				waiting(pos)
			}
		case <-tick.C:
			waiting(pos)
		case <-ctx.Done():
			p.mu.Lock()
			queued := slices.Contains(p.queue, wt)
			if queued {
				p.queue = slices.DeleteFunc(p.queue, func(o *waiter) bool { return o == wt })
				p.movedLocked()
			}
			p.mu.Unlock()
			if !queued {
				// Its turn came meanwhile: booting with the ended
				// context fails at once and hands the place on.
				return p.granted(ctx, wt)
			}
			return nil, nil, fmt.Errorf("wait for a device: %w", context.Cause(ctx))
		}
	}
}

// granted finishes the Acquire of a waiter whose turn came.
func (p *Pool) granted(ctx context.Context, wt *waiter) (*Device, func(), error) {
	if wt.err != nil {
		return nil, nil, wt.err
	}
	d, release, err := p.ready(ctx, wt.d, wt.life)
	if err == nil && ctx.Err() != nil {
		release()
		return nil, nil, fmt.Errorf("wait for a device: %w", context.Cause(ctx))
	}
	return d, release, err
}

// ready boots d with life, when set, or waits for its boot, and returns
// it with its release; d is already marked used.
func (p *Pool) ready(ctx context.Context, d *Device, life context.Context) (*Device, func(), error) {
	release := p.releaser(d)
	if life == nil {
		if err := d.awaitBoot(ctx); err != nil {
			release()
			return nil, nil, err
		}
		return d, release, nil
	}
	if err := d.boot(ctx, life); err != nil {
		p.mu.Lock()
		p.dropLocked(d)
		p.mu.Unlock()
		release()
		return nil, nil, fmt.Errorf("boot %s: %w", d.id, err)
	}
	return d, release, nil
}

// releaser returns the function that ends one use of d.
func (p *Pool) releaser(d *Device) func() {
	done := false
	return func() {
		p.mu.Lock()
		defer p.mu.Unlock()
		if done {
			return
		}
		done = true
		d.uses--
		if d.uses == 0 {
			now := time.Now()
			d.idleSince = now
			p.noteBusyLocked(now.Sub(d.busySince))
		}
		p.dispatchLocked()
	}
}

// useLocked marks one more use of d; p.mu is held.
func (p *Pool) useLocked(d *Device) {
	if d.uses == 0 {
		d.busySince = time.Now()
	}
	d.uses++
}

// addLocked puts a new device id in the pool, used once, for the caller
// to boot with the life it returns; p.mu is held and there is room.
func (p *Pool) addLocked(id string, w, h int) (*Device, context.Context) {
	d, life := newDevice(id, w, h, p.urls, p.browserLocked(w, h))
	p.devices[id] = d
	p.useLocked(d)
	return d, life
}

// roomLocked reports whether a device may be added, stopping the least
// recently used idle device (a dead one first) to make room in a pool
// that evicts; p.mu is held.
func (p *Pool) roomLocked() bool {
	if len(p.devices) < p.max {
		return true
	}
	if !p.evict {
		return false
	}
	var victim string
	for key, d := range p.devices {
		if d.uses > 0 {
			continue
		}
		if v := p.devices[victim]; v == nil || d.Dead() && !v.Dead() || d.Dead() == v.Dead() && d.idleSince.Before(v.idleSince) {
			victim = key
		}
	}
	if victim == "" {
		return false
	}
	p.releaseLocked(p.devices[victim])
	delete(p.devices, victim)
	return true
}

// dispatchLocked gives devices to the waiting calls that can have one
// now, oldest first: a call whose device another call booted meanwhile
// gets it, and the others get a place as long as there is room, strictly
// in order. p.mu is held.
func (p *Pool) dispatchLocked() {
	if len(p.queue) == 0 || p.closed {
		return
	}
	served := false
	full := false
	p.queue = slices.DeleteFunc(p.queue, func(wt *waiter) bool {
		if d := p.devices[wt.id]; d != nil && d.Dead() && d.uses == 0 {
			delete(p.devices, wt.id)
			p.releaseLocked(d)
		}
		if d := p.devices[wt.id]; d != nil {
			p.useLocked(d)
			wt.grant(d, nil, nil)
			served = true
			return true
		}
		if full || !p.roomLocked() {
			full = true
			return false
		}
		d, life := p.addLocked(wt.id, wt.w, wt.h)
		wt.grant(d, life, nil)
		served = true
		return true
	})
	if served {
		p.movedLocked()
	}
}

// movedLocked tells every waiting call that its place may have changed;
// p.mu is held.
func (p *Pool) movedLocked() {
	for _, wt := range p.queue {
		select {
		case wt.moved <- struct{}{}:
		default:
		}
	}
}

// positionLocked returns wt's place in the queue (Position 0 when it is
// no longer there); p.mu is held.
func (p *Pool) positionLocked(wt *waiter) QueuePosition {
	return QueuePosition{Position: 1 + slices.Index(p.queue, wt), Waiting: len(p.queue), MaxDevices: p.max}
}

// noteBusyLocked adds a busy period to the running mean; p.mu is held.
func (p *Pool) noteBusyLocked(busy time.Duration) {
	if p.busyAvg == 0 {
		p.busyAvg = busy
		return
	}
	p.busyAvg += time.Duration(busyWeight * float64(busy-p.busyAvg))
}

// retryAfterLocked estimates when a call refused now would find a place
// in the queue: a device frees up every busyAvg/max on average, and the
// calls waiting plus this one need that many turns. Bounded to
// [1 s, 5 min], since a mean of a few runs is a rough guide. p.mu is held.
func (p *Pool) retryAfterLocked() time.Duration {
	busy := p.busyAvg
	if busy == 0 {
		busy = defaultBusy
	}
	est := busy * time.Duration(len(p.queue)+1) / time.Duration(p.max)
	// Whole seconds, rounded up: what a Retry-After header can say.
	est = (est + time.Second - 1).Truncate(time.Second)
	return min(max(est, time.Second), 5*time.Minute)
}

// tooManyLocked is the refusal of a full pool that does not evict; p.mu
// is held.
func (p *Pool) tooManyLocked() error {
	ids := p.idsLocked()
	return fmt.Errorf("%w: %d devices are booted (%v), the limit is %d; stop one with stop-device or raise --max-devices", ErrTooManyDevices, len(ids), ids, p.max)
}
