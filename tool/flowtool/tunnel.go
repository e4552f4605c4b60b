package flowtool

// A flow-execute call with a tunnel (flow run --expose): the call binds
// the client's tunnel to a proxy of its own, every launch of its run and
// of its nested runs opens a browser context through that proxy, and
// when the call ends the proxy closes and no device keeps a page that
// used it.

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/toolserver/toolserver/device/cdp"
	"github.com/toolserver/toolserver/device/cdprun"
	"github.com/toolserver/toolserver/fault"
	linkserver "github.com/toolserver/toolserver/link/server"
	"github.com/toolserver/toolserver/wire"
)

// callTunnel is the tunnel one call bound, shared by its nested runs.
type callTunnel struct {
	t *linkserver.Tunnel
	b *linkserver.Binding

	mu   sync.Mutex
	devs []*cdp.Device // the devices a launch of the call opened through it
}

type tunnelKey struct{}

// bindTunnel binds the tunnel a call names (its tunnel argument) and puts
// it in ctx for the call's nested runs; a nested call without the
// argument finds its parent's. end closes what this call bound: nil
// when it bound nothing.
func (t *Tools) bindTunnel(ctx context.Context, id string) (context.Context, *callTunnel, func(), error) {
	if id == "" {
		ct, _ := ctx.Value(tunnelKey{}).(*callTunnel)
		return ctx, ct, nil, nil
	}
	if len(id) > 128 {
		return ctx, nil, nil, &fault.Error{Kind: fault.Validation, Field: wire.ArgTunnel, Message: "tunnel: longer than a tunnel id"}
	}
	tun, err := t.Tunnels.Get(id)
	if err != nil {
		return ctx, nil, nil, err
	}
	b, err := tun.Bind(t.Pool.CheckHost)
	if err != nil {
		return ctx, nil, nil, err
	}
	ct := &callTunnel{t: tun, b: b}
	return context.WithValue(ctx, tunnelKey{}, ct), ct, ct.end, nil
}

// end closes the call's proxy and drops, from each device a launch of the
// call used, the page that used it.
func (ct *callTunnel) end() {
	ct.b.Close()
	ct.mu.Lock()
	devs := ct.devs
	ct.mu.Unlock()
	for _, d := range devs {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		_ = d.DropProxy(ctx, ct.b.ProxyURL())
		cancel()
	}
}

// used notes that a launch on d went through the tunnel.
func (ct *callTunnel) used(d *cdp.Device) {
	ct.mu.Lock()
	defer ct.mu.Unlock()
	if !slices.Contains(ct.devs, d) {
		ct.devs = append(ct.devs, d)
	}
}

// proxy is what a launch of the call gives its browser context.
func (ct *callTunnel) proxy() cdp.Proxy {
	return cdp.Proxy{URL: ct.b.ProxyURL(), Takes: func(host string) bool {
		return strings.EqualFold(host, wire.FilesHost) || (wire.Loopback(host) && len(ct.t.Targets()) > 0)
	}}
}

// fileURL is where the call's pages open a file of the client: its path
// on the client, under wire.FilesHost.
func fileURL(clientPath string) string {
	return (&url.URL{Scheme: "http", Host: wire.FilesHost, Path: filepath.ToSlash(clientPath)}).String()
}

// linkedDevice is the device of a linked run: its launches go through
// the call's tunnel when there is one, and a launch of this machine's
// localhost that fails without one says how to reach the client's.
type linkedDevice struct {
	cdprun.Device
	ct     *callTunnel
	remote bool // the client is on another machine, as far as the server knows
}

// Launch implements flowrun.Device.
func (d linkedDevice) Launch(ctx context.Context, u string) error {
	if d.ct == nil {
		err := d.Device.Launch(ctx, u)
		if hp := loopbackHostPort(u); err != nil && hp != "" && d.remote {
			err = fmt.Errorf("%w; the tool-server's browser runs on the tool-server's machine, whose localhost is its own: flow run --expose %s reaches the client's %s through a tunnel", err, hp, hp)
		}
		return err
	}
	d.ct.used(d.D)
	err := cdprun.Classify(d.D.LaunchVia(ctx, u, d.ct.proxy()))
	if err != nil {
		if why := d.ct.b.Refusal(hostPort(u)); why != "" {
			err = fmt.Errorf("%w (the tunnel: %s)", err, why)
		}
	}
	return err
}

// hostPort is the host:port a request for URL u connects, "" for a URL
// that is not http or https.
func hostPort(u string) string {
	p, err := url.Parse(u)
	if err != nil || p.Host == "" {
		return ""
	}
	port := p.Port()
	switch {
	case port != "":
	case p.Scheme == "http":
		port = "80"
	case p.Scheme == "https":
		port = "443"
	default:
		return ""
	}
	return net.JoinHostPort(p.Hostname(), port)
}

// loopbackHostPort is hostPort for a URL of the loopback, else "".
func loopbackHostPort(u string) string {
	hp := hostPort(u)
	if h, _, err := net.SplitHostPort(hp); err != nil || !wire.Loopback(h) {
		return ""
	}
	return hp
}
