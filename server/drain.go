package server

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/toolserver/toolserver/fault"
	"github.com/toolserver/toolserver/wire"
)

// isCall reports whether r starts work the drain waits for: a tool call,
// an upload, a run.
func isCall(r *http.Request) bool {
	return r.Method == http.MethodPost && (strings.HasPrefix(r.URL.Path, "/tools/") || r.URL.Path == "/upload" || r.URL.Path == "/v1/runs")
}

// drainGuard counts the calls in flight and, while the server drains,
// answers new ones 503 so that a client or a load balancer sends them to
// another replica.
func (s *Server) drainGuard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !isCall(r) {
			next.ServeHTTP(w, r)
			return
		}
		if !s.drain.Enter() {
			w.Header().Set("Retry-After", "1")
			refuse(w, r, &fault.Error{Kind: fault.Unavailable, Code: wire.CodeDraining,
				Message: fmt.Sprintf("%s %s: this tool-server is stopping and takes no new calls; send it to another replica (nothing ran)", r.Method, r.URL.Path)})
			return
		}
		defer s.drain.Leave()
		next.ServeHTTP(w, r)
	})
}

// readyz answers readiness: 200 when the server takes calls, 503 while it
// drains or when no browser can start.
func (s *Server) readyz(w http.ResponseWriter, r *http.Request) {
	var notReady error
	if s.cfg.Ready != nil {
		notReady = s.cfg.Ready()
	}
	if notReady == nil && s.cfg.Runs != nil && s.cfg.Runs.Shared() {
		// A replica whose database is away takes no calls.
		ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
		notReady = s.cfg.Runs.Ping(ctx)
		cancel()
	}
	switch {
	case s.drain.Draining():
		writeJSON(w, http.StatusServiceUnavailable, map[string]any{"ready": false, "reason": "draining: the server is stopping"})
	case notReady != nil:
		writeJSON(w, http.StatusServiceUnavailable, map[string]any{"ready": false, "reason": notReady.Error()})
	default:
		writeJSON(w, http.StatusOK, map[string]any{"ready": true, "inFlight": s.drain.InFlight()})
	}
}
