package mcp

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// The SDK reads a message whole (io.ReadAll, whose buffer doubles as it
// grows) and decodes it more than once on its way to a tool's arguments:
// measured, a 40 MiB call costs the server about 330 MB while it is read,
// decoded and run, and four at once cost four times that. The budget
// bounds both: a message that declares more than MaxRequestBody is
// refused before any of it is read, and the large messages being read and
// run at once hold at most DefaultBodyBudget bytes between them (one of
// unknown length counts as MaxRequestBody). A message that finds no room
// waits, at most BodyWait, then gets 503 with Retry-After. Messages of at
// most smallMessage bytes (every request but one carrying files) pass
// without counting, so a long call holding the budget never stalls a
// tools/list.
const (
	// DefaultBodyBudget holds one message of the largest size and a few
	// smaller ones.
	DefaultBodyBudget = 64 << 20
	// DefaultBodyWait is how long a message waits for room.
	DefaultBodyWait = 10 * time.Second
	// smallMessage is the size under which a message is not counted.
	smallMessage = 64 << 10
)

// budget is a weighted semaphore of request bytes, first come first
// served, so a large message is not starved by small ones.
type budget struct {
	mu      sync.Mutex
	total   int64
	free    int64
	waiters []*waiter
}

type waiter struct {
	n     int64
	ready chan struct{}
}

func newBudget(n int64) *budget { return &budget{total: n, free: n} }

// acquire takes n bytes, waiting until they are free or ctx ends; false
// when it ended first.
func (b *budget) acquire(ctx context.Context, n int64) bool {
	b.mu.Lock()
	if len(b.waiters) == 0 && b.free >= n {
		b.free -= n
		b.mu.Unlock()
		return true
	}
	w := &waiter{n: n, ready: make(chan struct{})}
	b.waiters = append(b.waiters, w)
	b.mu.Unlock()
	select {
	case <-w.ready:
		return true
	case <-ctx.Done():
		b.mu.Lock()
		defer b.mu.Unlock()
		select {
		case <-w.ready:
			// Granted as the wait ended: hand the bytes back.
			b.free += n
			b.grant()
		default:
			for i, o := range b.waiters {
				if o == w {
					b.waiters = append(b.waiters[:i], b.waiters[i+1:]...)
					break
				}
			}
			b.grant()
		}
		return false
	}
}

// release returns n bytes.
func (b *budget) release(n int64) {
	b.mu.Lock()
	b.free += n
	b.grant()
	b.mu.Unlock()
}

// grant wakes the waiters at the head of the line that now fit; b.mu is
// held.
func (b *budget) grant() {
	for len(b.waiters) > 0 && b.free >= b.waiters[0].n {
		w := b.waiters[0]
		b.waiters = b.waiters[1:]
		b.free -= w.n
		close(w.ready)
	}
}

// limitBodies is next in front of the SDK's handler: it refuses a message
// declared too large before reading a byte of it, and holds the bytes of
// the others in the budget until their request is answered (a tool call
// answers when it ends: its arguments live as long).
func limitBodies(next http.Handler, b *budget, wait time.Duration) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			next.ServeHTTP(w, r)
			return
		}
		if r.ContentLength > MaxRequestBody {
			// Said before the body is read: the client learns at once and
			// the connection closes, so the rest is never read.
			w.Header().Set("Connection", "close")
			http.Error(w, fmt.Sprintf("request body exceeds %d bytes", MaxRequestBody), http.StatusRequestEntityTooLarge)
			return
		}
		n := r.ContentLength
		if n >= 0 && n <= smallMessage {
			next.ServeHTTP(w, r)
			return
		}
		if n < 0 {
			n = MaxRequestBody
		}
		n = min(n, b.total) // a budget smaller than a message still lets it through alone
		ctx, cancel := context.WithTimeout(r.Context(), wait)
		ok := b.acquire(ctx, n)
		cancel()
		if !ok {
			w.Header().Set("Retry-After", strconv.Itoa(max(1, int(wait/time.Second))))
			http.Error(w, fmt.Sprintf("the tool-server is busy with %d MiB of other MCP messages; retry this one later", (b.held()+(1<<20)-1)>>20), http.StatusServiceUnavailable)
			return
		}
		defer b.release(n)
		next.ServeHTTP(w, r)
	})
}

// held is how many bytes are taken, for the refusal's message.
func (b *budget) held() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.total - b.free
}
