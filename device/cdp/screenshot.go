package cdp

import (
	"context"
	"errors"

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
		png, err = capture(tab, viewportShot)
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

// capture copies the viewport, or what p asks for, as a PNG. When
// Chromium has no frame yet it waits for the next one and tries again, a
// few times.
func capture(tab context.Context, p page.CaptureScreenshotParams) ([]byte, error) {
	for try := 1; ; try++ {
		png, err := captureOnce(tab, p)
		var perr *cdproto.Error
		if err == nil || try == captureTries || !errors.As(err, &perr) || perr.Message != errNoSurface {
			return png, err
		}
		if _, err := chromedp.Run(tab, chromedp.Evaluate[bool](nextFrame, chromedp.EvalAwaitPromise)); err != nil {
			return nil, err
		}
	}
}

// viewportShot is the capture of the viewport as it is.
var viewportShot = page.CaptureScreenshotParams{
	Format:      page.CaptureScreenshotFormatPng,
	FromSurface: new(true),
	// Only the zlib effort changes; PNG stays lossless.
	OptimizeForSpeed: new(true),
}

func captureOnce(tab context.Context, p page.CaptureScreenshotParams) ([]byte, error) {
	return chromedp.Run(tab, func(ctx context.Context, t *chromedp.Target) ([]byte, error) {
		r, err := proto.Call(ctx, t, page.CaptureScreenshot, p)
		if err != nil {
			return nil, err
		}
		return r.Data, nil
	})
}
