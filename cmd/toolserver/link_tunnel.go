package main

import (
	"context"
	"path/filepath"
	"sync"

	"github.com/toolserver/toolserver/internal/clientfs"
	linkclient "github.com/toolserver/toolserver/link/client"
	"github.com/toolserver/toolserver/link/tunnel"
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

// newLinkTunnel is the tunnel of the run's --expose targets; nil when it
// exposes nothing. The targets were checked by resolveExpose.
func newLinkTunnel(f flowRunOptions, warn func(string)) *linkTunnel {
	if len(f.expose) == 0 {
		return nil
	}
	targets, _ := tunnel.ParseTargets(f.expose)
	return &linkTunnel{opts: linkclient.TunnelOptions{Targets: targets, Only: f.exposeOnly, Log: warn}}
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

// tunnelArg opens the run's tunnel and lets it serve the files of flow
// target t (the client policy of its call), for flow-execute's tunnel
// argument; "" without a tunnel. From then on lr's calls go through the
// tunnel, to the tool-server that holds it.
func (lr *linkedRun) tunnelArg(ctx context.Context, t flowTarget) (string, error) {
	if lr.tunnel == nil {
		return "", nil
	}
	tun, err := lr.tunnel.open(ctx, lr.client)
	if err != nil {
		return "", err
	}
	lr.client = tun.Client(lr.client)
	path := t.path
	if lr.byName {
		path = filepath.Join(lr.project, ".argent", "flows", t.name+".yaml")
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", err
	}
	canonical, err := filepath.EvalSymlinks(abs)
	if err != nil {
		canonical = abs
	}
	tun.ServeFiles(clientfs.ClientRoots(abs, canonical, lr.project))
	return tun.ID(), nil
}
