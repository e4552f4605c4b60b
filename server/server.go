// Package server owns the HTTP surface of the tool-server on chi: GET
// /tools, POST /tools/{name} (JSON or an NDJSON stream), POST /upload, GET
// /artifacts/{id} and GET /healthz, behind bearer auth and the Host guard,
// and the control plane under /v1. Handlers decode, call and encode; the
// work is in the tool registry. status.go is the one table from an error's
// kind to its HTTP answer, for Argent's envelope and the /v1 one alike.
package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/toolserver/toolserver/fault"
	"github.com/toolserver/toolserver/internal/drain"
	"github.com/toolserver/toolserver/link/tunnel"
	"github.com/toolserver/toolserver/runs"
	"github.com/toolserver/toolserver/store"
	"github.com/toolserver/toolserver/tool"
)

// Config is what a Server serves.
type Config struct {
	// Addr is the address to bind, such as 127.0.0.1:3000.
	Addr string
	// Token, when set, is required as Authorization: Bearer <token>.
	Token     string
	Tools     *tool.Registry
	Artifacts *store.Artifacts
	Uploads   *store.Uploads
	Log       *slog.Logger
	// TempDir holds the files of file inputs during a call.
	TempDir string
	// Version is reported by /healthz and /v1/capabilities; Commit by
	// /v1/capabilities when the build had one.
	Version, Commit string
	// Plane, when set, is the runs the /v1 control plane serves (its
	// verbs and reads), and the runs the server drains and stops with.
	// Runs is its store, which the event streams, the run files and
	// readiness read.
	Plane Plane
	Runs  *runs.Store
	// Dashboard, when set, is served at /dashboard.
	Dashboard http.Handler
	// Ready, when set, says why the server cannot take calls (no browser
	// can start), for /readyz; nil means it can.
	Ready func() error
	// DrainTimeout is how long the calls in flight get when the server
	// stops (default DefaultDrainTimeout): readiness turns false and new
	// calls get 503 at once.
	DrainTimeout time.Duration
	// HeaderTimeout bounds reading a request's headers (default 10 s).
	HeaderTimeout time.Duration
	// IdleTimeout closes a keep-alive connection that sends no next
	// request for that long (default 30 s).
	IdleTimeout time.Duration
	// ReadTimeout bounds reading a whole request, its body included
	// (default DefaultReadTimeout). It covers the request only: a call
	// may then run, and stream, for as long as it needs.
	ReadTimeout time.Duration
	// MCP, when set, serves /mcp (MCP's streamable HTTP transport, see
	// server/mcp) behind the same token and guards as every route.
	MCP http.Handler
	// MaxStreams caps the /v1 event streams open at once (default
	// DefaultMaxStreams); past it a stream is answered 503 with
	// Retry-After.
	MaxStreams int
	// StreamWriteTimeout drops an event stream whose client takes none
	// of a frame for that long (default DefaultStreamWriteTimeout).
	StreamWriteTimeout time.Duration
	// Tunnels, when set, opens the tunnels of flow run --expose at GET
	// /tunnels (link/tunnel) and lists the capability; the flow tools
	// find a call's tunnel in the same set. The server closes them all
	// once its drain is over.
	Tunnels Tunnels
}

// Plane is the control plane the server serves /v1 with (control.Plane):
// the runs' service, and the runs it drives, which the server's drain
// waits for and its stop stops.
type Plane interface {
	runs.Service
	// Drain refuses new runs and returns a channel closed once none is
	// in flight.
	Drain() <-chan struct{}
	// InFlight is how many runs are in flight.
	InFlight() int
	// Stop stops the runs still going and waits for them.
	Stop()
}

// Tunnels opens the tunnels of flow run --expose (link/server's).
type Tunnels interface {
	// Upgrade answers GET /tunnels: an error is the answer when it took
	// nothing over. The calls the client sends through the tunnel are
	// served by calls.
	Upgrade(w http.ResponseWriter, r *http.Request, calls http.Handler) error
	// Close closes every tunnel and opens no more.
	Close()
}

// The default timeouts of a Config.
const (
	DefaultHeaderTimeout = 10 * time.Second
	DefaultIdleTimeout   = 30 * time.Second
	// DefaultReadTimeout is sized for the largest file a call carries on
	// a slow link: 32 MiB is 43 MiB in base64, about 6 minutes at 1 Mbit/s.
	DefaultReadTimeout = 10 * time.Minute
	// DefaultDrainTimeout is the drain a stopping server gives its calls.
	DefaultDrainTimeout = 30 * time.Second
	// DefaultStreamWriteTimeout is how long an event stream's client may
	// leave a frame untaken.
	DefaultStreamWriteTimeout = 10 * time.Second
)

// DefaultMaxStreams is how many /v1 event streams a server keeps open at
// once by default: a dashboard holds one, a follower of a run one each.
const DefaultMaxStreams = 256

// Server is the HTTP tool-server.
type Server struct {
	cfg Config
	// stopping is closed when the server starts to stop: the event
	// streams end then, so an open dashboard does not hold the graceful
	// shutdown for its whole grace.
	stopping     chan struct{}
	stoppingOnce sync.Once
	// router is the routes with their middleware, made once (Handler):
	// the server's port and the calls that come through a tunnel share it.
	router     http.Handler
	routerOnce sync.Once
	drain      drain.Counter
	// streams counts the open /v1 event streams, against MaxStreams.
	streams  atomic.Int64
	ln       net.Listener
	srv      *http.Server
	wildcard bool
	bindHost string
}

// New returns a server for cfg; call Listen, then Serve.
func New(cfg Config) *Server {
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	for _, d := range []struct {
		v   *time.Duration
		def time.Duration
	}{{&cfg.HeaderTimeout, DefaultHeaderTimeout}, {&cfg.IdleTimeout, DefaultIdleTimeout}, {&cfg.ReadTimeout, DefaultReadTimeout}, {&cfg.StreamWriteTimeout, DefaultStreamWriteTimeout}} {
		if *d.v <= 0 {
			*d.v = d.def
		}
	}
	if cfg.DrainTimeout <= 0 {
		cfg.DrainTimeout = DefaultDrainTimeout
	}
	if cfg.MaxStreams <= 0 {
		cfg.MaxStreams = DefaultMaxStreams
	}
	s := &Server{cfg: cfg, stopping: make(chan struct{})}
	host, _, err := net.SplitHostPort(cfg.Addr)
	if err != nil {
		host = cfg.Addr
	}
	s.bindHost = strings.ToLower(strings.Trim(host, "[]"))
	s.wildcard = IsWildcard(cfg.Addr)
	return s
}

// IsWildcard reports whether addr binds every interface (0.0.0.0, ::, or
// an empty host).
func IsWildcard(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		host = addr
	}
	host = strings.Trim(host, "[]")
	if host == "" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsUnspecified()
}

// Handler returns the routes with their middleware.
func (s *Server) Handler() http.Handler {
	s.routerOnce.Do(func() { s.router = s.routes() })
	return s.router
}

func (s *Server) routes() http.Handler {
	r := chi.NewRouter()
	r.Use(withRequestID, s.accessLog, s.recoverer, s.hostGuard, s.crossSite, s.auth, s.drainGuard)
	r.Get("/healthz", s.healthz)
	r.Get("/readyz", s.readyz)
	r.Get("/tools", s.listTools)
	r.Post("/tools/{name}", s.callTool)
	r.Post("/upload", s.upload)
	r.Get("/artifacts/{id}", s.artifact)
	if s.cfg.Tunnels != nil {
		r.Get(tunnel.Path, s.openTunnel)
	}
	r.Route("/v1", s.v1Routes)
	if s.cfg.Dashboard != nil {
		r.Handle("/dashboard", s.cfg.Dashboard)
		r.Handle("/dashboard/*", s.cfg.Dashboard)
	}
	if s.cfg.MCP != nil {
		r.Handle("/mcp", s.cfg.MCP)
	}
	r.NotFound(func(w http.ResponseWriter, r *http.Request) {
		refuse(w, r, &fault.Error{Kind: fault.NotFound, Message: fmt.Sprintf("no route %s %s", r.Method, r.URL.Path)})
	})
	r.MethodNotAllowed(func(w http.ResponseWriter, req *http.Request) {
		allow := allowed(r, req)
		w.Header().Set("Allow", strings.Join(allow, ", "))
		refuse(w, req, &fault.Error{Kind: fault.MethodNotAllowed, Message: fmt.Sprintf("method %.20q not allowed on %.200q: it takes %s", req.Method, req.URL.Path, strings.Join(allow, ", "))})
	})
	return r
}

// routeMethods are the methods a route of this server may take.
var routeMethods = []string{http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete, http.MethodOptions}

// allowed lists the methods routes takes on req's path, for the Allow
// header of a 405: chi finds them but hands a custom 405 handler none.
func allowed(routes chi.Routes, req *http.Request) []string {
	path := req.URL.RawPath
	if path == "" {
		path = req.URL.Path
	}
	var out []string
	for _, m := range routeMethods {
		if routes.Match(chi.NewRouteContext(), m, path) {
			out = append(out, m)
		}
	}
	return out
}

// Listen binds the address, so a bind error surfaces before serving.
func (s *Server) Listen() error {
	ln, err := net.Listen("tcp", s.cfg.Addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", s.cfg.Addr, err)
	}
	s.ln = ln
	return nil
}

// Addr returns the bound address (useful with port 0).
func (s *Server) Addr() string {
	if s.ln == nil {
		return s.cfg.Addr
	}
	return s.ln.Addr().String()
}

// Serve serves until ctx ends, then shuts down gracefully: running calls
// get up to 10 s, then their contexts are cancelled.
func (s *Server) Serve(ctx context.Context) error {
	if s.ln == nil {
		if err := s.Listen(); err != nil {
			return err
		}
	}
	base, cancelBase := context.WithCancel(context.Background())
	defer cancelBase()
	// ReadTimeout ends when the body has been read (net/http lifts the
	// deadline then, to watch for a client that goes away), so a call
	// runs on after it; TestBodyTimeoutSparesLongCalls holds net/http to
	// that. No WriteTimeout: a flow's NDJSON stream lasts as long as the
	// run, and a slow reader only loses progress lines (stream.go).
	s.srv = &http.Server{
		Handler:           s.Handler(),
		ReadHeaderTimeout: s.cfg.HeaderTimeout,
		ReadTimeout:       s.cfg.ReadTimeout,
		IdleTimeout:       s.cfg.IdleTimeout,
		BaseContext:       func(net.Listener) context.Context { return base },
	}
	errc := make(chan error, 1)
	go func() { errc <- s.srv.Serve(s.ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	// The drain: readiness false and new calls 503 at once, the event
	// streams end (their clients reconnect elsewhere), the calls in
	// flight get DrainTimeout to finish.
	idle := s.drain.Start()
	if s.cfg.Plane != nil {
		calls, runs := idle, s.cfg.Plane.Drain()
		both := make(chan struct{})
		go func() { <-calls; <-runs; close(both) }()
		idle = both
	}
	s.cfg.Log.Info("draining: readiness is false, new calls get 503", "in_flight", s.inFlight(), "drain_timeout", s.cfg.DrainTimeout.String())
	s.stoppingOnce.Do(func() { close(s.stopping) })
	drainTimer := time.NewTimer(s.cfg.DrainTimeout)
	select {
	case <-idle:
	case <-drainTimer.C:
		s.cfg.Log.Warn("drain timeout: calls still in flight are cancelled", "in_flight", s.inFlight(), "drain_timeout", s.cfg.DrainTimeout.String())
	}
	drainTimer.Stop()
	if s.cfg.Tunnels != nil {
		// The calls that used them are over, or are being cut short.
		defer s.cfg.Tunnels.Close()
	}
	sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if s.inFlight() > 0 {
		// Past the drain: cut the calls short rather than wait more. A
		// run is stopped first, so that it knows the server stopped
		// under it (a run a resume can re-drive stays running).
		s.stopRuns()
		cancelBase()
	}
	err := s.srv.Shutdown(sctx)
	s.stopRuns()
	cancelBase()
	if errors.Is(err, context.DeadlineExceeded) {
		err = s.srv.Close()
	}
	if serr := <-errc; !errors.Is(serr, http.ErrServerClosed) && err == nil {
		err = serr
	}
	return err
}

// inFlight is how many calls and runs are in flight.
func (s *Server) inFlight() int {
	n := s.drain.InFlight()
	if s.cfg.Plane != nil {
		n += s.cfg.Plane.InFlight()
	}
	return n
}

// stopRuns stops the plane's runs (Plane.Stop), when it has any.
func (s *Server) stopRuns() {
	if s.cfg.Plane != nil {
		s.cfg.Plane.Stop()
	}
}

// openTunnel answers GET /tunnels: the upgrade to a tunnel, or why not.
// The calls that come through the tunnel go through every route and guard
// of the server, as those on its port do.
func (s *Server) openTunnel(w http.ResponseWriter, r *http.Request) {
	if err := s.cfg.Tunnels.Upgrade(w, r, s.Handler()); err != nil {
		refuse(w, r, fault.AsError(err))
	}
}
