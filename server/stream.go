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
// once.
type stream struct {
	w  http.ResponseWriter
	rc *http.ResponseController

	mu      sync.Mutex
	queue   [][]byte
	final   bool
	dropped int
	wake    chan struct{}
	done    chan struct{}
}

func startStream(w http.ResponseWriter) *stream {
	h := w.Header()
	h.Set("Content-Type", "application/x-ndjson")
	h.Set("Cache-Control", "no-cache, no-transform")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	st := &stream{w: w, rc: http.NewResponseController(w), wake: make(chan struct{}, 1), done: make(chan struct{})}
	_ = st.rc.Flush()
	go st.loop()
	return st
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
	st.mu.Unlock()
	select {
	case st.wake <- struct{}{}:
	default:
	}
	<-st.done
}
