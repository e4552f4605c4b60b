package server

import (
	"crypto/subtle"
	"fmt"
	"net"
	"net/http"
	"runtime/debug"
	"strings"
	"time"

	"github.com/toolserver/toolserver/tool"
)

// hostGuard refuses a request whose Host is neither loopback nor the bind
// host, so a page in a browser cannot reach the server through a DNS name
// rebound to 127.0.0.1. A wildcard bind serves any name and turns it off.
func (s *Server) hostGuard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s.wildcard || s.hostAllowed(r.Host) {
			next.ServeHTTP(w, r)
			return
		}
		writeError(w, &tool.Error{Kind: tool.KindForbidden,
			Message: fmt.Sprintf("host %q is not allowed: this tool-server answers loopback names and %q only (bind 0.0.0.0 with a token to serve other names)", r.Host, s.bindHost)})
	})
}

func (s *Server) hostAllowed(hostport string) bool {
	host, _, err := net.SplitHostPort(hostport)
	if err != nil {
		host = hostport
	}
	host = strings.ToLower(strings.Trim(host, "[]"))
	if host == "" {
		return false
	}
	if host == "localhost" || strings.HasSuffix(host, ".localhost") || host == s.bindHost {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// auth requires Authorization: Bearer <token> when a token is set,
// comparing in constant time.
func (s *Server) auth(next http.Handler) http.Handler {
	if s.cfg.Token == "" {
		return next
	}
	want := []byte("Bearer " + s.cfg.Token)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got := []byte(r.Header.Get("Authorization"))
		if subtle.ConstantTimeCompare(got, want) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="toolserver"`)
			msg := "missing bearer token: send Authorization: Bearer <ARGENT_AUTH_TOKEN>"
			if len(got) > 0 {
				msg = "bad bearer token"
			}
			writeError(w, &tool.Error{Kind: tool.KindUnauthorized, Code: "UNAUTHORIZED", Message: msg})
			return
		}
		next.ServeHTTP(w, r)
	})
}

// recoverer turns a handler panic into a 500 with a log line, so one bad
// call never takes the server down.
func (s *Server) recoverer(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			if v := recover(); v != nil {
				if v == http.ErrAbortHandler {
					panic(v)
				}
				writeError(w, s.internalError(r, "panic", fmt.Errorf("panic: %v\n%s", v, debug.Stack())))
			}
		}()
		next.ServeHTTP(w, r)
	})
}

// accessLog writes one line per request: its id, method, path, status,
// bytes and duration (never a header, so never the token).
func (s *Server) accessLog(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		rec := &statusRecorder{ResponseWriter: w, status: http.StatusOK}
		next.ServeHTTP(rec, r)
		s.cfg.Log.Info("request", "request_id", requestID(r.Context()), "method", r.Method, "path", r.URL.Path, "status", rec.status, "bytes", rec.bytes, "ms", time.Since(start).Milliseconds())
	})
}

// statusRecorder remembers the status and size of a response; it keeps
// flushing working for NDJSON streams through Unwrap.
type statusRecorder struct {
	http.ResponseWriter
	status int
	bytes  int64
}

func (r *statusRecorder) WriteHeader(code int) {
	r.status = code
	r.ResponseWriter.WriteHeader(code)
}

func (r *statusRecorder) Write(b []byte) (int, error) {
	n, err := r.ResponseWriter.Write(b)
	r.bytes += int64(n)
	return n, err
}

// Unwrap lets http.ResponseController reach the real writer's Flush.
func (r *statusRecorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }
