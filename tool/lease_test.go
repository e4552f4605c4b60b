package tool_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/toolserver/toolserver/fault"
	"github.com/toolserver/toolserver/server"
	"github.com/toolserver/toolserver/tool"
)

// leaseRig is a registry whose tools hold the device they name until the
// test releases them: "run" is long (LongRunning), "tap" is short, and
// "nested" holds its device and then calls "tap" on another.
type leaseRig struct {
	reg     *tool.Registry
	started chan string // the key of each call that got its device

	mu      sync.Mutex
	release map[string]chan struct{}
}

func newLeaseRig() *leaseRig {
	lr := &leaseRig{reg: tool.NewRegistry(), started: make(chan string, 16), release: map[string]chan struct{}{}}
	hold := func(ctx context.Context, call *tool.Call) (any, error) {
		a, err := tool.Decode[struct{ Device, Key, Other string }](call)
		if err != nil {
			return nil, err
		}
		ctx, err = call.HoldDevice(ctx, a.Device)
		if err != nil {
			return nil, err
		}
		if a.Other != "" {
			// A call made inside this one: the same device goes
			// through, another one held elsewhere is refused.
			if _, err := lr.reg.Invoke(ctx, "tap", fmt.Appendf(nil, `{"device":%q,"key":"inner"}`, a.Device), tool.Options{}); err != nil {
				return nil, fmt.Errorf("same device inside: %w", err)
			}
			_, err := lr.reg.Invoke(ctx, "tap", fmt.Appendf(nil, `{"device":%q,"key":"inner-other"}`, a.Other), tool.Options{})
			return nil, err
		}
		lr.started <- a.Key
		select {
		case <-lr.releaseOf(a.Key):
			return a.Key, nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	schema := tool.Object(map[string]*tool.Schema{"device": tool.String("d"), "key": tool.String("k"), "other": tool.String("o")})
	lr.reg.Add(&tool.Tool{Name: "run", LongRunning: true, InputSchema: schema, Run: hold})
	lr.reg.Add(&tool.Tool{Name: "tap", InputSchema: schema, Run: hold})
	lr.reg.Add(&tool.Tool{Name: "nested", LongRunning: true, InputSchema: schema, Run: hold})
	return lr
}

func (lr *leaseRig) releaseOf(key string) chan struct{} {
	lr.mu.Lock()
	defer lr.mu.Unlock()
	if lr.release[key] == nil {
		lr.release[key] = make(chan struct{})
	}
	return lr.release[key]
}

type outcome struct {
	res any
	err error
}

// call starts a call and returns where its outcome arrives and where its
// waiting notices do.
func (lr *leaseRig) call(ctx context.Context, name, device, key string) (<-chan outcome, <-chan tool.Waiting) {
	done := make(chan outcome, 1)
	waits := make(chan tool.Waiting, 16)
	go func() {
		res, err := lr.reg.Invoke(ctx, name, fmt.Appendf(nil, `{"device":%q,"key":%q}`, device, key), tool.Options{Progress: func(v any) {
			if w, ok := v.(tool.Waiting); ok {
				waits <- w
			}
		}})
		done <- outcome{res, err}
	}()
	return done, waits
}

func within[T any](t *testing.T, c <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-c:
		return v
	case <-time.After(10 * time.Second):
		t.Fatalf("%s: nothing within 10 s", what)
		panic("unreachable")
	}
}

// TestDeviceLeaseInOrder: calls for a busy device get it one at a time in
// the order they came, each saying it waits and how many are ahead; a
// caller that goes away leaves the line.
func TestDeviceLeaseInOrder(t *testing.T) {
	t.Parallel()
	lr := newLeaseRig()
	ctx := context.Background()
	a, _ := lr.call(ctx, "run", "d1", "a")
	if got := within(t, lr.started, "a starts"); got != "a" {
		t.Fatalf("got %s first, want a", got)
	}
	b, bWaits := lr.call(ctx, "run", "d1", "b")
	if w := within(t, bWaits, "b waits"); w.Ahead != 1 || w.Holder != "run" || w.Device != "d1" || w.StreamEvent() != "waiting" {
		t.Fatalf("b's notice: got %+v, want 1 ahead of it on d1", w)
	}
	cctx, cancel := context.WithCancel(ctx)
	c, cWaits := lr.call(cctx, "run", "d1", "c")
	within(t, cWaits, "c waits")
	d, dWaits := lr.call(ctx, "run", "d1", "d")
	if w := within(t, dWaits, "d waits"); w.Ahead != 3 {
		t.Fatalf("d's notice: got %+v, want 3 ahead of it", w)
	}
	// c goes away while it waits: it leaves the line.
	cancel()
	if o := within(t, c, "c gives up"); o.err == nil || fault.AsError(o.err).Code != tool.CodeDeviceBusy {
		t.Fatalf("c: got %v, want it to give up waiting", o.err)
	}
	close(lr.releaseOf("a"))
	within(t, a, "a ends")
	if got := within(t, lr.started, "next after a"); got != "b" {
		t.Fatalf("after a: got %s, want b", got)
	}
	close(lr.releaseOf("b"))
	within(t, b, "b ends")
	if got := within(t, lr.started, "next after b"); got != "d" {
		t.Fatalf("after b: got %s, want d (c left the line)", got)
	}
	close(lr.releaseOf("d"))
	if o := within(t, d, "d ends"); o.err != nil || o.res != "d" {
		t.Fatalf("d: got %v %v", o.res, o.err)
	}
	// Another device never waited for any of this, and d1 is free again.
	e, _ := lr.call(ctx, "tap", "d1", "e")
	within(t, lr.started, "e starts")
	close(lr.releaseOf("e"))
	within(t, e, "e ends")
}

// TestDeviceLeaseShortCalls: a short call waits behind short ones but is
// refused at once, with a 409 naming the holder, when a long call holds
// the device; calls made inside the holder go through on its device and
// never wait for another.
func TestDeviceLeaseShortCalls(t *testing.T) {
	t.Parallel()
	lr := newLeaseRig()
	ctx := context.Background()
	run, _ := lr.call(ctx, "run", "d2", "run")
	within(t, lr.started, "the run starts")
	tap, _ := lr.call(ctx, "tap", "d2", "tap")
	o := within(t, tap, "a tap during a run")
	var te *fault.Error
	if !errors.As(o.err, &te) || server.Status(te.Kind) != 409 || te.Code != tool.CodeDeviceBusy {
		t.Fatalf("a tap during a run: got %v, want a 409 %s", o.err, tool.CodeDeviceBusy)
	}
	close(lr.releaseOf("run"))
	within(t, run, "the run ends")

	first, _ := lr.call(ctx, "tap", "d2", "first")
	within(t, lr.started, "first tap")
	second, waits := lr.call(ctx, "tap", "d2", "second")
	within(t, waits, "the second tap waits behind the first")
	close(lr.releaseOf("first"))
	within(t, first, "first ends")
	if got := within(t, lr.started, "second tap"); got != "second" {
		t.Fatalf("got %s, want second", got)
	}
	// While the second tap holds d2: a call on d4 whose inner calls are a
	// tap on d4 (goes through) and a tap on d2 (refused, never waits).
	close(lr.releaseOf("inner"))
	nested, err := lr.reg.Invoke(ctx, "nested", json.RawMessage(`{"device":"d4","key":"n","other":"d2"}`), tool.Options{})
	if !errors.As(err, &te) || te.Code != tool.CodeDeviceBusy || nested != nil {
		t.Fatalf("inside a call on d4, a call for the busy d2: got %v %v, want a 409 at once", nested, err)
	}
	if got := within(t, lr.started, "the inner tap on d4"); got != "inner" {
		t.Fatalf("got %s, want inner", got)
	}
	close(lr.releaseOf("second"))
	within(t, second, "second ends")
}
