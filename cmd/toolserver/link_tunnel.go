package main

import (
	"context"
	"sync"

	linkclient "github.com/toolserver/toolserver/link/client"
)

// linkTunnel is the tunnel of a linked run to one tool-server (flow run
// --expose): opened by the first call that needs it, shared by the run's
// calls to that server, closed when the run ends.
type linkTunnel struct {
	opts linkclient.TunnelOptions

	once sync.Once
	t    *linkclient.Tunnel
	err  error
}

// newLinkTunnel is the tunnel of the run's --expose targets, as
// resolveExpose read them; nil when it exposes nothing.
func newLinkTunnel(f flowRunOptions, warn func(string)) *linkTunnel {
	if len(f.exposed) == 0 {
		return nil
	}
	return &linkTunnel{opts: linkclient.TunnelOptions{Targets: f.exposed, Only: f.exposeOnly, Log: warn}}
}

// open returns the tunnel, opening it on c the first time. It lives past
// ctx, until close.
func (lt *linkTunnel) open(ctx context.Context, c *linkclient.Client) (*linkclient.Tunnel, error) {
	lt.once.Do(func() {
		lt.t, lt.err = c.OpenTunnel(context.WithoutCancel(ctx), lt.opts)
	})
	return lt.t, lt.err
}

// close closes the tunnel if it was opened.
func (lt *linkTunnel) close() {
	if lt == nil {
		return
	}
	lt.once.Do(func() {})
	if lt.t != nil {
		lt.t.Close()
	}
}

// useTunnel opens the run's tunnel (nil without --expose) and sends lr's
// calls through it from then on, to the tool-server that holds it. The
// link client names it in each call and serves the files of the call's
// client policy through it.
func (lr *linkedRun) useTunnel(ctx context.Context) (*linkclient.Tunnel, error) {
	if lr.tunnel == nil {
		return nil, nil
	}
	tun, err := lr.tunnel.open(ctx, lr.client)
	if err != nil {
		return nil, err
	}
	lr.client = tun.Client(lr.client)
	return tun, nil
}
