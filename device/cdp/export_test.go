package cdp

import (
	"context"

	proto "github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
)

// The tests' hooks into a device: what a test reads from or does to the
// page and the process that no caller of the package needs.

// PID returns the process id of the device's browser, for the tests that
// tell a fresh browser from the one that crashed.
func (d *Device) PID() int { return d.pid() }

// Kill ends the browser process abruptly, as a crash would: fault
// injection on a real browser. In a SharedBrowser pool it takes every
// device of the pool down.
func (d *Device) Kill() error {
	proc := d.b.process()
	if proc == nil {
		return ErrNotBooted
	}
	return proc.Kill()
}

// CrashPage crashes the renderer of the device's page with Page.crash,
// a command the renderer never answers: fault injection on a real browser.
func (d *Device) CrashPage(ctx context.Context) error {
	return d.call(ctx, "crash", func(tab context.Context) error {
		_, err := chromedp.Run(tab, func(ctx context.Context, t *chromedp.Target) (proto.Empty, error) {
			return proto.Call(ctx, t, page.Crash, proto.Empty{})
		})
		return err
	})
}

// NavigateUnchecked navigates without the URL policy, to reach what no
// caller may: chrome://crash.
func (d *Device) NavigateUnchecked(ctx context.Context, url string) error {
	return d.call(ctx, "open-url", func(tab context.Context) error {
		return d.navigate(tab, url)
	})
}

// KeepSandbox makes the pool start its browsers with Chromium's sandbox
// even as root, where NewPool turns it off: a sandbox that keeps a real
// Chromium from starting, for the test of the fallback.
func (p *Pool) KeepSandbox() {
	p.mu.Lock()
	p.noSandbox = false
	p.mu.Unlock()
}
