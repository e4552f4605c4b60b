package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/toolserver/toolserver/device/cdp"
	"github.com/toolserver/toolserver/store"
	"github.com/toolserver/toolserver/tool"
	"github.com/toolserver/toolserver/tool/devicetool"
	"github.com/toolserver/toolserver/tool/flowtool"
)

// Build stamps, set with -ldflags "-X main.version=… -X main.commit=…".
var (
	version = "dev"
	commit  = "unknown"
)

// app wires the parts a server or an in-process call needs.
type app struct {
	pool      *cdp.Pool
	tools     *tool.Registry
	artifacts *store.Artifacts
	uploads   *store.Uploads
	tmp       string
	log       *slog.Logger
	flowTools *flowtool.Tools

	// stopSweep ends the upload sweeper; sweeper is its goroutine, which
	// Close waits for before it removes the uploads' directory.
	stopSweep context.CancelFunc
	sweeper   sync.WaitGroup
}

type appOptions struct {
	maxDevices   int
	stderr       io.Writer
	denyFileURLs bool
}

func newApp(o appOptions) (*app, error) {
	tmp, err := os.MkdirTemp("", "toolserver-")
	if err != nil {
		return nil, fmt.Errorf("temp dir: %w", err)
	}
	a := &app{tmp: tmp, tools: tool.NewRegistry(), log: slog.New(slog.NewTextHandler(o.stderr, nil))}
	a.artifacts, err = store.NewArtifacts(filepath.Join(tmp, "artifacts"), 500, 1<<30)
	if err != nil {
		a.Close()
		return nil, err
	}
	a.uploads, err = store.NewUploads(store.UploadConfig{
		Dir:        filepath.Join(tmp, "uploads"),
		MaxUpload:  64 << 20,
		MaxPending: 512 << 20,
		TTL:        10 * time.Minute,
	})
	if err != nil {
		a.Close()
		return nil, err
	}
	a.pool = cdp.NewPool(cdp.Options{MaxDevices: o.maxDevices, Log: o.stderr, DenyFileURLs: o.denyFileURLs})
	dt := &devicetool.Tools{Pool: a.pool, Artifacts: a.artifacts}
	dt.Register(a.tools)
	registerMoreTools(a)
	return a, nil
}

// sweepUploads removes expired uploads every interval until Close.
func (a *app) sweepUploads(interval time.Duration) {
	ctx, stop := context.WithCancel(context.Background())
	a.stopSweep = stop
	a.sweeper.Go(func() { a.uploads.Run(ctx, interval) })
}

// Close stops the upload sweeper and the browsers, waits for them, and
// removes the temp files.
func (a *app) Close() {
	if a.stopSweep != nil {
		a.stopSweep()
		a.sweeper.Wait()
	}
	if a.pool != nil {
		a.pool.Close()
	}
	os.RemoveAll(a.tmp)
}
