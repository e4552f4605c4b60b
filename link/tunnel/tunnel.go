// Package tunnel is the vocabulary both ends of flow run --expose share
// (docs/link.md, "Your app on localhost"): a client that links to a
// tool-server dials out one long-lived connection to it (GET /tunnels,
// upgraded), and the tool-server's Chromium then reaches the targets the
// client exposed, its loopback ports and its project's files, through
// streams the tool-server opens on that connection. The tunnel is this
// project's extension, not Argent's: a client that does not ask for one
// sees nothing of it.
//
// This package holds what both ends must agree on: the upgrade, the
// frame that opens a stream and its answer, the caps, and the copy
// between a stream and a connection; the targets and how a request
// matches one are wire's (expose.go). The client's end is link/client (tunnel.go), the
// tool-server's link/server (tunnel.go, proxy.go). It imports nothing of
// this module.
package tunnel

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/yamux"
)

// The upgrade that opens a tunnel: GET Path with Connection: Upgrade and
// Upgrade: Protocol, the client's targets in HeaderExpose. The
// tool-server answers 101 with the tunnel's id in HeaderID, and from then
// on the connection carries a yamux session whose streams the tool-server
// alone opens.
const (
	Path     = "/tunnels"
	Protocol = "toolserver-tunnel/1"
	// HeaderExpose lists the client's targets, comma-separated
	// (localhost:5173, 127.0.0.1:8080, localhost).
	HeaderExpose = "Toolserver-Expose"
	// HeaderOnly set to 1 asks that the browser reach nothing else:
	// every request for a target the client did not expose is refused
	// (flow run --expose-only).
	HeaderOnly = "Toolserver-Expose-Only"
	// HeaderID is the tunnel's id in the 101 answer. A call names the
	// tunnel by it (flow-execute's tunnel argument); it is a secret the
	// client alone learns.
	HeaderID = "Toolserver-Tunnel"
	// Capability is the name GET /v1/capabilities lists a tunnel under.
	// flow-execute's argument that names a call's tunnel is
	// wire.ArgTunnel.
	Capability = "tunnel"
)

// The caps of one tunnel. Both ends apply them: the tool-server to what
// its browser asks for, the client to what it serves.
const (
	// MaxStreams bounds the connections open at once through a tunnel.
	MaxStreams = 128
	// MaxBytes bounds the bytes one tunnel carries, both ways, in all.
	MaxBytes = 2 << 30
	// StallTimeout is how long a write to a stream may wait for its peer
	// to read: a peer that stops reading has its stream closed, and a
	// connection whose writes wait that long drops the whole tunnel.
	StallTimeout = 20 * time.Second
	// maxFrame bounds a stream's opening frame and its answer.
	maxFrame = 4 << 10
)

// Open is the frame the tool-server writes first on a stream it opens:
// what the stream is for. Exactly one of Port (a target) and Files (the
// client's project files, served over HTTP/1.1 on the stream) is set.
type Open struct {
	Host  string `json:"host,omitempty"`
	Port  int    `json:"port,omitempty"`
	Files bool   `json:"files,omitempty"`
}

// Answer is the client's reply to Open: empty when the stream now
// carries the connection's bytes, else why not.
type Answer struct {
	Error string `json:"error,omitempty"`
}

// WriteFrame writes v as JSON after its length in two bytes.
func WriteFrame(w io.Writer, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	if len(b) > maxFrame {
		return fmt.Errorf("a tunnel frame of %d bytes (at most %d)", len(b), maxFrame)
	}
	buf := make([]byte, 2+len(b))
	binary.BigEndian.PutUint16(buf, uint16(len(b)))
	copy(buf[2:], b)
	_, err = w.Write(buf)
	return err
}

// ReadFrame reads a frame of WriteFrame into v.
func ReadFrame(r io.Reader, v any) error {
	var n [2]byte
	if _, err := io.ReadFull(r, n[:]); err != nil {
		return err
	}
	size := int(binary.BigEndian.Uint16(n[:]))
	if size > maxFrame {
		return fmt.Errorf("a tunnel frame of %d bytes (at most %d)", size, maxFrame)
	}
	b := make([]byte, size)
	if _, err := io.ReadFull(r, b); err != nil {
		return err
	}
	return json.Unmarshal(b, v)
}

// Config is the yamux configuration of both ends: keep-alives every half
// stall find a peer that went away, a connection whose writes (a
// keep-alive's among them) wait stall drops the session (a peer that
// stops reading is dropped, not waited for), and at most MaxStreams
// streams wait to be accepted. A zero stall is StallTimeout.
func Config(stall time.Duration) *yamux.Config {
	if stall <= 0 {
		stall = StallTimeout
	}
	c := yamux.DefaultConfig()
	c.AcceptBacklog = MaxStreams
	c.EnableKeepAlive = true
	c.KeepAliveInterval = stall / 2
	c.ConnectionWriteTimeout = stall
	c.StreamOpenTimeout = stall
	c.StreamCloseTimeout = stall
	c.LogOutput = io.Discard
	return c
}

// ErrCap is the error of a tunnel past one of its caps.
var ErrCap = errors.New("tunnel cap")

// Budget counts the bytes a tunnel carried against MaxBytes (or Max when
// set); it is safe for concurrent use.
type Budget struct {
	Max  int64
	used atomic.Int64
}

// Take counts n bytes; past the cap it says so.
func (b *Budget) Take(n int) error {
	max := b.Max
	if max == 0 {
		max = MaxBytes
	}
	if b.used.Add(int64(n)) > max {
		return fmt.Errorf("%w: the tunnel carried its %d MiB", ErrCap, max>>20)
	}
	return nil
}

// Used is how many bytes were counted.
func (b *Budget) Used() int64 { return b.used.Load() }

// Counted is c with every byte it reads and writes counted against
// budget, each write bounded by StallTimeout, and release run once when
// it closes. Past the budget it closes and fails.
func Counted(c net.Conn, budget *Budget, release func()) net.Conn {
	return &counted{Conn: c, budget: budget, release: sync.OnceFunc(release)}
}

type counted struct {
	net.Conn
	budget  *Budget
	release func()
}

func (c *counted) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if n > 0 {
		if berr := c.budget.Take(n); berr != nil {
			c.Close()
			return 0, berr
		}
	}
	return n, err
}

func (c *counted) Write(p []byte) (int, error) {
	if err := c.budget.Take(len(p)); err != nil {
		c.Close()
		return 0, err
	}
	_ = c.Conn.SetWriteDeadline(time.Now().Add(StallTimeout))
	return c.Conn.Write(p)
}

// CloseWrite half-closes: a yamux stream's Close sends its FIN and reads
// on.
func (c *counted) CloseWrite() error { return c.Conn.Close() }

func (c *counted) Close() error {
	err := c.Conn.Close()
	c.release()
	return err
}

// Pipe copies between two connections, both ways, until both directions
// end, passing each end of file on as a half-close; a failed write ends
// both. Both are closed when Pipe returns.
func Pipe(a, b net.Conn) {
	done := make(chan struct{}, 2)
	half := func(dst, src net.Conn) {
		defer func() { done <- struct{}{} }()
		if _, err := io.Copy(dst, src); err != nil {
			dst.Close()
			src.Close()
			return
		}
		CloseWrite(dst)
	}
	go half(a, b)
	go half(b, a)
	<-done
	<-done
	a.Close()
	b.Close()
}

// CloseWrite ends c's writing half when it has one, else closes it.
func CloseWrite(c net.Conn) error {
	if cw, ok := c.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return c.Close()
}

// Slots bound the connections a tunnel's end has open at once.
type Slots chan struct{}

// NewSlots returns n slots.
func NewSlots(n int) Slots { return make(Slots, n) }

// Take takes a slot and returns its release, which frees it once; ok is
// false when every slot is taken.
func (s Slots) Take() (release func(), ok bool) {
	select {
	case s <- struct{}{}:
		return sync.OnceFunc(func() { <-s }), true
	default:
		return nil, false
	}
}

// Listener hands the streams of a tunnel to an http.Server, until done
// is closed.
type Listener struct {
	conns chan net.Conn
	done  <-chan struct{}
	addr  net.Addr
}

// NewListener returns a listener that ends when done is closed, its
// address addr.
func NewListener(done <-chan struct{}, addr net.Addr) *Listener {
	return &Listener{conns: make(chan net.Conn), done: done, addr: addr}
}

// Hand gives c to the server; once the listener is done, it closes c
// and reports false.
func (l *Listener) Hand(c net.Conn) bool {
	select {
	case l.conns <- c:
		return true
	case <-l.done:
		c.Close()
		return false
	}
}

// Accept implements net.Listener.
func (l *Listener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

// Close implements net.Listener: the listener ends with done.
func (l *Listener) Close() error { return nil }

// Addr implements net.Listener.
func (l *Listener) Addr() net.Addr { return l.addr }
