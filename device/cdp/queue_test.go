package cdp_test

import (
	"errors"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/toolserver/toolserver/device/cdp"
)

// ids lists the devices of pool.
func ids(pool *cdp.Pool) []string {
	var out []string
	for _, d := range pool.List() {
		out = append(out, d.ID)
	}
	return out
}

// TestAcquireEvictsLeastRecentlyUsed: a full pool that evicts stops the
// idle device used least recently to boot another; when every device is
// busy, a queue of 0 refuses at once with ErrQueueFull and a Retry-After
// estimate. A pool that does not evict keeps refusing with
// ErrTooManyDevices, idle devices or not.
func TestAcquireEvictsLeastRecentlyUsed(t *testing.T) {
	t.Parallel()
	const x, y, z = "chromium-cdp-621x411", "chromium-cdp-622x412", "chromium-cdp-623x413"
	ctx := ctxT(t)
	pool := cdp.NewPool(cdp.Options{SharedBrowser: true, MaxDevices: 2, Evict: true, Log: os.Stderr})
	t.Cleanup(func() { pool.Close() })
	acquire := func(id string) func() {
		t.Helper()
		_, release, err := pool.Acquire(ctx, id, func(cdp.QueuePosition) {})
		if err != nil {
			t.Fatalf("acquire %s: %v", id, err)
		}
		return release
	}
	relX, relY := acquire(x), acquire(y)
	relX()
	relY()
	relZ := acquire(z)
	if got, want := ids(pool), []string{y, z}; !slices.Equal(got, want) {
		t.Errorf("devices after z needed room: got %v, want %v (x, idle longest, stopped)", got, want)
	}
	relY = acquire(y) // booted: no room needed
	_, _, err := pool.Acquire(ctx, x, func(cdp.QueuePosition) {})
	var full *cdp.QueueFullError
	if !errors.Is(err, cdp.ErrQueueFull) || !errors.As(err, &full) || full.Waiting != 0 || full.RetryAfter < time.Second {
		t.Errorf("acquire with every device busy and no queue: got %v, want a QueueFullError with 0 waiting and a Retry-After of 1 s or more", err)
	}
	relY()
	relZ()

	// The in-process commands' pool: full is full.
	keep := cdp.NewPool(cdp.Options{SharedBrowser: true, MaxDevices: 1, Log: os.Stderr})
	t.Cleanup(func() { keep.Close() })
	_, rel, err := keep.Acquire(ctx, x, nil)
	if err != nil {
		t.Fatal(err)
	}
	rel()
	if _, _, err := keep.Acquire(ctx, y, func(cdp.QueuePosition) {}); !errors.Is(err, cdp.ErrTooManyDevices) {
		t.Errorf("a pool that does not evict, full of idle devices: got %v, want ErrTooManyDevices", err)
	}
}

// TestQueuedCallEndsWithThePool: a call waiting in the queue when the
// pool closes gets ErrClosed instead of waiting on.
func TestQueuedCallEndsWithThePool(t *testing.T) {
	t.Parallel()
	ctx := ctxT(t)
	pool := cdp.NewPool(cdp.Options{SharedBrowser: true, MaxDevices: 1, Evict: true, Queue: 1, Log: os.Stderr})
	_, release, err := pool.Acquire(ctx, "chromium-cdp-624x414", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	queued := make(chan cdp.QueuePosition, 1)
	ended := make(chan error, 1)
	go func() {
		_, _, err := pool.Acquire(ctx, "chromium-cdp-625x415", func(q cdp.QueuePosition) {
			select {
			case queued <- q:
			default:
			}
		})
		ended <- err
	}()
	select {
	case q := <-queued:
		if q.Position != 1 || q.Waiting != 1 || q.MaxDevices != 1 {
			t.Errorf("the waiting call's place: got %+v, want position 1 of 1, 1 device", q)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the call did not queue within 30 s")
	}
	pool.Close()
	select {
	case err := <-ended:
		if !errors.Is(err, cdp.ErrClosed) {
			t.Errorf("the waiting call once the pool closed: got %v, want ErrClosed", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the waiting call did not end within 30 s of the pool's close")
	}
}
