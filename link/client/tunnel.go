package client

// The client's end of the tunnel (link/tunnel): it checks that the
// tool-server offers one, dials out GET /tunnels, and answers each stream
// the tool-server opens by connecting one of the targets it exposed, on
// this machine's loopback only, or by serving a file of its project.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/yamux"

	"github.com/toolserver/toolserver/fault"
	"github.com/toolserver/toolserver/internal/clientfs"
	"github.com/toolserver/toolserver/link/tunnel"
	"github.com/toolserver/toolserver/wire"
)

// TunnelOptions say what a tunnel exposes.
type TunnelOptions struct {
	Targets wire.Targets
	// Only asks the tool-server's browser to reach nothing but the
	// targets and the files (flow run --expose-only).
	Only bool
	// Log, when set, receives a line when the tunnel closes under the
	// client, or refuses a stream.
	Log func(string)
}

// Tunnel is an open tunnel to a tool-server.
type Tunnel struct {
	id      string
	targets wire.Targets
	sess    *yamux.Session
	budget  tunnel.Budget
	log     func(string)
	files   *http.Server
	streams *tunnel.Listener // the file streams, for files
	slots   tunnel.Slots

	mu     sync.Mutex
	roots  []*clientfs.Policy
	closed bool
}

// ID is what a call names the tunnel by (flow-execute's tunnel argument).
func (t *Tunnel) ID() string { return t.id }

// Done is closed when the tunnel has closed.
func (t *Tunnel) Done() <-chan struct{} { return t.sess.CloseChan() }

// Client is c with every request sent through the tunnel, to the
// tool-server that holds it: behind a load balancer, the calls of the
// run reach the replica whose browser uses the tunnel.
func (t *Tunnel) Client(c *Client) *Client {
	dial := func(ctx context.Context, _, _ string) (net.Conn, error) {
		s, err := t.sess.OpenStream()
		if err != nil {
			return nil, fmt.Errorf("the tunnel to the tool-server closed (%v)", err)
		}
		return s, nil
	}
	hc := *c.hc
	// The connection under the tunnel is already the link's own, TLS
	// and all: a stream carries plain HTTP/1.1 whatever the URL's scheme.
	hc.Transport = &http.Transport{DialContext: dial, DialTLSContext: dial, MaxIdleConnsPerHost: 8, IdleConnTimeout: 30 * time.Second}
	return &Client{base: c.base, token: c.token, hc: &hc}
}

// ServeFiles lets the tool-server's browser read the files pol serves:
// the client policy of a call, so a launch: with a relative path opens
// the file beside its flow. Each call adds its own.
func (t *Tunnel) ServeFiles(pol *clientfs.Policy) {
	if pol == nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.roots = append(t.roots, pol)
}

// Close closes the tunnel; the tool-server's browser reaches nothing of
// this machine afterwards.
func (t *Tunnel) Close() error {
	t.mu.Lock()
	t.closed = true
	t.mu.Unlock()
	err := t.sess.Close()
	t.files.Close()
	return err
}

// ErrNoTunnel is a tool-server that offers no tunnel.
var ErrNoTunnel = errors.New("the tool-server offers no tunnel")

// OpenTunnel checks that the tool-server lists the tunnel among its
// capabilities (GET /v1/capabilities), then opens one exposing
// opts.Targets. It lives until Close or ctx ends.
func (c *Client) OpenTunnel(ctx context.Context, opts TunnelOptions) (*Tunnel, error) {
	if len(opts.Targets) == 0 {
		return nil, errors.New("a tunnel needs a target to expose (localhost:5173, localhost)")
	}
	if err := c.offersTunnel(ctx); err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.base+tunnel.Path, nil)
	if err != nil {
		return nil, err
	}
	c.auth(req)
	req.Header.Set("Connection", "Upgrade")
	req.Header.Set("Upgrade", tunnel.Protocol)
	req.Header.Set(tunnel.HeaderExpose, opts.Targets.String())
	if opts.Only {
		req.Header.Set(tunnel.HeaderOnly, "1")
	}
	hc := *c.hc
	hc.Timeout = 0 // the answer's body is the tunnel, for as long as the run
	resp, err := hc.Do(req)
	if err != nil {
		return nil, fault.Infrastructure(fmt.Errorf("open the tunnel (GET %s%s): %w", c.base, tunnel.Path, err))
	}
	rwc, ok := resp.Body.(io.ReadWriteCloser)
	if resp.StatusCode != http.StatusSwitchingProtocols || !ok {
		defer resp.Body.Close()
		body, _ := readAnswerCapped(resp.Body, 64<<10, "the GET /tunnels answer")
		ce, _ := answerError("tunnels", resp, body)
		msg := ce.Message
		// A proxy that answers for the tool-server without upgrading; one
		// that drops the upgrade's headers has the tool-server say so.
		if resp.StatusCode == http.StatusSwitchingProtocols || resp.StatusCode/100 == 2 {
			msg = "the connection was not upgraded (" + resp.Status + "): a proxy between this machine and the tool-server must pass the Upgrade and Connection headers (nginx: proxy_http_version 1.1; proxy_set_header Upgrade $http_upgrade; proxy_set_header Connection \"upgrade\")"
		}
		return nil, fault.Infrastructure(fmt.Errorf("open the tunnel (GET %s%s): %s", c.base, tunnel.Path, msg))
	}
	id := resp.Header.Get(tunnel.HeaderID)
	if id == "" || len(id) > 128 {
		rwc.Close()
		return nil, fault.Infrastructure(fmt.Errorf("open the tunnel (GET %s%s): the answer has no tunnel id", c.base, tunnel.Path))
	}
	sess, err := yamux.Server(rwc, tunnel.Config(0))
	if err != nil {
		rwc.Close()
		return nil, err
	}
	t := &Tunnel{id: id, targets: opts.Targets, sess: sess, log: opts.Log,
		streams: tunnel.NewListener(sess.CloseChan(), tunnelAddr{}), slots: tunnel.NewSlots(tunnel.MaxStreams)}
	if t.log == nil {
		t.log = func(string) {}
	}
	t.files = &http.Server{Handler: http.HandlerFunc(t.serveFile), ReadHeaderTimeout: 10 * time.Second}
	go t.files.Serve(t.streams)
	stop := context.AfterFunc(ctx, func() { t.Close() })
	go func() {
		defer stop()
		t.accept()
	}()
	return t, nil
}

// offersTunnel asks GET /v1/capabilities whether the server lists the
// tunnel.
func (c *Client) offersTunnel(ctx context.Context) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.base+"/v1/capabilities", nil)
	if err != nil {
		return err
	}
	c.auth(req)
	resp, err := c.hc.Do(req)
	if err != nil {
		return fault.Infrastructure(fmt.Errorf("GET %s/v1/capabilities: %w", c.base, err))
	}
	defer resp.Body.Close()
	body, err := readAnswerCapped(resp.Body, MaxListingBytes, "the GET /v1/capabilities answer")
	if err != nil {
		return fault.Infrastructure(fmt.Errorf("GET %s/v1/capabilities: %w", c.base, err))
	}
	var caps struct {
		Capabilities map[string]any `json:"capabilities"`
	}
	if resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden {
		ce, _ := answerError("capabilities", resp, body)
		return fault.Infrastructure(fmt.Errorf("GET %s/v1/capabilities failed: %s", c.base, ce.Message))
	}
	if resp.StatusCode/100 == 2 && json.Unmarshal(body, &caps) == nil && caps.Capabilities[tunnel.Capability] == true {
		return nil
	}
	return fault.Infrastructure(fmt.Errorf("%w: --expose needs a tool-server that lists %q in GET %s/v1/capabilities (%s); this one is an older toolserver, one started with --allow-hosts, or another kind (Argent's own has none). Run without --expose, launching URLs that the tool-server's machine reaches", ErrNoTunnel, tunnel.Capability, c.base, resp.Status))
}

// accept answers the streams the tool-server opens until the tunnel
// closes.
func (t *Tunnel) accept() {
	for {
		s, err := t.sess.AcceptStream()
		if err != nil {
			break
		}
		release, ok := t.slots.Take()
		if !ok {
			_ = tunnel.WriteFrame(s, tunnel.Answer{Error: fmt.Sprintf("the client has its %d connections open", tunnel.MaxStreams)})
			s.Close()
			continue
		}
		go t.answer(tunnel.Counted(s, &t.budget, release))
	}
	t.mu.Lock()
	closed := t.closed
	t.mu.Unlock()
	if !closed {
		t.log("the tunnel to the tool-server closed; its browser reaches nothing of this machine any more")
	}
	t.files.Close()
}

// answer reads what stream s is for and connects it; closing s frees
// its slot.
func (t *Tunnel) answer(s net.Conn) {
	_ = s.SetDeadline(time.Now().Add(tunnel.StallTimeout))
	var o tunnel.Open
	if err := tunnel.ReadFrame(s, &o); err != nil {
		s.Close()
		return
	}
	var up net.Conn
	if !o.Files {
		var err error
		if up, err = t.dialTarget(o); err != nil {
			_ = tunnel.WriteFrame(s, tunnel.Answer{Error: err.Error()})
			s.Close()
			return
		}
	}
	if err := tunnel.WriteFrame(s, tunnel.Answer{}); err != nil {
		if up != nil {
			up.Close()
		}
		s.Close()
		return
	}
	_ = s.SetDeadline(time.Time{})
	if o.Files {
		t.streams.Hand(s)
		return
	}
	tunnel.Pipe(s, up)
}

// dialTarget connects a target this client exposed, on its own loopback:
// the port must be one it exposed, and the address is one of the
// target's, never a name another resolver answers.
func (t *Tunnel) dialTarget(o tunnel.Open) (net.Conn, error) {
	target, ok := t.targets.Match(o.Host, o.Port)
	if !ok {
		return nil, fmt.Errorf("%s:%d is not one of the targets this client exposes (%s)", o.Host, o.Port, t.targets)
	}
	d := net.Dialer{Timeout: 5 * time.Second}
	var errs []string
	for _, addr := range target.Addrs() {
		c, err := d.Dial("tcp", addr)
		if err == nil {
			return c, nil
		}
		errs = append(errs, err.Error())
	}
	return nil, fmt.Errorf("nothing answers on the client's %s (%s); is its server running?", target, strings.Join(errs, "; "))
}

// serveFile answers the tool-server's browser with a file of this
// machine that one of the calls' client policies serves: read-only, GET
// and HEAD, no directory listings, at most the 32 MiB of a member.
func (t *Tunnel) serveFile(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "no-cache")
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "the client serves its files read-only", http.StatusMethodNotAllowed)
		return
	}
	p := path.Clean(r.URL.Path)
	if !path.IsAbs(p) {
		http.NotFound(w, r)
		return
	}
	real, err := filepath.EvalSymlinks(filepath.FromSlash(p))
	if err != nil {
		http.NotFound(w, r)
		return
	}
	if !t.serves(real) {
		http.Error(w, p+" is outside every root this client serves", http.StatusForbidden)
		return
	}
	f, err := os.Open(real)
	if err != nil {
		http.NotFound(w, r)
		return
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil || !st.Mode().IsRegular() {
		http.NotFound(w, r)
		return
	}
	if wire.OverCap(st.Size()) {
		http.Error(w, fmt.Sprintf("%s is larger than the %d MiB cap on a file sent to the tool-server", p, wire.MaxFileBytes>>20), http.StatusForbidden)
		return
	}
	http.ServeContent(w, r, st.Name(), st.ModTime(), f)
}

// serves reports whether a call's policy serves the real path p.
func (t *Tunnel) serves(p string) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, pol := range t.roots {
		if pol.Serves(p) {
			return true
		}
	}
	return false
}

// tunnelAddr is the address of the file server's listener.
type tunnelAddr struct{}

func (tunnelAddr) Network() string { return "tunnel" }
func (tunnelAddr) String() string  { return wire.FilesHost }
