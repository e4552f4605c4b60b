package server

import (
	"bytes"
	"encoding/json"
	"net/http"
	"sync"
)

// maxQueued bounds the progress lines held for a slow reader; past it the
// oldest progress lines are dropped (never the result or error line), so
// a slow reader never stalls a device.
const maxQueued = 4096

// stream writes NDJSON lines from a goroutine of its own, each flushed at
// once. It starts (status 200 and the stream headers) with its first
// line, so an error before any progress is still answered with its own
// status (a 422 for a member that fails a check, a 400 for a rejected flow).
type stream struct {
	w  http.ResponseWriter
	rc *http.ResponseController

	mu      sync.Mutex
	queue   [][]byte
	final   bool
	dropped int
	wake    chan struct{}
	done    chan struct{}
	started bool
}

func newStream(w http.ResponseWriter) *stream {
	return &stream{w: w, rc: http.NewResponseController(w), wake: make(chan struct{}, 1), done: make(chan struct{})}
}

// begin writes the headers and starts the writer; st.mu is held.
func (st *stream) begin() {
	h := st.w.Header()
	h.Set("Content-Type", "application/x-ndjson")
	h.Set("Cache-Control", "no-cache, no-transform")
	h.Set("X-Accel-Buffering", "no")
	st.w.WriteHeader(http.StatusOK)
	st.started = true
	go st.loop()
}

// hasStarted reports whether any line was sent.
func (st *stream) hasStarted() bool {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.started
}

func (st *stream) send(v any) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		buf.Reset()
		buf.WriteString(`{"event":"error","error":"encode stream line failed"}` + "\n")
	}
	st.mu.Lock()
	if !st.started {
		st.begin()
	}
	if len(st.queue) >= maxQueued {
		st.queue = st.queue[1:]
		st.dropped++
	}
	st.queue = append(st.queue, buf.Bytes())
	st.mu.Unlock()
	select {
	case st.wake <- struct{}{}:
	default:
	}
}

func (st *stream) loop() {
	defer close(st.done)
	for {
		st.mu.Lock()
		lines := st.queue
		st.queue = nil
		final := st.final
		st.mu.Unlock()
		for _, l := range lines {
			if _, err := st.w.Write(l); err != nil {
				st.drain()
				return
			}
			_ = st.rc.Flush()
		}
		if final && len(lines) == 0 {
			return
		}
		if len(lines) == 0 {
			<-st.wake
		}
	}
}

// drain discards what is queued after the reader went away.
func (st *stream) drain() {
	for {
		st.mu.Lock()
		st.queue = nil
		final := st.final
		st.mu.Unlock()
		if final {
			return
		}
		<-st.wake
	}
}

// close waits until every queued line is written (or the reader is gone).
func (st *stream) close() {
	st.mu.Lock()
	st.final = true
	started := st.started
	st.mu.Unlock()
	if !started {
		return
	}
	select {
	case st.wake <- struct{}{}:
	default:
	}
	<-st.done
}
