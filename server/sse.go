package server

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"time"
)

// sseWriter writes server-sent events. Each write has a deadline, so a
// client that takes nothing is dropped instead of holding its stream.
type sseWriter struct {
	w       http.ResponseWriter
	rc      *http.ResponseController
	timeout time.Duration
	log     *slog.Logger
	path    string
	// err is the first write's error: the stream is over.
	err error
}

func (s *Server) newSSE(w http.ResponseWriter, r *http.Request) *sseWriter {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.Header().Set("X-Accel-Buffering", "no") // nginx: do not buffer the stream
	w.WriteHeader(http.StatusOK)
	sse := &sseWriter{w: w, rc: http.NewResponseController(w), timeout: s.cfg.StreamWriteTimeout, log: s.cfg.Log, path: r.URL.Path}
	sse.flush()
	return sse
}

// close lifts the write deadline, so the connection's next request (the
// stream ended with its end frame) does not inherit it.
func (s *sseWriter) close() { s.rc.SetWriteDeadline(time.Time{}) }

// put writes one frame, unflushed: its event name (none for an event of
// the log), its id, its data (JSON).
func (s *sseWriter) put(event, id string, data []byte) {
	if s.err != nil {
		return
	}
	var out strings.Builder
	out.Grow(len(data) + len(event) + len(id) + 24)
	if event != "" {
		out.WriteString("event: " + event + "\n")
	}
	if id != "" {
		out.WriteString("id: " + id + "\n")
	}
	out.WriteString("data: ")
	out.Write(data)
	out.WriteString("\n\n")
	s.deadline()
	_, err := io.WriteString(s.w, out.String())
	s.fail(err)
}

// flush sends what was put; false when the stream is over.
func (s *sseWriter) flush() bool {
	if s.err == nil {
		s.deadline()
		s.fail(s.rc.Flush())
	}
	return s.err == nil
}

// frame writes and flushes one frame of v as JSON; false when the client
// is gone.
func (s *sseWriter) frame(event, id string, v any) bool {
	b, err := json.Marshal(v)
	if err != nil {
		return false
	}
	s.put(event, id, b)
	return s.flush()
}

// heartbeat sends the comment an idle stream sends.
func (s *sseWriter) heartbeat() bool {
	if s.err == nil {
		s.deadline()
		_, err := io.WriteString(s.w, ": keep-alive\n\n")
		s.fail(err)
	}
	return s.flush()
}

func (s *sseWriter) deadline() {
	// A writer that cannot have deadlines (none in net/http's server)
	// goes without.
	_ = s.rc.SetWriteDeadline(time.Now().Add(s.timeout))
}

// fail keeps the first write error, and says when it was the deadline:
// the server dropped a client that took nothing for the whole timeout.
func (s *sseWriter) fail(err error) {
	if err == nil || s.err != nil {
		return
	}
	s.err = err
	if errors.Is(err, os.ErrDeadlineExceeded) {
		s.log.Warn("event stream dropped: its client took nothing for the write timeout", "path", s.path, "timeout", s.timeout.String())
	}
}

// wait waits for a change, sending heartbeats; false when the client is
// gone or the server stops (a client reconnects with its cursor).
func (s *sseWriter) wait(ctx context.Context, changed, stopping <-chan struct{}) bool {
	poll := time.NewTimer(eventPoll)
	defer poll.Stop()
	beat := time.NewTicker(sseHeartbeat)
	defer beat.Stop()
	for {
		select {
		case <-ctx.Done():
			return false
		case <-stopping:
			return false
		case <-changed:
			return true
		case <-poll.C:
			return true
		case <-beat.C:
			if !s.heartbeat() {
				return false
			}
		}
	}
}
