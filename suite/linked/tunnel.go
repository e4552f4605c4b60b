package linked

import (
	"context"
	"sync"

	linkclient "github.com/toolserver/toolserver/link/client"
)

// tunnel is the tunnel of a linked run to one tool-server (flow run
// --expose): opened by the first call that needs it, shared by the run's
// calls to that server, closed when the run ends.
type tunnel struct {
	opts linkclient.TunnelOptions

	once sync.Once
	t    *linkclient.Tunnel
	err  error
}

// newTunnel is the tunnel of o's Expose targets; nil when it exposes
// nothing. Its lines go to warn.
func newTunnel(o Options, warn func(string)) *tunnel {
	if len(o.Expose) == 0 {
		return nil
	}
	return &tunnel{opts: linkclient.TunnelOptions{Targets: o.Expose, Only: o.ExposeOnly, Log: warn}}
}

// open returns the tunnel, opening it on c the first time. It lives past
// ctx, until close.
func (lt *tunnel) open(ctx context.Context, c *linkclient.Client) (*linkclient.Tunnel, error) {
	lt.once.Do(func() {
		lt.t, lt.err = c.OpenTunnel(context.WithoutCancel(ctx), lt.opts)
	})
	return lt.t, lt.err
}

// close closes the tunnel if it was opened.
func (lt *tunnel) close() {
	if lt == nil {
		return
	}
	lt.once.Do(func() {})
	if lt.t != nil {
		lt.t.Close()
	}
}

// Close closes the run's tunnel (--expose), if it was opened.
func (r *Run) Close() { r.tunnel.close() }

// useTunnel opens the run's tunnel (nil without Expose) and sends r's
// calls through it from then on, to the tool-server that holds it. The
// link client names it in each call and serves the files of the call's
// client policy through it.
func (r *Run) useTunnel(ctx context.Context) (*linkclient.Tunnel, error) {
	if r.tunnel == nil {
		return nil, nil
	}
	tun, err := r.tunnel.open(ctx, r.client)
	if err != nil {
		return nil, err
	}
	r.client = tun.Client(r.client)
	return tun, nil
}
