package cdp

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"time"

	proto "github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
)

//go:embed agent.js
var agentJS string

// Device is one booted Chromium: a browser process whose current page has a
// CSS viewport of exactly Width×Height at device-pixel-ratio 1. Calls on one
// device run one at a time; devices are separate browser processes, so
// cookies and storage never leak between them.
type Device struct {
	id            string
	width, height int
	denyFiles     bool

	sem chan struct{} // one call at a time

	bootMu      sync.Mutex
	allocStop   context.CancelFunc
	browser     context.Context // chromedp context owning the browser process
	browserStop context.CancelFunc
	tab         context.Context // chromedp context of the current page
	tabStop     context.CancelFunc
	dead        chan struct{}
	deadOnce    sync.Once

	mu  sync.Mutex
	url string

	spareMu sync.Mutex
	spare   chan spareTab // the next launch's page, being made or ready
}

func newDevice(id string, w, h int) *Device {
	return &Device{id: id, width: w, height: h, sem: make(chan struct{}, 1), dead: make(chan struct{})}
}

// ID returns the device id, such as chromium-cdp-1280x800.
func (d *Device) ID() string { return d.id }

// Size returns the viewport in CSS pixels (equal to screenshot pixels).
func (d *Device) Size() (width, height int) { return d.width, d.height }

// markDead records that the browser is gone; the next Pool.Device call
// boots a fresh one.
func (d *Device) markDead() { d.deadOnce.Do(func() { close(d.dead) }) }

// Dead reports whether the browser has exited or lost its connection.
func (d *Device) Dead() bool {
	select {
	case <-d.dead:
		return true
	default:
		return false
	}
}

func (d *Device) booted() bool {
	d.bootMu.Lock()
	defer d.bootMu.Unlock()
	return d.tab != nil
}

// URL returns the last URL the device opened.
func (d *Device) URL() string { return d.lastURL() }

func (d *Device) lastURL() string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.url
}

func (d *Device) setURL(u string) {
	d.mu.Lock()
	d.url = u
	d.mu.Unlock()
}

// flags are the launch flags of PRODUCT.md plus those that make screenshots
// repeatable.
func (d *Device) flags(p *Pool) []chromedp.ExecAllocatorOption {
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(p.execPath),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("no-first-run", true),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("hide-scrollbars", true),
		chromedp.Flag("mute-audio", true),
		// Repeatable pixels: DPR 1, no hinting, no LCD subpixel text, no
		// smooth scrolling, sRGB.
		chromedp.Flag("force-device-scale-factor", "1"),
		chromedp.Flag("font-render-hinting", "none"),
		chromedp.Flag("disable-lcd-text", true),
		chromedp.Flag("disable-smooth-scrolling", true),
		chromedp.Flag("force-color-profile", "srgb"),
		// /dev/shm is 64 MB in a default container.
		chromedp.Flag("disable-dev-shm-usage", true),
		// CDPScreenshotNewSurface: a 1280x800 capture takes ~40 ms instead of ~60.
		chromedp.Flag("enable-features", "NetworkService,NetworkServiceInProcess,CDPScreenshotNewSurface"),
		chromedp.Flag("disable-features", "Translate,BlinkGenPropertyTrees,PaintHolding,AcceptCHFrame,MediaRouter,OptimizationHints"),
		chromedp.WindowSize(d.width, d.height),
	)
	if p.sandboxOff() {
		opts = append(opts, chromedp.NoSandbox)
	} else {
		// chromedp adds --no-sandbox for root by itself; keep it off.
		opts = append(opts, chromedp.Flag("no-sandbox", false))
	}
	return opts
}

// boot starts the browser and its first page unless already done.
func (d *Device) boot(ctx context.Context, p *Pool) error {
	d.bootMu.Lock()
	defer d.bootMu.Unlock()
	if d.tab != nil {
		return nil
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	err := d.start(ctx, p)
	if err != nil && !p.sandboxOff() && ctx.Err() == nil {
		// Chromium's sandbox needs user namespaces, which a default
		// container does not give a non-root user: run without it then,
		// and say so once.
		p.disableSandbox()
		p.notice("toolserver: Chromium could not start with its sandbox (" + firstLine(err.Error()) + "); running it with --no-sandbox")
		err = d.start(ctx, p)
	}
	return err
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// start launches the browser process and opens its first page.
func (d *Device) start(ctx context.Context, p *Pool) error {
	// The browser outlives the call that boots it, so its context derives
	// from Background, never from the request.
	allocCtx, allocStop := chromedp.NewExecAllocator(context.Background(), d.flags(p)...)
	bctx, bstop := chromedp.NewContext(allocCtx)
	errc := make(chan error, 1)
	go func() { errc <- chromedp.Do(bctx) }()
	var err error
	select {
	case err = <-errc:
	case <-ctx.Done():
		err = ctx.Err()
		go func() { <-errc; bstop(); allocStop() }()
		return fmt.Errorf("boot %s: %w", d.id, err)
	}
	if err != nil {
		bstop()
		allocStop()
		return fmt.Errorf("boot %s: start %s: %w", d.id, p.execPath, err)
	}
	b := chromedp.FromContext(bctx).Browser
	go func() {
		<-b.LostConnection
		d.markDead()
	}()
	tab, tabStop, err := d.newTab(bctx)
	if err != nil {
		bstop()
		allocStop()
		return fmt.Errorf("boot %s: open page: %w", d.id, err)
	}
	d.allocStop, d.browser, d.browserStop = allocStop, bctx, bstop
	d.tab, d.tabStop = tab, tabStop
	d.prepareSpare(bctx)
	return nil
}

// spareTab is a page prepared ahead of the next launch.
type spareTab struct {
	tab  context.Context
	stop context.CancelFunc
	err  error
}

// prepareSpare opens the next launch's page (a fresh browser context with
// its viewport and agent) in the background, so a launch costs only the
// navigation: a new context and page take ~200 ms that no step waits for.
func (d *Device) prepareSpare(browser context.Context) {
	ch := make(chan spareTab, 1)
	d.spareMu.Lock()
	d.spare = ch
	d.spareMu.Unlock()
	go func() {
		tab, stop, err := d.newTab(browser)
		ch <- spareTab{tab, stop, err}
	}()
}

// takeSpare returns the prepared page, waiting for it if it is still
// being made, or makes one when there is none.
func (d *Device) takeSpare(ctx context.Context, browser context.Context) (context.Context, context.CancelFunc, error) {
	d.spareMu.Lock()
	ch := d.spare
	d.spare = nil
	d.spareMu.Unlock()
	if ch != nil {
		select {
		case sp := <-ch:
			if sp.err == nil {
				return sp.tab, sp.stop, nil
			}
		case <-ctx.Done():
			go func() {
				if sp := <-ch; sp.err == nil {
					sp.stop()
				}
			}()
			return nil, nil, ctx.Err()
		}
	}
	return d.newTab(browser)
}

// dropSpare closes a prepared page that will not be used.
func (d *Device) dropSpare() {
	d.spareMu.Lock()
	ch := d.spare
	d.spare = nil
	d.spareMu.Unlock()
	if ch == nil {
		return
	}
	// A browser that stopped answering must not hold up a shutdown: the
	// page is closed whenever it is done, or with the browser.
	select {
	case sp := <-ch:
		if sp.err == nil {
			sp.stop()
		}
	case <-time.After(5 * time.Second):
		go func() {
			if sp := <-ch; sp.err == nil {
				sp.stop()
			}
		}()
	}
}

// newTab opens a page in a fresh browser context (its own cookies and
// storage), fixes its viewport, and installs the in-page agent.
func (d *Device) newTab(browser context.Context) (context.Context, context.CancelFunc, error) {
	tab, stop := chromedp.NewContext(browser, chromedp.WithNewBrowserContext())
	err := chromedp.Do(tab,
		func(ctx context.Context, t *chromedp.Target) (chromedp.Void, error) {
			if _, err := proto.Call(ctx, t, emulation.SetDeviceMetricsOverride, emulation.SetDeviceMetricsOverrideParams{
				Width: int64(d.width), Height: int64(d.height), DeviceScaleFactor: 1,
				ScreenWidth: int64(d.width), ScreenHeight: int64(d.height),
			}); err != nil {
				return chromedp.Void{}, err
			}
			_, err := proto.Call(ctx, t, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{
				Source: agentJS, RunImmediately: new(true),
			})
			return chromedp.Void{}, err
		},
	)
	if err != nil {
		stop()
		return nil, nil, err
	}
	return tab, stop, nil
}

// call runs fn on the current page, one call per device at a time. fn's
// context ends when ctx ends; the page and the browser stay. A browser that
// dies during fn makes call return ErrCrashed.
func (d *Device) call(ctx context.Context, what string, fn func(tab context.Context) error) error {
	select {
	case d.sem <- struct{}{}:
	case <-ctx.Done():
		return fmt.Errorf("%s on %s: %w", what, d.id, ctx.Err())
	case <-d.dead:
		return fmt.Errorf("%s on %s: %w; the next call boots a fresh browser", what, d.id, ErrCrashed)
	}
	defer func() { <-d.sem }()
	if d.Dead() {
		return fmt.Errorf("%s on %s: %w; the next call boots a fresh browser", what, d.id, ErrCrashed)
	}
	d.bootMu.Lock()
	tab := d.tab
	d.bootMu.Unlock()
	if tab == nil {
		return fmt.Errorf("%s on %s: %w", what, d.id, ErrNotBooted)
	}
	cctx, cancel := context.WithCancel(tab)
	defer cancel()
	stopAfter := context.AfterFunc(ctx, cancel)
	defer stopAfter()
	stopDead := context.AfterFunc(deadContext{d.dead}, cancel)
	defer stopDead()

	err := fn(cctx)
	if err == nil {
		return nil
	}
	// chromedp wraps the browser's exit error into the error of a call
	// that was running when it died, possibly before LostConnection is
	// seen here.
	var exit *exec.ExitError
	if errors.As(err, &exit) || d.lostConnection() {
		d.markDead()
	}
	if d.Dead() {
		return fmt.Errorf("%s on %s: %w; the next call boots a fresh browser", what, d.id, ErrCrashed)
	}
	if ctx.Err() != nil {
		return fmt.Errorf("%s on %s: %w", what, d.id, ctx.Err())
	}
	return fmt.Errorf("%s on %s: %w", what, d.id, err)
}

// lostConnection reports whether the browser's connection dropped.
// chromedp closes LostConnection before it fails a call for the loss, so
// a failed call sees it here at once, before the goroutine that marks the
// device dead has run, and answers ErrCrashed rather than chromedp's own
// error.
func (d *Device) lostConnection() bool {
	d.bootMu.Lock()
	b := d.browser
	d.bootMu.Unlock()
	if b == nil {
		return false
	}
	select {
	case <-chromedp.FromContext(b).Browser.LostConnection:
		return true
	default:
		return false
	}
}

// deadContext adapts a closed-on-death channel to context.AfterFunc.
type deadContext struct{ done chan struct{} }

func (deadContext) Deadline() (time.Time, bool) { return time.Time{}, false }
func (c deadContext) Done() <-chan struct{}     { return c.done }
func (c deadContext) Err() error {
	select {
	case <-c.done:
		return context.Canceled
	default:
		return nil
	}
}
func (deadContext) Value(any) any { return nil }

// Launch replaces the current page with a fresh browser context and page
// (no cookies, no storage) and navigates it to url, waiting for the load.
func (d *Device) Launch(ctx context.Context, url string) error {
	if err := d.checkURL(url); err != nil {
		return err
	}
	return d.call(ctx, "launch", func(_ context.Context) error {
		d.bootMu.Lock()
		browser, oldStop := d.browser, d.tabStop
		d.bootMu.Unlock()
		tab, stop, err := d.takeSpare(ctx, browser)
		if err != nil {
			return err
		}
		d.bootMu.Lock()
		d.tab, d.tabStop = tab, stop
		d.bootMu.Unlock()
		// Closing a context waits for the target to go (~60 ms): keep it
		// off the critical path, and make the next launch's page meanwhile.
		go oldStop()
		d.prepareSpare(browser)
		return d.navigate(ctx, tab, url)
	})
}

// Navigate loads url in the current page and waits for the load event.
func (d *Device) Navigate(ctx context.Context, url string) error {
	if err := d.checkURL(url); err != nil {
		return err
	}
	return d.call(ctx, "open-url", func(tab context.Context) error {
		return d.navigate(ctx, tab, url)
	})
}

// checkURL refuses a file: URL on a device of a pool that denies them,
// before the page changes.
func (d *Device) checkURL(url string) error {
	if d.denyFiles && strings.HasPrefix(strings.ToLower(strings.TrimSpace(url)), "file:") {
		return fmt.Errorf("open %s: %w (it serves remote callers; a page must come from a URL this machine can fetch)", url, ErrFileURL)
	}
	return nil
}

func (d *Device) navigate(ctx context.Context, tab context.Context, url string) error {
	// The tab context has no deadline of the call; bind it.
	cctx, cancel := context.WithCancel(tab)
	defer cancel()
	defer context.AfterFunc(ctx, cancel)()
	if err := chromedp.Do(cctx, chromedp.Navigate(url)); err != nil {
		return fmt.Errorf("navigate to %s: %w", url, err)
	}
	d.setURL(url)
	return nil
}

// close stops the page and the browser, waiting up to a few seconds for a
// graceful exit.
func (d *Device) close() {
	if !d.Dead() {
		d.dropSpare()
	}
	d.bootMu.Lock()
	defer d.bootMu.Unlock()
	if d.tabStop != nil {
		d.tabStop()
	}
	if d.browser != nil {
		cctx, cancel := context.WithTimeout(d.browser, 5*time.Second)
		_ = chromedp.Cancel(cctx)
		cancel()
		d.browserStop()
		d.allocStop()
	}
	d.tab, d.tabStop, d.browser = nil, nil, nil
}

// Kill ends the browser process abruptly, as a crash would. It exists for
// fault-injection tests and for stop-device --force.
func (d *Device) Kill() error {
	d.bootMu.Lock()
	b := d.browser
	d.bootMu.Unlock()
	if b == nil {
		return ErrNotBooted
	}
	proc := chromedp.FromContext(b).Browser.Process()
	if proc == nil {
		return errors.New("no browser process")
	}
	return proc.Kill()
}

// PID returns the browser's process id, or 0.
func (d *Device) PID() int {
	d.bootMu.Lock()
	b := d.browser
	d.bootMu.Unlock()
	if b == nil {
		return 0
	}
	if proc := chromedp.FromContext(b).Browser.Process(); proc != nil {
		return proc.Pid
	}
	return 0
}

func (d *Device) String() string { return d.id + " pid " + strconv.Itoa(d.PID()) }
