package cdp

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"os/exec"
	"sync"
	"time"

	proto "github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/inspector"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/target"
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
	urls          urlPolicy
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

	// The pool's bookkeeping of the device (queue.go), guarded by
	// Pool.mu, not mu: uses counts the calls that use it (Pool.Acquire),
	// busySince is when the first of them began, idleSince when the last
	// one ended (or when it was booted), which orders idle devices for
	// eviction.
	uses      int
	busySince time.Time
	idleSince time.Time
}

// request is one call on the device, run by serve.
type request struct {
	fresh bool                            // open a fresh page first (Launch)
	proxy string                          // with fresh: the fresh page's proxy (LaunchVia)
	drop  string                          // replace the page first when it uses this proxy (DropProxy)
	abort <-chan struct{}                 // the caller's Done: stop waiting for the fresh page
	run   func(tab context.Context) error // bound to the caller's context
	done  chan error                      // serve's answer; buffered
}

// errAborted answers a request whose caller left before it could start.
var errAborted = errors.New("call abandoned")

// newDevice returns a device hosted by b, and its life, which only the
// device's goroutine will hold.
func newDevice(id string, w, h int, urls urlPolicy, b *browser) (*Device, context.Context) {
	life, end := context.WithCancelCause(context.Background())
	d := &Device{id: id, width: w, height: h, urls: urls, b: b, ownBrowser: b.pool.browser != b,
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

// devPage is one page of a device: a target in a browser context of its
// own.
type devPage struct {
	ctx   context.Context    // the page's chromedp context
	close context.CancelFunc // closes the page and its browser context
	// gone ends, with a cause wrapping ErrPageCrashed, when the page's
	// renderer crashes or its target closes: the browser lives on, but
	// the page will answer no command again.
	gone context.Context
	// proxy is the proxy of the page's browser context; "" for none.
	proxy string
}

// serve is the device's goroutine: it opens the first page, answers calls
// one at a time, keeps the next launch's page ready, replaces a page that
// crashed, and closes its pages when the life ends. browser is the
// browser's chromedp context, blife its life; the goroutines serve starts
// join wg, which the browser waits for.
func (d *Device) serve(browser, blife, life context.Context, wg *sync.WaitGroup, booted chan<- error) {
	defer close(d.done)
	// The device dies with its browser, for the same reason.
	defer context.AfterFunc(blife, func() { d.kill(context.Cause(blife)) })()

	pg, err := d.newPage(browser, life, "")
	if err != nil {
		d.kill(err)
		booted <- err
		return
	}
	booted <- nil

	// The next launch's page, a fresh browser context with its viewport
	// and agent, is made in the background: a new context and page add
	// about 45 ms to a launch that waits for them. spareReady is nil while no spare is
	// made (Options.NoSparePage); its variables are written before
	// spareReady closes and read only after.
	var (
		spareReady chan struct{}
		spare      *devPage
		spareErr   error
	)
	prepare := func() {
		if d.b.pool.noSpare {
			return
		}
		ready := make(chan struct{})
		spareReady = ready
		wg.Go(func() {
			spare, spareErr = d.newPage(browser, life, "")
			close(ready)
		})
	}
	prepare()
	defer func() {
		pg.close()
		if spareReady == nil {
			return
		}
		// The spare's start is bound to life, which is over.
		<-spareReady
		if spareErr == nil {
			spare.close()
		}
	}()

	used := false // whether a call has run on pg
	for {
		var req request
		select {
		case req = <-d.calls:
		case <-life.Done():
			return
		}
		// A launch starts on a fresh page; any call after a crash of the
		// page gets one too, rather than a page that never answers. The
		// boot's page, while no call has run on it, is as fresh as the
		// spare (a browser context of its own, nothing loaded): the first
		// launch takes it, and the spare stays for the next. A launch
		// through a proxy gets a page of its own making, never the spare;
		// a page whose proxy is dropped gives way to a plain one.
		crashed := pg.gone.Err() != nil
		proxied := req.fresh && req.proxy != ""
		dropped := req.drop != "" && pg.proxy == req.drop
		if (req.fresh && (used || pg.proxy != req.proxy)) || crashed || dropped {
			var next *devPage
			var err error
			if proxied {
				next, err = d.newPage(browser, life, req.proxy)
			} else if spareReady != nil {
				select {
				case <-spareReady:
				case <-req.abort:
					req.done <- errAborted
					continue
				case <-life.Done():
					req.done <- context.Cause(life)
					continue
				}
				next, err = spare, spareErr
				if err == nil && next.gone.Err() != nil {
					wg.Go(next.close)
					err = context.Cause(next.gone)
				}
			}
			if !proxied {
				if next == nil || err != nil {
					next, err = d.newPage(browser, life, "")
				}
				prepare()
			}
			if err != nil {
				req.done <- err
				continue
			}
			// Closing a page waits for its target to go (~60 ms): keep
			// it off the critical path.
			wg.Go(pg.close)
			pg = next
			if crashed || dropped {
				d.setURL("")
			}
		}
		switch {
		case req.drop == "":
			used = true
		case dropped:
			// The page put in its place is as fresh as the spare.
			used = false
		}
		req.done <- d.answer(pg, life, req)
	}
}

// answer runs one request on the page pg. Its context ends when the
// caller's does (req.run binds that), when the device's life ends, and
// when the page crashes. A page that went away under the call means its
// browser died: the error then wraps ErrCrashed, and the device is over.
// A page that crashed alone answers ErrPageCrashed; the device lives on.
func (d *Device) answer(pg *devPage, life context.Context, req request) error {
	cctx, cancel := context.WithCancelCause(pg.ctx)
	defer cancel(nil)
	defer context.AfterFunc(life, func() { cancel(context.Cause(life)) })()
	defer context.AfterFunc(pg.gone, func() { cancel(context.Cause(pg.gone)) })()
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
	if pg.ctx.Err() != nil {
		// Only the browser's end closes the page under a call.
		d.kill(ErrCrashed)
		return ErrCrashed
	}
	if pg.gone.Err() != nil {
		return context.Cause(pg.gone)
	}
	return err
}

// newPage opens a page in a fresh browser context (its own cookies and
// storage), fixes its viewport, installs the in-page agent, and watches
// for its crash. The end of life abandons it. With proxy, every request
// of the context goes through that proxy, loopback ones too.
func (d *Device) newPage(browser, life context.Context, proxy string) (*devPage, error) {
	tab, closeTab := chromedp.NewContext(browser, chromedp.WithNewBrowserContext(func(p *target.CreateBrowserContextParams) {
		if proxy != "" {
			p.ProxyServer = proxy
			// Chromium never proxies loopback hosts unless told.
			p.ProxyBypassList = "<-loopback>"
		}
	}))
	abandon := context.AfterFunc(life, closeTab)
	gone, lost := context.WithCancelCause(context.Background())
	// A crashed renderer answers nothing and chromedp keeps waiting: the
	// page's own events say it is gone. Listen runs its func on the
	// page's reading loop, so it only records.
	err := chromedp.Listen(tab, func(ev any) {
		switch ev := ev.(type) {
		case *inspector.EventTargetCrashed:
			lost(ErrPageCrashed)
		case *inspector.EventDetached:
			lost(fmt.Errorf("%w: its target closed (%s)", ErrPageCrashed, ev.Reason))
		}
	})
	if err == nil {
		setup, stop := context.WithCancelCause(tab)
		stopOnCrash := context.AfterFunc(gone, func() { stop(context.Cause(gone)) })
		err = chromedp.Do(setup,
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
		stopOnCrash()
		stop(nil)
		if err != nil && gone.Err() != nil {
			err = context.Cause(gone)
		}
	}
	if !abandon() && err == nil {
		err = context.Cause(life)
	}
	closePage := func() {
		closeTab()
		lost(context.Canceled)
	}
	if err != nil {
		closePage()
		return nil, err
	}
	return &devPage{ctx: tab, close: closePage, gone: gone, proxy: proxy}, nil
}

// call runs fn on the current page, one call per device at a time. fn's
// context ends when ctx ends; the page and the browser stay. A browser that
// dies during fn makes call return ErrCrashed, a page that crashes
// ErrPageCrashed.
func (d *Device) call(ctx context.Context, what string, fn func(tab context.Context) error) error {
	return d.do(ctx, what, false, fn)
}

// do is call, and with fresh it first replaces the page with a new one.
func (d *Device) do(ctx context.Context, what string, fresh bool, fn func(tab context.Context) error) error {
	return d.send(ctx, what, request{fresh: fresh}, fn)
}

// send runs fn as req on the device's goroutine.
func (d *Device) send(ctx context.Context, what string, req request, fn func(tab context.Context) error) error {
	req.abort, req.done = ctx.Done(), make(chan error, 1)
	req.run = func(tab context.Context) error {
		cctx, cancel := context.WithCancelCause(tab)
		defer cancel(nil)
		defer context.AfterFunc(ctx, func() { cancel(context.Cause(ctx)) })()
		return fn(cctx)
	}
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
	case errors.Is(err, ErrPageCrashed):
		return fmt.Errorf("%s on %s: %w; the next call gets a fresh page", what, d.id, err)
	case errors.Is(err, ErrCrashed):
		return fmt.Errorf("%s on %s: %w; the next call boots a fresh browser", what, d.id, ErrCrashed)
	case errors.Is(err, errAborted) || ctx.Err() != nil:
		return fmt.Errorf("%s on %s: %w", what, d.id, ctx.Err())
	}
	return fmt.Errorf("%s on %s: %w", what, d.id, err)
}

// pid returns the browser's process id, or 0.
func (d *Device) pid() int {
	if proc := d.b.process(); proc != nil {
		return proc.Pid
	}
	return 0
}

func (d *Device) String() string { return fmt.Sprintf("%s pid %d", d.id, d.pid()) }
