package server

// The tool-server's end of the tunnel (link/tunnel): the upgrade of GET
// /tunnels, the open tunnels by id, and the streams a run's proxy
// (proxy.go) opens on them.

import (
	"bufio"
	"cmp"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/yamux"

	"github.com/toolserver/toolserver/fault"
	"github.com/toolserver/toolserver/link/tunnel"
	"github.com/toolserver/toolserver/wire"
)

// MaxTunnels bounds the tunnels one tool-server holds open at once.
const MaxTunnels = 64

// Tunnels are the tunnels open on a tool-server. The zero value is not
// usable; NewTunnels makes one.
type Tunnels struct {
	log *slog.Logger
	// Stall is how long a write to a client may wait before the client
	// is dropped (zero: tunnel.StallTimeout).
	Stall time.Duration

	mu     sync.Mutex
	open   map[string]*Tunnel
	closed bool
}

// NewTunnels returns an empty set that logs to log (nil discards).
func NewTunnels(log *slog.Logger) *Tunnels {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Tunnels{log: log, open: map[string]*Tunnel{}}
}

// Tunnel is one client's open tunnel.
type Tunnel struct {
	id      string
	tag     string // what logs name it by: not the id, which is a secret
	targets wire.Targets
	only    bool
	sess    *yamux.Session
	budget  tunnel.Budget
	slots   tunnel.Slots // one per stream open, MaxStreams in all
	stall   time.Duration
}

// Targets are what the client exposed.
func (t *Tunnel) Targets() wire.Targets { return t.targets }

// Done is closed when the tunnel has closed.
func (t *Tunnel) Done() <-chan struct{} { return t.sess.CloseChan() }

// Upgrade answers GET /tunnels: it checks the upgrade and the targets
// (an error here is the answer, nothing was hijacked), then takes the
// connection over, answers 101 with the tunnel's id, and keeps the tunnel
// until the client goes or Close. The streams the client opens carry its
// calls to this tool-server, served by calls (the server's own routes,
// behind the same token and guards): a client behind a load balancer
// then reaches, with every call, the replica that holds its tunnel.
func (ts *Tunnels) Upgrade(w http.ResponseWriter, r *http.Request, calls http.Handler) error {
	if !headerHas(r.Header, "Connection", "upgrade") || !strings.EqualFold(r.Header.Get("Upgrade"), tunnel.Protocol) {
		// toolserver's client sends both: without them, a proxy between it
		// and this server dropped them, as nginx does unless told.
		return &fault.Error{Kind: fault.Validation, Message: fmt.Sprintf("GET %s opens a tunnel (flow run --expose) and came without Connection: Upgrade and Upgrade: %s; toolserver's client sends both, so a proxy in front of the tool-server dropped them: it must pass the upgrade (nginx: proxy_http_version 1.1, proxy_set_header Upgrade $http_upgrade and proxy_set_header Connection $connection_upgrade, with a map $http_upgrade $connection_upgrade)", tunnel.Path, tunnel.Protocol)}
	}
	spec := r.Header.Get(tunnel.HeaderExpose)
	if len(spec) > wire.MaxTargets*66 {
		return &fault.Error{Kind: fault.Validation, Field: tunnel.HeaderExpose, Message: fmt.Sprintf("%s: longer than %d targets", tunnel.HeaderExpose, wire.MaxTargets)}
	}
	targets, err := wire.ParseTargets([]string{spec})
	if err != nil {
		return &fault.Error{Kind: fault.Validation, Field: tunnel.HeaderExpose, Message: tunnel.HeaderExpose + ": " + err.Error()}
	}
	id, err := newTunnelID()
	if err != nil {
		return err
	}
	t := &Tunnel{id: id, tag: tag(id), targets: targets, only: r.Header.Get(tunnel.HeaderOnly) == "1",
		slots: tunnel.NewSlots(tunnel.MaxStreams), stall: cmp.Or(ts.Stall, tunnel.StallTimeout)}
	if err := ts.reserve(t); err != nil {
		return err
	}
	conn, rw, err := http.NewResponseController(w).Hijack()
	if err != nil {
		ts.drop(t)
		return fmt.Errorf("tunnel: %w", err)
	}
	// The server's read and write deadlines were the request's.
	_ = conn.SetDeadline(time.Time{})
	// The session is stored before the 101 goes out: the client may name
	// the tunnel in a call the moment it reads the answer. Its writes
	// wait for the 101.
	answered := make(chan struct{})
	sess, err := yamux.Client(gatedConn{bufferedConn{conn, rw.Reader}, answered}, tunnel.Config(ts.Stall))
	if err != nil {
		conn.Close()
		ts.drop(t)
		return nil
	}
	ts.mu.Lock()
	t.sess = sess
	closed := ts.closed
	ts.mu.Unlock()
	fmt.Fprintf(rw, "HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: %s\r\n%s: %s\r\n\r\n", tunnel.Protocol, tunnel.HeaderID, id)
	err = rw.Flush()
	close(answered)
	if err != nil || closed {
		sess.Close()
		ts.drop(t)
		return nil
	}
	ts.log.Info("tunnel open", "tunnel", t.tag, "expose", targets.String(), "only", t.only, "remote", r.RemoteAddr)
	go func() {
		// A stream the client opens is an HTTP connection to this
		// tool-server's routes, never to its network.
		ln := tunnel.NewListener(sess.CloseChan(), conn.LocalAddr())
		srv := &http.Server{Handler: calls, ReadHeaderTimeout: 10 * time.Second}
		go srv.Serve(ln)
		slots := tunnel.NewSlots(tunnel.MaxStreams)
		for {
			s, err := sess.Accept()
			if err != nil {
				break
			}
			release, ok := slots.Take()
			if !ok {
				s.Close()
				continue
			}
			ln.Hand(&releasing{Conn: s, release: release})
		}
		<-sess.CloseChan()
		srv.Close()
		ts.drop(t)
		ts.log.Info("tunnel closed", "tunnel", t.tag, "bytes", t.budget.Used())
	}()
	return nil
}

// releasing runs release once when it closes.
type releasing struct {
	net.Conn
	release func()
}

func (c *releasing) Close() error {
	err := c.Conn.Close()
	c.release()
	return err
}

// gatedConn holds writes until open is closed.
type gatedConn struct {
	bufferedConn
	open <-chan struct{}
}

func (c gatedConn) Write(p []byte) (int, error) {
	<-c.open
	return c.bufferedConn.Write(p)
}

// bufferedConn reads what the hijack's reader had buffered first.
type bufferedConn struct {
	net.Conn
	r *bufio.Reader
}

func (c bufferedConn) Read(p []byte) (int, error) { return c.r.Read(p) }

// CloseWrite half-closes the connection beneath.
func (c bufferedConn) CloseWrite() error { return tunnel.CloseWrite(c.Conn) }

// reserve adds t under its id, within MaxTunnels.
func (ts *Tunnels) reserve(t *Tunnel) error {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	switch {
	case ts.closed:
		return &fault.Error{Kind: fault.Unavailable, Message: "the tool-server is stopping; it opens no tunnel"}
	case len(ts.open) >= MaxTunnels:
		return &fault.Error{Kind: fault.Unavailable, Message: fmt.Sprintf("the tool-server has its %d tunnels open; try again when a run ends", MaxTunnels)}
	}
	ts.open[t.id] = t
	return nil
}

func (ts *Tunnels) drop(t *Tunnel) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if ts.open[t.id] == t {
		delete(ts.open, t.id)
	}
}

// Get returns the open tunnel with id.
func (ts *Tunnels) Get(id string) (*Tunnel, error) {
	if ts == nil {
		return nil, &fault.Error{Kind: fault.Validation, Field: wire.ArgTunnel, Message: "this tool-server opens no tunnels"}
	}
	ts.mu.Lock()
	t := ts.open[id]
	open := t != nil && t.sess != nil && !t.sess.IsClosed()
	ts.mu.Unlock()
	if !open {
		return nil, &fault.Error{Kind: fault.Validation, Field: wire.ArgTunnel, Message: "tunnel: no tunnel with this id is open (it closed, or it is not this client's); flow run --expose opens one for its calls"}
	}
	return t, nil
}

// Close closes every tunnel and opens no more.
func (ts *Tunnels) Close() {
	ts.mu.Lock()
	ts.closed = true
	var open []*yamux.Session
	for _, t := range ts.open {
		if t.sess != nil {
			open = append(open, t.sess)
		}
	}
	ts.mu.Unlock()
	for _, s := range open {
		s.Close()
	}
}

// dial opens a stream to what o names and waits for the client's answer.
func (t *Tunnel) dial(ctx context.Context, o tunnel.Open) (net.Conn, error) {
	release, ok := t.slots.Take()
	if !ok {
		return nil, fmt.Errorf("%w: the tunnel has its %d connections open", tunnel.ErrCap, tunnel.MaxStreams)
	}
	s, err := t.sess.OpenStream()
	if err != nil {
		release()
		return nil, fmt.Errorf("the tunnel to the client closed (%v)", err)
	}
	stop := context.AfterFunc(ctx, func() { s.Close() })
	_ = s.SetDeadline(time.Now().Add(t.stall))
	var a tunnel.Answer
	err = tunnel.WriteFrame(s, o)
	if err == nil {
		err = tunnel.ReadFrame(s, &a)
	}
	stop()
	_ = s.SetDeadline(time.Time{})
	if err == nil && a.Error != "" {
		err = errors.New("the client refused: " + a.Error)
	}
	if err != nil {
		s.Close()
		release()
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, err
	}
	return tunnel.Counted(s, &t.budget, release), nil
}

// newTunnelID is 256 random bits, URL-safe.
func newTunnelID() (string, error) {
	var b [32]byte
	if _, err := io.ReadFull(rand.Reader, b[:]); err != nil {
		return "", err
	}
	return base64.RawURLEncoding.EncodeToString(b[:]), nil
}

// tag names a tunnel in logs without its id.
func tag(id string) string {
	sum := sha256.Sum256([]byte(id))
	return hex.EncodeToString(sum[:4])
}

// headerHas reports whether the comma-separated header name lists token.
func headerHas(h http.Header, name, token string) bool {
	for _, v := range h.Values(name) {
		for s := range strings.SplitSeq(v, ",") {
			if strings.EqualFold(strings.TrimSpace(s), token) {
				return true
			}
		}
	}
	return false
}
