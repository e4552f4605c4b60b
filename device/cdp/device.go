package cdp

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"sync"

	proto "github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
)

//go:embed agent.js
var agentJS string

// Device is one Chromium page whose CSS viewport is exactly Width×Height at
// device-pixel-ratio 1, in a browser context of its own, so cookies and
// storage never leak between devices. Calls on one device run one at a
// time, on the device's goroutine (serve), which alone holds its pages.
type Device struct {
	id            string
	width, height int
	denyFiles     bool
	b             *browser
	ownBrowser    bool // b hosts this device only, and closes with it

	calls chan request
	// end ends the device's life (a context.WithCancelCause); dead is that
	// life's Done. The life ends when the device is stopped, when the pool
	// closes, and when the browser dies.
	end  context.CancelCauseFunc
	dead <-chan struct{}
	// ready is closed when the boot is over (bootErr tells how); done when
	// serve has returned, its pages closed.
	ready chan struct{}
	done  chan struct{}

	mu      sync.Mutex
	cause   error // why the life ended, as given to kill
	bootErr error
	url     string
}

// request is one call on the device, run by serve.
type request struct {
	fresh bool                            // open a fresh page first (Launch)
	abort <-chan struct{}                 // the caller's Done: stop waiting for the fresh page
	run   func(tab context.Context) error // bound to the caller's context
	done  chan error                      // serve's answer; buffered
}

// errAborted answers a request whose caller left before it could start.
var errAborted = errors.New("call abandoned")

// newDevice returns a device hosted by b, and its life, which only the
// device's goroutine will hold.
func newDevice(id string, w, h int, denyFiles bool, b *browser) (*Device, context.Context) {
	life, end := context.WithCancelCause(context.Background())
	d := &Device{id: id, width: w, height: h, denyFiles: denyFiles, b: b, ownBrowser: b.pool.browser != b,
		calls: make(chan request), end: end, dead: life.Done(),
		ready: make(chan struct{}), done: make(chan struct{})}
	return d, life
}

// ID returns the device id, such as chromium-cdp-1280x800.
func (d *Device) ID() string { return d.id }

// Size returns the viewport in CSS pixels (equal to screenshot pixels).
func (d *Device) Size() (width, height int) { return d.width, d.height }

// kill ends the device's life with cause, unless it already ended.
func (d *Device) kill(cause error) {
	d.mu.Lock()
	if d.cause == nil {
		d.cause = cause
	}
	d.mu.Unlock()
	d.end(cause)
}

// Dead reports whether the device is over: its browser exited or lost its
// connection, or the device was stopped. The next Pool.Device call boots a
// fresh one.
func (d *Device) Dead() bool {
	select {
	case <-d.dead:
		return true
	default:
		return false
	}
}

// deadError is the error of a call on a device whose life is over.
func (d *Device) deadError(what string) error {
	d.mu.Lock()
	cause := d.cause
	d.mu.Unlock()
	if errors.Is(cause, ErrCrashed) {
		return fmt.Errorf("%s on %s: %w; the next call boots a fresh browser", what, d.id, ErrCrashed)
	}
	return fmt.Errorf("%s on %s: %w", what, d.id, cause)
}

func (d *Device) booted() bool {
	select {
	case <-d.ready:
		d.mu.Lock()
		defer d.mu.Unlock()
		return d.bootErr == nil
	default:
		return false
	}
}

// URL returns the last URL the device opened.
func (d *Device) URL() string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.url
}

func (d *Device) setURL(u string) {
	d.mu.Lock()
	d.url = u
	d.mu.Unlock()
}

// boot waits for the browser, has it start the device's goroutine with
// life, and waits for the first page. Whatever the outcome, ready is
// closed; on an error before serve started, so is done.
func (d *Device) boot(ctx context.Context, life context.Context) (err error) {
	serving := false
	defer func() {
		d.mu.Lock()
		d.bootErr = err
		d.mu.Unlock()
		close(d.ready)
		if !serving {
			close(d.done)
		}
	}()
	if err := d.b.started(ctx); err != nil {
		return err
	}
	booted := make(chan error, 1)
	h := func(browser, blife context.Context, wg *sync.WaitGroup) {
		wg.Go(func() { d.serve(browser, blife, life, wg, booted) })
	}
	select {
	case d.b.hosts <- h:
		serving = true
	case <-d.b.dead:
		return fmt.Errorf("%w before the device started; the next call boots a fresh browser", ErrCrashed)
	case <-d.dead:
		return d.deadError("boot")
	case <-ctx.Done():
		return ctx.Err()
	}
	select {
	case err := <-booted:
		if err != nil {
			return fmt.Errorf("open page: %w", err)
		}
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// awaitBoot waits for a boot another caller started.
func (d *Device) awaitBoot(ctx context.Context) error {
	select {
	case <-d.ready:
	case <-ctx.Done():
		return fmt.Errorf("boot %s: %w", d.id, ctx.Err())
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.bootErr != nil {
		return fmt.Errorf("boot %s: %w", d.id, d.bootErr)
	}
	return nil
}

// wait returns when the device's goroutine has ended and, for a device
// with a browser of its own, the browser too.
func (d *Device) wait() {
	<-d.done
	if d.ownBrowser {
		<-d.b.done
	}
}

// serve is the device's goroutine: it opens the first page, answers calls
// one at a time, keeps the next launch's page ready, and closes its pages
// when the life ends. browser is the browser's chromedp context, blife its
// life; the goroutines serve starts join wg, which the browser waits for.
func (d *Device) serve(browser, blife, life context.Context, wg *sync.WaitGroup, booted chan<- error) {
	defer close(d.done)
	// The device dies with its browser, for the same reason.
	defer context.AfterFunc(blife, func() { d.kill(context.Cause(blife)) })()

	tab, closeTab, err := d.newTab(browser, life)
	if err != nil {
		d.kill(err)
		booted <- err
		return
	}
	booted <- nil

	// The next launch's page, a fresh browser context with its viewport
	// and agent, is made in the background: a new context and page take
	// ~200 ms that no step waits for. Its variables are written before
	// spareReady closes and read only after.
	var (
		spareReady chan struct{}
		spareTab   context.Context
		spareClose context.CancelFunc
		spareErr   error
	)
	prepare := func() {
		ready := make(chan struct{})
		spareReady = ready
		wg.Go(func() {
			spareTab, spareClose, spareErr = d.newTab(browser, life)
			close(ready)
		})
	}
	prepare()
	defer func() {
		closeTab()
		// The spare's start is bound to life, which is over.
		<-spareReady
		if spareErr == nil {
			spareClose()
		}
	}()

	for {
		var req request
		select {
		case req = <-d.calls:
		case <-life.Done():
			return
		}
		if req.fresh {
			select {
			case <-spareReady:
			case <-req.abort:
				req.done <- errAborted
				continue
			case <-life.Done():
				req.done <- context.Cause(life)
				continue
			}
			next, closeNext, err := spareTab, spareClose, spareErr
			if err != nil {
				next, closeNext, err = d.newTab(browser, life)
			}
			prepare()
			if err != nil {
				req.done <- err
				continue
			}
			// Closing a page waits for its target to go (~60 ms): keep
			// it off the critical path.
			wg.Go(closeTab)
			tab, closeTab = next, closeNext
		}
		req.done <- d.answer(tab, life, req)
	}
}

// answer runs one request on the page tab. Its context ends when the
// caller's does (req.run binds that) or when the device's life ends. A page
// that went away under the call means its browser died: the error then
// wraps ErrCrashed, and the device is over.
func (d *Device) answer(tab, life context.Context, req request) error {
	cctx, cancel := context.WithCancelCause(tab)
	defer cancel(nil)
	defer context.AfterFunc(life, func() { cancel(context.Cause(life)) })()
	err := req.run(cctx)
	if err == nil {
		return nil
	}
	// chromedp wraps the browser's exit error into the error of a call
	// that was running when it died, possibly before the lost connection
	// ends the browser's life.
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		d.b.end(ErrCrashed)
		d.kill(ErrCrashed)
		return ErrCrashed
	}
	if life.Err() != nil {
		// Stopped, closed, or the browser's death already seen.
		return context.Cause(life)
	}
	if tab.Err() != nil {
		// Only the browser's end closes the page under a call.
		d.kill(ErrCrashed)
		return ErrCrashed
	}
	return err
}

// newTab opens a page in a fresh browser context (its own cookies and
// storage), fixes its viewport, and installs the in-page agent. The end
// of life abandons it.
func (d *Device) newTab(browser, life context.Context) (context.Context, context.CancelFunc, error) {
	tab, closeTab := chromedp.NewContext(browser, chromedp.WithNewBrowserContext())
	abandon := context.AfterFunc(life, closeTab)
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
	if !abandon() && err == nil {
		err = context.Cause(life)
	}
	if err != nil {
		closeTab()
		return nil, nil, err
	}
	return tab, closeTab, nil
}

// call runs fn on the current page, one call per device at a time. fn's
// context ends when ctx ends; the page and the browser stay. A browser that
// dies during fn makes call return ErrCrashed.
func (d *Device) call(ctx context.Context, what string, fn func(tab context.Context) error) error {
	return d.do(ctx, what, false, fn)
}

// do is call, and with fresh it first replaces the page with a new one.
func (d *Device) do(ctx context.Context, what string, fresh bool, fn func(tab context.Context) error) error {
	req := request{fresh: fresh, abort: ctx.Done(), done: make(chan error, 1),
		run: func(tab context.Context) error {
			cctx, cancel := context.WithCancelCause(tab)
			defer cancel(nil)
			defer context.AfterFunc(ctx, func() { cancel(context.Cause(ctx)) })()
			return fn(cctx)
		}}
	select {
	case d.calls <- req:
	case <-ctx.Done():
		return fmt.Errorf("%s on %s: %w", what, d.id, ctx.Err())
	case <-d.dead:
		return d.deadError(what)
	}
	err := <-req.done
	switch {
	case err == nil:
		return nil
	case errors.Is(err, ErrCrashed):
		return fmt.Errorf("%s on %s: %w; the next call boots a fresh browser", what, d.id, ErrCrashed)
	case errors.Is(err, errAborted) || ctx.Err() != nil:
		return fmt.Errorf("%s on %s: %w", what, d.id, ctx.Err())
	}
	return fmt.Errorf("%s on %s: %w", what, d.id, err)
}

// Launch replaces the current page with a fresh browser context and page
// (no cookies, no storage) and navigates it to url, waiting for the load.
func (d *Device) Launch(ctx context.Context, url string) error {
	if err := d.checkURL(url); err != nil {
		return err
	}
	return d.do(ctx, "launch", true, func(tab context.Context) error {
		return d.navigate(tab, url)
	})
}

// Navigate loads url in the current page and waits for the load event.
func (d *Device) Navigate(ctx context.Context, url string) error {
	if err := d.checkURL(url); err != nil {
		return err
	}
	return d.call(ctx, "open-url", func(tab context.Context) error {
		return d.navigate(tab, url)
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

func (d *Device) navigate(tab context.Context, url string) error {
	if err := chromedp.Do(tab, chromedp.Navigate(url)); err != nil {
		return fmt.Errorf("navigate to %s: %w", url, err)
	}
	d.setURL(url)
	return nil
}

// pid returns the browser's process id, or 0.
func (d *Device) pid() int {
	if proc := d.b.process(); proc != nil {
		return proc.Pid
	}
	return 0
}

func (d *Device) String() string { return fmt.Sprintf("%s pid %d", d.id, d.pid()) }
