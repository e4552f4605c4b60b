package server

import (
	"bufio"
	"crypto/subtle"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"runtime/debug"
	"strings"
	"time"

	"github.com/toolserver/toolserver/fault"
	"github.com/toolserver/toolserver/internal/hostguard"
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
		refuse(w, r, &fault.Error{Kind: fault.Forbidden,
			Message: fmt.Sprintf("host %q is not allowed: this tool-server answers loopback names and %q only (bind 0.0.0.0 with a token to serve other names)", r.Host, s.bindHost)})
	})
}

// hostAllowed is the one rule of package hostguard for this server's
// bind host.
func (s *Server) hostAllowed(hostport string) bool { return hostguard.Allowed(hostport, s.bindHost) }

// refusedBodyGrace is how long the body of a refused request may take to
// arrive after the answer; see refuse.
const refusedBodyGrace = time.Second

// refuse answers a request the server does not serve. After the answer
// net/http reads up to 256 KiB of an unread body, so that the client
// never gets a reset in place of the answer; that read gets
// refusedBodyGrace, not the ReadTimeout (a client without a token could
// trickle it for 10 minutes), and the connection closes after it.
func refuse(w http.ResponseWriter, r *http.Request, e *fault.Error) {
	if r.ContentLength != 0 {
		w.Header().Set("Connection", "close")
		_ = http.NewResponseController(w).SetReadDeadline(time.Now().Add(refusedBodyGrace))
	}
	if isV1(r) {
		writeV1Error(w, v1Of(e))
		return
	}
	writeError(w, e)
}

// crossSite refuses a request a web page sent: any page can send a
// simple POST (text/plain, no preflight) to a server on this machine, and
// a token stops it only when one is set. A browser names the page's
// origin in Origin and, in Sec-Fetch-Site, how it relates to the target;
// the request passes when its Origin is this server's own host:port (or
// absent) and its Sec-Fetch-Site is same-origin or none (typed in the
// address bar) or absent. Clients that are not browsers (the Argent
// client on Node, ours, curl) send neither header.
func (s *Server) crossSite(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		origin := r.Header.Get("Origin")
		if origin != "" && !sameHost(origin, r.Host) {
			refuse(w, r, &fault.Error{Kind: fault.Forbidden,
				Message: fmt.Sprintf("a request from the web page of origin %.100q is refused: this tool-server answers no page of another origin", origin)})
			return
		}
		switch site := r.Header.Get("Sec-Fetch-Site"); site {
		case "", "none", "same-origin":
		default:
			refuse(w, r, &fault.Error{Kind: fault.Forbidden,
				Message: fmt.Sprintf("a request a web page sent (Sec-Fetch-Site: %.20q) is refused: this tool-server answers no page of another origin", site)})
			return
		}
		next.ServeHTTP(w, r)
	})
}

// sameHost reports whether the origin names host (the request's Host),
// port included; a missing port is the default of the origin's scheme on
// both sides, as behind a proxy that ends TLS.
func sameHost(origin, host string) bool {
	u, err := url.Parse(origin)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return false // "null" (a sandboxed or file: page) included
	}
	def := "80"
	if u.Scheme == "https" {
		def = "443"
	}
	withPort := func(h string) string {
		if _, _, err := net.SplitHostPort(h); err == nil {
			return strings.ToLower(h)
		}
		return strings.ToLower(net.JoinHostPort(strings.Trim(h, "[]"), def))
	}
	return withPort(u.Host) == withPort(host)
}

// auth requires Authorization: Bearer <token> when a token is set,
// comparing in constant time.
func (s *Server) auth(next http.Handler) http.Handler {
	if s.cfg.Token == "" {
		return next
	}
	want := []byte("Bearer " + s.cfg.Token)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet && (r.URL.Path == "/healthz" || r.URL.Path == "/readyz") {
			// Probes (a load balancer's, Kubernetes') carry no token;
			// these two tell only whether the server is up and ready.
			next.ServeHTTP(w, r)
			return
		}
		if s.cfg.Dashboard != nil && r.Method == http.MethodGet && (r.URL.Path == "/dashboard" || r.URL.Path == "/dashboard/") {
			// The dashboard's page holds no data: it asks for the token
			// and sends it with every request it makes.
			next.ServeHTTP(w, r)
			return
		}
		got := []byte(r.Header.Get("Authorization"))
		if subtle.ConstantTimeCompare(got, want) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="toolserver"`)
			msg := "missing bearer token: send Authorization: Bearer <ARGENT_AUTH_TOKEN>"
			if len(got) > 0 {
				msg = "bad bearer token"
			}
			refuse(w, r, &fault.Error{Kind: fault.Unauthorized, Code: "UNAUTHORIZED", Message: msg})
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

// Hijack hands the connection over (the tunnels' upgrade); the log then
// says 101, the status the upgrade answers with once it has it.
func (r *statusRecorder) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	c, rw, err := http.NewResponseController(r.ResponseWriter).Hijack()
	if err == nil {
		r.status = http.StatusSwitchingProtocols
	}
	return c, rw, err
}

// Unwrap lets http.ResponseController reach the real writer's Flush.
func (r *statusRecorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }
