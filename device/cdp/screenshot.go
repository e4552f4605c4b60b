package cdp

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/chromedp/cdproto"
	proto "github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
)

// Screenshot captures the viewport as a PNG of exactly Width×Height pixels.
func (d *Device) Screenshot(ctx context.Context) ([]byte, error) {
	var png []byte
	err := d.call(ctx, "screenshot", func(tab context.Context) error {
		var err error
		png, err = capture(tab)
		return err
	})
	return png, err
}

// captureTries bounds the captures of one Screenshot call that Chromium
// answers with errNoSurface.
const captureTries = 4

// errNoSurface is Chromium's answer when the page has no frame to copy yet,
// now and then right after a navigation on a busy machine. The protocol
// gives it no code of its own (-32000 is every server error), so the
// message tells it.
const errNoSurface = "Unable to capture screenshot"

// nextFrame resolves after the page's next frame, or after 50 ms in a page
// whose frames stall; it needs no agent (an error page has none).
const nextFrame = `new Promise((r) => { let done = false; const fin = () => { if (!done) { done = true; r(true); } }; requestAnimationFrame(fin); setTimeout(fin, 50); })`

// capture copies the viewport as a PNG. When Chromium has no frame yet it
// waits for the next one and tries again, a few times.
func capture(tab context.Context) ([]byte, error) {
	for try := 1; ; try++ {
		png, err := captureOnce(tab)
		var perr *cdproto.Error
		if err == nil || try == captureTries || !errors.As(err, &perr) || perr.Message != errNoSurface {
			return png, err
		}
		if _, err := chromedp.Run(tab, chromedp.Evaluate[bool](nextFrame, chromedp.EvalAwaitPromise)); err != nil {
			return nil, err
		}
	}
}

func captureOnce(tab context.Context) ([]byte, error) {
	return chromedp.Run(tab, func(ctx context.Context, t *chromedp.Target) ([]byte, error) {
		r, err := proto.Call(ctx, t, page.CaptureScreenshot, page.CaptureScreenshotParams{
			Format:      page.CaptureScreenshotFormatPng,
			FromSurface: new(true),
			// Only the zlib effort changes; PNG stays lossless.
			OptimizeForSpeed: new(true),
		})
		if err != nil {
			return nil, err
		}
		return r.Data, nil
	})
}

// StableShot is a settled capture: the PNG and how many captures it took.
type StableShot struct {
	PNG      []byte
	Captures int
	// Stable is false when no two consecutive captures agreed within the
	// allowed tries; PNG is then the last capture.
	Stable bool
}

// undressTimeout bounds the undress of a capture whose caller has gone:
// the page is left as it was found even so.
const undressTimeout = 2 * time.Second

// StableScreenshot settles the page (animations finished or cancelled,
// transitions and the caret off, fonts loaded) and captures until two
// consecutive captures are byte-identical, at most maxCaptures times.
// Headless Chromium now and then returns a frame with a tile not yet
// painted; comparing only an agreed frame keeps that out of a snapshot.
// Whatever the outcome, the settling is undone in the page before it
// returns, in one more round trip: a settle style left in the page kept
// every later CSS animation paused.
func (d *Device) StableScreenshot(ctx context.Context, maxCaptures int) (StableShot, error) {
	if maxCaptures < 2 {
		maxCaptures = 2
	}
	var shot StableShot
	err := d.call(ctx, "snapshot", func(tab context.Context) (err error) {
		if _, err := evaluate[bool](tab, `window.__toolserver.dress()`); err != nil {
			// The dress may have been done when its answer was lost.
			_ = undress(tab)
			return fmt.Errorf("settle page: %w", err)
		}
		defer func() {
			if uerr := undress(tab); uerr != nil && err == nil {
				err = fmt.Errorf("undo the capture's changes to the page: %w", uerr)
			}
		}()
		prev, err := capture(tab)
		if err != nil {
			return err
		}
		shot = StableShot{PNG: prev, Captures: 1}
		for shot.Captures < maxCaptures {
			cur, err := capture(tab)
			if err != nil {
				return err
			}
			shot.Captures++
			shot.PNG = cur
			if bytes.Equal(prev, cur) {
				shot.Stable = true
				return nil
			}
			prev = cur
		}
		return nil
	})
	return shot, err
}

// undress undoes in the page all a capture's dress changed. When the
// capture's call was cut short by its caller, it still runs, bounded by
// undressTimeout; when the page or the browser is gone there is nothing
// left to undo.
func undress(tab context.Context) error {
	if tab.Err() != nil {
		// ErrPageCrashed matches ErrCrashed; a stopped device's life
		// ends with ErrNotBooted.
		cause := context.Cause(tab)
		for _, gone := range []error{ErrCrashed, ErrClosed, ErrNotBooted} {
			if errors.Is(cause, gone) {
				return nil
			}
		}
		var cancel context.CancelFunc
		tab, cancel = context.WithTimeout(context.WithoutCancel(tab), undressTimeout)
		defer cancel()
	}
	_, err := evaluate[bool](tab, `window.__toolserver.undress()`)
	return err
}
