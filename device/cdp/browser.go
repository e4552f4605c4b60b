package cdp

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/chromedp/chromedp"
)

// browser is one Chromium process. Its goroutine, run, owns the process
// and its chromedp context: it starts the process, starts the goroutine of
// each device the process hosts, and once the browser is closed or dies it
// waits for those goroutines before it stops the process. Nothing else
// holds the browser's context.
type browser struct {
	pool          *Pool
	width, height int // the window of the first page

	end  context.CancelCauseFunc // ends the life: ErrClosed on close, ErrCrashed when the process is lost
	dead <-chan struct{}         // the life's Done

	// hosts carries the devices to start to run, which starts each with
	// the browser's context.
	hosts chan host
	ready chan struct{} // closed when the start is over; startErr tells how
	done  chan struct{} // closed when run has returned

	mu       sync.Mutex
	startErr error
	proc     *os.Process
}

// host asks run to start the goroutine of a device: run calls it with the
// browser's context, the browser's life and the group run waits for.
type host func(browser, life context.Context, wg *sync.WaitGroup)

// startBrowser starts a browser's goroutine; the process starts at once, in
// the background. p.mu is held.
func (p *Pool) startBrowser(w, h int) *browser {
	life, end := context.WithCancelCause(context.Background())
	b := &browser{pool: p, width: w, height: h, end: end, dead: life.Done(),
		hosts: make(chan host), ready: make(chan struct{}), done: make(chan struct{})}
	p.wg.Go(func() { b.run(life) })
	return b
}

// Dead reports whether the browser's life is over: closed, crashed or
// never started.
func (b *browser) Dead() bool {
	select {
	case <-b.dead:
		return true
	default:
		return false
	}
}

// close ends the browser; run closes the process once its devices are
// done. It does not wait.
func (b *browser) close() { b.end(ErrClosed) }

// started waits until the process is up, or ctx ends.
func (b *browser) started(ctx context.Context) error {
	select {
	case <-b.ready:
	case <-ctx.Done():
		return ctx.Err()
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.startErr
}

// process returns the browser's process, or nil before it started.
func (b *browser) process() *os.Process {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.proc
}

// run is the browser's goroutine.
func (b *browser) run(life context.Context) {
	defer close(b.done)
	bctx, stop, err := b.launch(life)
	b.mu.Lock()
	b.startErr = err
	if err == nil {
		b.proc = chromedp.FromContext(bctx).Browser.Process()
	}
	b.mu.Unlock()
	close(b.ready)
	if err != nil {
		b.end(err)
		return
	}
	// chromedp cancels the browser's context when the connection to the
	// process drops: that is a crash unless the life already ended.
	unwatch := context.AfterFunc(bctx, func() { b.end(ErrCrashed) })

	var wg sync.WaitGroup
	for {
		select {
		case h := <-b.hosts:
			h(bctx, life, &wg)
			continue
		case <-life.Done():
		}
		break
	}
	// The devices' lives end with the browser's; they close their pages
	// while the process still answers.
	wg.Wait()
	unwatch()
	if !errors.Is(context.Cause(life), ErrCrashed) {
		// A graceful close, bounded: a browser that stopped answering is
		// killed by stop.
		cctx, cancel := context.WithTimeout(bctx, 5*time.Second)
		_ = chromedp.Cancel(cctx)
		cancel()
	}
	stop()
}

// launch starts the process and returns its chromedp context and the
// function that stops it. When the sandbox keeps Chromium from starting,
// it retries once without it.
func (b *browser) launch(life context.Context) (context.Context, func(), error) {
	bctx, stop, err := b.launchOnce(life)
	if err != nil && !b.pool.sandboxOff() && life.Err() == nil {
		// Chromium's sandbox needs user namespaces, which a default
		// container does not give a non-root user: run without it then,
		// and say once why.
		b.pool.disableSandbox()
		b.pool.notice("toolserver: Chromium could not start with its sandbox (" + sandboxReason(err, os.Geteuid(), procSys) + "); running it with --no-sandbox")
		bctx, stop, err = b.launchOnce(life)
	}
	return bctx, stop, err
}

func (b *browser) launchOnce(life context.Context) (context.Context, func(), error) {
	// The process outlives the call that boots it, so its context derives
	// from Background; a close during the start kills it.
	proc, kill := context.WithCancel(context.Background())
	allocCtx, allocStop := chromedp.NewExecAllocator(proc, b.pool.flags(b.width, b.height)...)
	bctx, bstop := chromedp.NewContext(allocCtx)
	stop := func() { bstop(); allocStop(); kill() }
	abandon := context.AfterFunc(life, kill)
	err := chromedp.Do(bctx)
	abandon()
	if err == nil && life.Err() != nil {
		err = context.Cause(life)
	}
	if err != nil {
		stop()
		return nil, nil, fmt.Errorf("start %s: %w", b.pool.execPath, err)
	}
	return bctx, stop, nil
}

// flags are the launch flags of docs/product.md ("Devices") plus those that
// make screenshots repeatable.
func (p *Pool) flags(w, h int) []chromedp.ExecAllocatorOption {
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(p.execPath),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("no-first-run", true),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("hide-scrollbars", true),
		chromedp.Flag("mute-audio", true),
		// Pages of one process that are not in front must keep their
		// timers and frames: a busy page stays busy, a wait sees every
		// frame.
		chromedp.Flag("disable-background-timer-throttling", true),
		chromedp.Flag("disable-backgrounding-occluded-windows", true),
		chromedp.Flag("disable-renderer-backgrounding", true),
		// Repeatable pixels: DPR 1, no hinting, no LCD subpixel text, no
		// smooth scrolling, sRGB.
		chromedp.Flag("force-device-scale-factor", "1"),
		chromedp.Flag("font-render-hinting", "none"),
		chromedp.Flag("disable-lcd-text", true),
		chromedp.Flag("disable-smooth-scrolling", true),
		chromedp.Flag("force-color-profile", "srgb"),
		// Partial raster repaints only the invalidated part of a tile,
		// over what the tile held: the edges of text and rounded shapes
		// near the seam then come out a few levels off from a tile
		// painted whole, depending on what the page did before. With it,
		// the 12-flow suite's reruns differed in 1 to 25 pixels in 5 of 6
		// runs; without it, 0 of 30 (docs/performance.md, "The strict
		// default (2026-12-02)").
		chromedp.Flag("disable-partial-raster", true),
		// /dev/shm is 64 MB in a default container.
		chromedp.Flag("disable-dev-shm-usage", true),
		// CDPScreenshotNewSurface: a 1280x800 capture takes ~40 ms instead of ~60.
		chromedp.Flag("enable-features", "NetworkService,NetworkServiceInProcess,CDPScreenshotNewSurface"),
		// WebUIOmniboxPopup, WebUIOmniboxAimPopup: Chromium 156 opens
		// two omnibox-popup WebUI pages, each its own renderer process,
		// for every window, and headless opens a window per browser
		// context, so every device and launch paid for three renderers
		// where it needs one. A 6-flow run takes 2.4 s instead of 3.9.
		chromedp.Flag("disable-features", "Translate,BlinkGenPropertyTrees,PaintHolding,AcceptCHFrame,MediaRouter,OptimizationHints,WebUIOmniboxPopup,WebUIOmniboxAimPopup"),
		chromedp.WindowSize(w, h),
	)
	if p.urls.hosts != nil {
		// The allowed hosts are enforced by the browser's own resolver,
		// which a proxy would bypass (it resolves the hosts itself).
		opts = append(opts,
			chromedp.Flag("host-resolver-rules", p.urls.hosts.resolverRules()),
			chromedp.Flag("no-proxy-server", true))
	}
	if p.sandboxOff() {
		opts = append(opts, chromedp.NoSandbox)
	} else {
		// chromedp adds --no-sandbox for root by itself; keep it off.
		opts = append(opts, chromedp.Flag("no-sandbox", false))
	}
	return opts
}
