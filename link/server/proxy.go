package server

// The proxy of one call with a tunnel: an HTTP proxy on this machine's
// loopback that the call's browser contexts, and theirs alone, are given.
// Requests for the targets the client exposed, and for its files
// (wire.FilesHost), go down the tunnel; any other goes as it would
// without one, or is refused when the client asked for --expose-only.

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httputil"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/toolserver/toolserver/link/tunnel"
	"github.com/toolserver/toolserver/wire"
)

// maxRefusals bounds the refusals a binding remembers for messages.
const maxRefusals = 64

// Binding is a tunnel put to use by one call: its proxy, which the
// call's browser contexts use, until Close.
type Binding struct {
	t      *Tunnel
	direct func(host string) error
	ln     net.Listener
	srv    *http.Server
	tr     *http.Transport

	mu       sync.Mutex
	conns    map[net.Conn]struct{} // every connection the proxy dialed or took over
	refusals map[string]string     // host:port → why the proxy did not connect it
	closed   bool
	stopped  chan struct{} // closed by Close
}

// Bind starts the proxy of one call on t. direct checks a host the
// browser reaches without the tunnel (the tool-server's own host rules);
// nil lets every host through.
func (t *Tunnel) Bind(direct func(host string) error) (*Binding, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("tunnel: the run's proxy: %w", err)
	}
	b := &Binding{t: t, direct: direct, ln: ln, conns: map[net.Conn]struct{}{}, refusals: map[string]string{}, stopped: make(chan struct{})}
	b.tr = &http.Transport{
		DialContext:         b.dial,
		MaxIdleConnsPerHost: 8,
		IdleConnTimeout:     30 * time.Second,
		DisableCompression:  true,
	}
	rp := &httputil.ReverseProxy{
		// The request is already in proxy form (an absolute URL): it goes
		// out as it came, without X-Forwarded headers.
		Rewrite:       func(*httputil.ProxyRequest) {},
		Transport:     b.tr,
		FlushInterval: -1,
		ErrorHandler:  b.fail,
	}
	b.srv = &http.Server{
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			switch {
			case r.Method == http.MethodConnect:
				b.connect(w, r)
			case r.URL.IsAbs() && r.URL.Scheme == "http":
				rp.ServeHTTP(w, r)
			default:
				// Only a browser told to use this proxy speaks its form; a
				// page that found the port asks in origin form.
				http.Error(w, "toolserver: this is one run's proxy; it answers only its browser", http.StatusBadRequest)
			}
		}),
		ReadHeaderTimeout: 10 * time.Second,
		ConnState: func(c net.Conn, s http.ConnState) {
			switch s {
			case http.StateNew:
				b.track(c)
			case http.StateClosed, http.StateHijacked:
				b.untrack(c)
			}
		},
	}
	go b.srv.Serve(ln)
	// The tunnel going closes the proxy: a run whose client left reaches
	// nothing of it.
	go func() {
		select {
		case <-t.Done():
			b.Close()
		case <-b.stopped:
		}
	}()
	return b, nil
}

// ProxyURL is the proxy the call's browser contexts are given.
func (b *Binding) ProxyURL() string { return "http://" + b.ln.Addr().String() }

// Done is closed when the proxy has closed: by Close, or because its
// tunnel did.
func (b *Binding) Done() <-chan struct{} { return b.stopped }

// Refusal is why the proxy did not connect a request for hostport, when
// it refused or failed one; "" when it did not.
func (b *Binding) Refusal(hostport string) string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.refusals[strings.ToLower(hostport)]
}

// Close stops the proxy and cuts every connection it made; the tunnel
// stays open for the client's next call.
func (b *Binding) Close() {
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return
	}
	b.closed = true
	close(b.stopped)
	conns := make([]net.Conn, 0, len(b.conns))
	for c := range b.conns {
		conns = append(conns, c)
	}
	b.mu.Unlock()
	b.srv.Close()
	for _, c := range conns {
		c.Close()
	}
	b.tr.CloseIdleConnections()
}

func (b *Binding) track(c net.Conn) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		c.Close()
		return false
	}
	b.conns[c] = struct{}{}
	return true
}

func (b *Binding) untrack(c net.Conn) {
	b.mu.Lock()
	delete(b.conns, c)
	b.mu.Unlock()
}

// trackedConn leaves the binding's set when it closes.
type trackedConn struct {
	net.Conn
	b    *Binding
	once sync.Once
}

func (c *trackedConn) Close() error {
	c.once.Do(func() { c.b.untrack(c) })
	return c.Conn.Close()
}

// CloseWrite passes a half-close on to the connection beneath.
func (c *trackedConn) CloseWrite() error { return tunnel.CloseWrite(c.Conn) }

// refuse records why hostport was not connected.
func (b *Binding) refuse(hostport string, err error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.refusals) < maxRefusals {
		b.refusals[strings.ToLower(hostport)] = err.Error()
	}
}

// dial connects the request for addr: the client's files or one of its
// targets through the tunnel, anything else directly unless the client
// exposed only its targets.
func (b *Binding) dial(ctx context.Context, _, addr string) (net.Conn, error) {
	host, portText, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	port, _ := strconv.Atoi(portText)
	var c net.Conn
	switch target, ok := b.t.targets.Match(host, port); {
	case strings.EqualFold(host, wire.FilesHost):
		c, err = b.t.dial(ctx, tunnel.Open{Files: true})
	case ok:
		c, err = b.t.dial(ctx, tunnel.Open{Host: target.Host, Port: port})
	case b.t.only:
		err = fmt.Errorf("%s is not one of the targets this run exposes (%s), and the run reaches nothing else (--expose-only)", addr, b.t.targets)
	default:
		if b.direct != nil {
			if err = b.direct(host); err != nil {
				break
			}
		}
		var d net.Dialer
		c, err = d.DialContext(ctx, "tcp", addr)
		if err != nil && wire.Loopback(host) {
			err = fmt.Errorf("%s is not one of the targets this run exposes (%s), and the tool-server's own %s did not answer (%w)", addr, b.t.targets, addr, err)
		}
	}
	if err != nil {
		b.refuse(addr, err)
		return nil, err
	}
	tc := &trackedConn{Conn: c, b: b}
	if !b.track(tc) {
		return nil, errors.New("the run's proxy closed")
	}
	return tc, nil
}

// fail ends a request the proxy could not connect as a failed connection,
// not a page of its own: the browser then fails the load as it would
// have without the tunnel, and the launch's error gives the reason kept
// by refuse.
func (b *Binding) fail(w http.ResponseWriter, r *http.Request, err error) {
	if conn, _, herr := http.NewResponseController(w).Hijack(); herr == nil {
		conn.Close()
		return
	}
	http.Error(w, "toolserver: "+err.Error(), http.StatusBadGateway)
}

// connect answers CONNECT (TLS to an exposed https://localhost, and the
// browser's WebSockets): it dials the target as dial does and, once it
// answers, carries the bytes both ways.
func (b *Binding) connect(w http.ResponseWriter, r *http.Request) {
	addr := r.Host
	if _, _, err := net.SplitHostPort(addr); err != nil {
		addr = net.JoinHostPort(addr, "443")
	}
	up, err := b.dial(r.Context(), "tcp", addr)
	if err != nil {
		http.Error(w, "toolserver: "+err.Error(), http.StatusBadGateway)
		return
	}
	conn, rw, err := http.NewResponseController(w).Hijack()
	if err != nil {
		up.Close()
		return
	}
	_ = conn.SetDeadline(time.Time{})
	if _, err := rw.WriteString("HTTP/1.1 200 Connection Established\r\n\r\n"); err != nil || rw.Flush() != nil {
		conn.Close()
		up.Close()
		return
	}
	down := &trackedConn{Conn: bufferedConn{conn, rw.Reader}, b: b}
	if !b.track(down) {
		up.Close()
		return
	}
	tunnel.Pipe(down, up)
}
