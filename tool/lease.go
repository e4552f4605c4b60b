package tool

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/toolserver/toolserver/fault"
)

// A device is one page: two calls that drive it at once replace each
// other's page (a flow's launch: under another flow's assert). So a call
// holds its device for its whole length (Call.HoldDevice), and the calls
// for a busy device queue in arrival order. The rule:
//
//   - A long call (a tool marked LongRunning: flow-execute, the await
//     tools) waits its turn as long as its caller waits, and says so on
//     its stream (Waiting) at once and every waitNotice.
//   - A short call (open-url, tap, describe, …) waits its turn behind
//     other short calls, but is refused at once with a 409 (CodeDeviceBusy)
//     when a long call holds the device or waits for it ahead: its
//     client gives it 30 s (Argent's MCP server), far less than a run.
//   - A call made inside one that holds the device (a flow's tool: steps,
//     a nested flow-execute) goes through: its context carries the hold.
//   - A call made inside one that holds another device never waits (two
//     runs could each wait for the other's device): busy is a 409.
//   - A caller that goes away leaves the queue.

// CodeDeviceBusy is the error code of a call refused because another call
// holds its device.
const CodeDeviceBusy = "DEVICE_BUSY"

// waitNotice is how often a waiting call repeats that it waits: well
// under the 60 s a proxy such as nginx waits for data by default, so a
// stream that waits is not cut off.
const waitNotice = 15 * time.Second

// Waiting is what a call sends on its stream while it waits for its
// device. It travels as a stream line of its own,
// {"event":"waiting","data":…}, not as a progress line: the data of a
// progress line is a step report, which clients render as a step, and
// the published Argent client ignores events it does not know.
type Waiting struct {
	Device string `json:"device"`
	// Ahead counts the calls before this one, the holder included.
	Ahead int `json:"ahead"`
	// Holder is the tool of the call that holds the device, HeldMs how
	// long it has held it.
	Holder string `json:"holder,omitempty"`
	HeldMs int64  `json:"heldMs,omitempty"`
	// Position is set instead when the call waits for any device to free
	// up, every one of the server's being busy: its place in the
	// server's queue, 1 for the next call served (Ahead is then the calls
	// before it in the queue). Device is then the device it will boot.
	Position int    `json:"position,omitempty"`
	Message  string `json:"message"`
}

// StreamEvent names the stream line Waiting travels in.
func (Waiting) StreamEvent() string { return "waiting" }

// leases are the queues of the devices of one registry, by device id.
type leases struct {
	mu     sync.Mutex
	queues map[string]*deviceQueue
}

// deviceQueue is one device's holder and the calls waiting, oldest first.
type deviceQueue struct {
	holder *lease
	queue  []*lease
}

// lease is one call's place on a device.
type lease struct {
	tool    string
	long    bool
	since   time.Time // when it got the device
	granted chan struct{}
}

// longAhead reports whether a long call holds the device or waits for it.
func (q *deviceQueue) longAhead() bool {
	if q.holder != nil && q.holder.long {
		return true
	}
	return slices.ContainsFunc(q.queue, func(l *lease) bool { return l.long })
}

// heldKey is the context key of the devices a call holds, per registry.
type heldKey struct{ ls *leases }

// held returns the ids of the devices ctx's call holds on ls.
func (ls *leases) held(ctx context.Context) []string {
	ids, _ := ctx.Value(heldKey{ls}).([]string)
	return ids
}

func (ls *leases) withHeld(ctx context.Context, id string) context.Context {
	ids := append(slices.Clone(ls.held(ctx)), id)
	return context.WithValue(ctx, heldKey{ls}, ids)
}

// release hands the device to the next call in line, if any.
func (ls *leases) release(id string, l *lease) {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	q := ls.queues[id]
	if q == nil || q.holder != l {
		return
	}
	if len(q.queue) == 0 {
		delete(ls.queues, id)
		return
	}
	q.holder, q.queue = q.queue[0], q.queue[1:]
	q.holder.since = time.Now()
	close(q.holder.granted)
}

// leave takes a waiting call out of the line; when the device was handed
// to it meanwhile, it passes the device on.
func (ls *leases) leave(id string, l *lease) {
	ls.mu.Lock()
	q := ls.queues[id]
	if q != nil && q.holder == l {
		ls.mu.Unlock()
		ls.release(id, l)
		return
	}
	if q != nil {
		q.queue = slices.DeleteFunc(q.queue, func(w *lease) bool { return w == l })
	}
	ls.mu.Unlock()
}

// waiting describes l's place in the line of id; ls.mu is held.
func (q *deviceQueue) waiting(id string, l *lease) Waiting {
	ahead := 1 + slices.Index(q.queue, l)
	held := time.Since(q.holder.since)
	return Waiting{
		Device: id, Ahead: ahead, Holder: q.holder.tool, HeldMs: held.Milliseconds(),
		Message: fmt.Sprintf("waiting for device %s: %s has held it for %s; %d %s ahead of this one",
			id, q.holder.tool, held.Round(time.Second), ahead, plural(ahead, "call", "calls")),
	}
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// busy is the refusal of a call that does not wait for device id.
func busy(id string, holder *lease, why string) *fault.Error {
	return &fault.Error{Kind: fault.Conflict, Code: CodeDeviceBusy, Field: "device",
		Message: fmt.Sprintf("device %s is busy: %s has held it for %s, and %s; try again when it ends, or use another device",
			id, holder.tool, time.Since(holder.since).Round(time.Second), why)}
}

// HoldsDevice reports whether ctx is that of a call that holds a device
// (HoldDevice): such a call does not wait for another device, since two
// calls could then each wait for the other's.
func (c *Call) HoldsDevice(ctx context.Context) bool {
	return c.leases != nil && len(c.leases.held(ctx)) > 0
}

// HoldDevice makes the call the only one that drives device id until it
// ends, waiting for its turn when another call holds the device (see the
// rule above). The context it returns carries the hold, so the calls the
// call makes itself (a flow's tool: steps) go through; pass it on.
func (c *Call) HoldDevice(ctx context.Context, id string) (context.Context, error) {
	ls := c.leases
	if ls == nil {
		return ctx, nil
	}
	held := ls.held(ctx)
	if slices.Contains(held, id) {
		return ctx, nil
	}
	l := &lease{tool: c.Tool.Name, long: c.Tool.LongRunning, granted: make(chan struct{})}
	ls.mu.Lock()
	q := ls.queues[id]
	if q == nil {
		l.since = time.Now()
		ls.queues[id] = &deviceQueue{holder: l}
		ls.mu.Unlock()
		c.OnDone(func() { ls.release(id, l) })
		return ls.withHeld(ctx, id), nil
	}
	switch {
	case len(held) > 0:
		ls.mu.Unlock()
		return nil, busy(id, q.holder, fmt.Sprintf("%s runs inside a call that holds device %s, so it does not wait for another", c.Tool.Name, held[0]))
	case !l.long && q.longAhead():
		ls.mu.Unlock()
		return nil, busy(id, q.holder, fmt.Sprintf("%s does not wait for a long call (a flow run or an await)", c.Tool.Name))
	}
	q.queue = append(q.queue, l)
	w := q.waiting(id, l)
	ls.mu.Unlock()
	c.Progress(w)
	tick := time.NewTicker(waitNotice)
	defer tick.Stop()
	for {
		select {
		case <-l.granted:
			c.OnDone(func() { ls.release(id, l) })
			return ls.withHeld(ctx, id), nil
		case <-ctx.Done():
			ls.leave(id, l)
			return nil, &fault.Error{Kind: fault.Conflict, Code: CodeDeviceBusy, Field: "device",
				Message: fmt.Sprintf("gave up waiting for device %s: %v", id, context.Cause(ctx)), Err: context.Cause(ctx)}
		case <-tick.C:
			ls.mu.Lock()
			if q := ls.queues[id]; q != nil && q.holder != l {
				w = q.waiting(id, l)
			}
			ls.mu.Unlock()
			c.Progress(w)
		}
	}
}
