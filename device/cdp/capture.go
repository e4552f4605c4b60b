package cdp

// This file is the settled capture of a snapshot: the page settled and
// dressed for it in one round trip of the in-page agent (dress), the
// captures, and the undress that leaves the page as it was.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/chromedp/cdproto/page"
)

// CaptureOptions say how Capture dresses the page and what it captures.
// The zero value captures the viewport, settled, as StableScreenshot does.
type CaptureOptions struct {
	// MaxCaptures bounds the captures that look for two consecutive
	// identical ones; fewer than 2 count as 2. A first capture that Accept
	// refused is not one of them.
	MaxCaptures int
	// Clip captures only this region of the viewport, in whole CSS pixels
	// (CDP's clip at scale 1, so the pixels are those of a viewport
	// capture cut to the region). It must lie inside the viewport; nil
	// captures the whole viewport.
	Clip *Rect
	// FullPage captures the whole scrollable page from its top-left
	// corner, not the viewport; the device's viewport is unchanged after.
	// It does not go with Clip.
	FullPage bool
	// Mask paints the box of every element matching any of its selectors
	// with MaskColor (Playwright's mask), covering each pixel the box
	// touches. A selector by text keeps only the innermost of the elements
	// it matches: the one carrying the text, not its ancestors.
	Mask []Selector
	// MaskColor is any CSS colour ("#FF00FF", "rgb(0 0 0)", "black");
	// empty is DefaultMaskColor. A translucent colour lets the element
	// show through.
	MaskColor string
	// Hide makes every element matching any of its selectors visibility:
	// hidden for the capture (BackstopJS's hideSelectors); the text rule
	// of Mask applies.
	Hide []Selector
	// Ignore finds the box of every element matching any of its
	// selectors, as Mask would paint it, without painting it: the shot's
	// Ignored, for a comparison to leave out. The text rule of Mask
	// applies.
	Ignore []Selector
	// Style is CSS added to the page in a style sheet for the capture.
	Style string
	// Accept, when set, is shown the first capture, taken once the page is
	// settled and dressed. When it returns true that capture is the shot
	// (Playwright's fast path); otherwise the captures go on until two
	// consecutive ones are identical, as without Accept. It runs within
	// the device's call, the page dressed: it must not call the device
	// (that call would wait for this one to end). ignored are the shot's
	// Ignored, known by then.
	Accept func(png []byte, ignored []Rect) bool
}

// DefaultMaskColor is the colour of a mask that names none: magenta, as
// Playwright's.
const DefaultMaskColor = "#FF00FF"

// Rect is a region of the viewport in whole CSS pixels.
type Rect struct{ X, Y, Width, Height int }

// CaptureOptionError is the error of a Capture whose mask or hide selector
// the in-page matcher refused (a regular expression JavaScript cannot
// compile, scopes nested too deep), or whose mask colour CSS does not
// know. The page is unchanged.
type CaptureOptionError struct {
	// Option is "mask", "hide", "ignore" or "maskColor".
	Option string `json:"option"`
	// Index is the position of the selector in its option; -1 for
	// maskColor.
	Index  int    `json:"index"`
	Reason string `json:"reason"`
}

// Error names the option, the selector's index and the page's reason.
func (e *CaptureOptionError) Error() string {
	if e.Index < 0 {
		return fmt.Sprintf("capture option %s: %s", e.Option, e.Reason)
	}
	return fmt.Sprintf("capture option %s[%d]: %s", e.Option, e.Index, e.Reason)
}

// StableShot is a settled capture: the PNG and how many captures it took.
type StableShot struct {
	PNG []byte
	// Captures counts every capture taken, a refused first one included.
	Captures int
	// Stable is false when no two consecutive captures agreed within the
	// allowed tries; PNG is then the last capture. It is true when Accept
	// took the first capture.
	Stable bool
	// Accepted tells that Accept took the first capture.
	Accepted bool
	// Ignored are the boxes of the elements of CaptureOptions.Ignore, in
	// the shot's pixels, cut to the shot, as the page stood when it was
	// dressed.
	Ignored []Rect
}

// StableScreenshot settles the page and captures the viewport until two
// consecutive captures are byte-identical, at most maxCaptures times: a
// Capture with no options but MaxCaptures.
func (d *Device) StableScreenshot(ctx context.Context, maxCaptures int) (StableShot, error) {
	return d.Capture(ctx, CaptureOptions{MaxCaptures: maxCaptures})
}

// dressArgs are the options of the in-page dress (agent.js).
type dressArgs struct {
	Hide      []Selector `json:"hide,omitempty"`
	Mask      []Selector `json:"mask,omitempty"`
	MaskColor string     `json:"maskColor,omitempty"`
	Ignore    []Selector `json:"ignore,omitempty"`
	Style     string     `json:"style,omitempty"`
	Full      bool       `json:"full,omitempty"`
}

// dressAnswer is what the in-page dress answers: the page offset of the
// viewport and, for a full page, the page's size, in CSS pixels.
type dressAnswer struct {
	Error  *CaptureOptionError `json:"error"`
	X      float64             `json:"x"`
	Y      float64             `json:"y"`
	Width  float64             `json:"width"`
	Height float64             `json:"height"`
	// Ignored are the boxes of the ignore elements: viewport pixels, or
	// page pixels for a full page.
	Ignored []Rect `json:"ignored"`
}

// MaxFullPagePixels bounds a full-page capture: 64 megapixels, the largest
// image the snapshot package decodes (a 1280-wide page 52,000 pixels
// tall). A taller page is an error, not a capture no one can compare.
const MaxFullPagePixels = 64 << 20

// undressTimeout bounds the undress of a capture whose caller has gone:
// the page is left as it was found even so.
const undressTimeout = 2 * time.Second

// Capture settles the page (animations finished or cancelled, transitions
// and the caret off, fonts loaded), dresses it as opts say (hide, style,
// mask), and captures it until two consecutive captures are
// byte-identical, at most opts.MaxCaptures times, unless opts.Accept takes
// the first. Headless Chromium now and then returns a frame with a tile
// not yet painted; comparing only an agreed frame keeps that out of a
// snapshot. Whatever the outcome, all the capture changed in the page is
// undone before Capture returns, in one more round trip.
func (d *Device) Capture(ctx context.Context, opts CaptureOptions) (StableShot, error) {
	if opts.Clip != nil {
		if opts.FullPage {
			return StableShot{}, errors.New("capture: a clip and a full page exclude each other")
		}
		if c := *opts.Clip; c.Width <= 0 || c.Height <= 0 || c.X < 0 || c.Y < 0 || c.X+c.Width > d.width || c.Y+c.Height > d.height {
			return StableShot{}, fmt.Errorf("capture: clip %dx%d at (%d, %d) is not inside the %dx%d viewport", c.Width, c.Height, c.X, c.Y, d.width, d.height)
		}
	}
	expr := `window.__toolserver.dress()`
	if len(opts.Hide) > 0 || len(opts.Mask) > 0 || len(opts.Ignore) > 0 || opts.Style != "" || opts.FullPage {
		color := opts.MaskColor
		if color == "" && len(opts.Mask) > 0 {
			color = DefaultMaskColor
		}
		arg, err := jsArg(dressArgs{Hide: opts.Hide, Mask: opts.Mask, MaskColor: color, Ignore: opts.Ignore, Style: opts.Style, Full: opts.FullPage})
		if err != nil {
			return StableShot{}, err
		}
		expr = `window.__toolserver.dress(` + arg + `)`
	}
	var shot StableShot
	err := d.call(ctx, "snapshot", func(tab context.Context) (err error) {
		at, err := evaluate[dressAnswer](tab, expr)
		if err != nil {
			// The dress may have been done when its answer was lost.
			_ = undress(tab)
			return fmt.Errorf("settle page: %w", err)
		}
		if at.Error != nil {
			return at.Error
		}
		defer func() {
			if uerr := undress(tab); uerr != nil && err == nil {
				err = fmt.Errorf("undo the capture's changes to the page: %w", uerr)
			}
		}()
		if w, h := math.Ceil(at.Width), math.Ceil(at.Height); opts.FullPage && w*h > MaxFullPagePixels {
			return fmt.Errorf("capture: the full page is %gx%g, more than %d megapixels", w, h, MaxFullPagePixels>>20)
		}
		ignored := ignoredIn(at, opts, d.width, d.height)
		shot, err = stable(tab, shotParams(opts, at), opts, ignored)
		shot.Ignored = ignored
		return err
	})
	return shot, err
}

// ignoredIn are the ignore boxes the dress found, in the pixels of the
// shot opts ask for: cut to the viewport, moved into a clip and cut to
// it, or cut to the page.
func ignoredIn(at dressAnswer, opts CaptureOptions, width, height int) []Rect {
	frame := Rect{Width: width, Height: height}
	switch {
	case opts.FullPage:
		frame = Rect{Width: int(math.Ceil(at.Width)), Height: int(math.Ceil(at.Height))}
	case opts.Clip != nil:
		frame = *opts.Clip
	}
	var out []Rect
	for _, r := range at.Ignored {
		x0, y0 := max(r.X, frame.X), max(r.Y, frame.Y)
		x1, y1 := min(r.X+r.Width, frame.X+frame.Width), min(r.Y+r.Height, frame.Y+frame.Height)
		if x1 > x0 && y1 > y0 {
			out = append(out, Rect{X: x0 - frame.X, Y: y0 - frame.Y, Width: x1 - x0, Height: y1 - y0})
		}
	}
	return out
}

// shotParams are the parameters of the captures opts ask for, the page
// being dressed as at says. A clip, in the viewport, is given to CDP in
// page coordinates.
func shotParams(opts CaptureOptions, at dressAnswer) page.CaptureScreenshotParams {
	p := viewportShot
	switch {
	case opts.FullPage:
		p.CaptureBeyondViewport = new(true)
		p.Clip = &page.Viewport{Width: math.Ceil(at.Width), Height: math.Ceil(at.Height), Scale: 1}
	case opts.Clip != nil:
		c := opts.Clip
		p.Clip = &page.Viewport{X: at.X + float64(c.X), Y: at.Y + float64(c.Y), Width: float64(c.Width), Height: float64(c.Height), Scale: 1}
	}
	return p
}

// stable captures with p until two consecutive captures are identical, at
// most max(opts.MaxCaptures, 2) times after a first one opts.Accept
// refused, or once when it took it.
func stable(tab context.Context, p page.CaptureScreenshotParams, opts CaptureOptions, ignored []Rect) (StableShot, error) {
	prev, err := capture(tab, p)
	if err != nil {
		return StableShot{}, err
	}
	shot := StableShot{PNG: prev, Captures: 1}
	if opts.Accept != nil {
		if opts.Accept(prev, ignored) {
			shot.Accepted, shot.Stable = true, true
			return shot, nil
		}
		// The refused capture may be the unpainted one: the search for
		// two identical captures starts after it.
		if prev, err = capture(tab, p); err != nil {
			return shot, err
		}
		shot.PNG = prev
		shot.Captures++
	}
	for n := 1; n < max(opts.MaxCaptures, 2); n++ {
		cur, err := capture(tab, p)
		if err != nil {
			return shot, err
		}
		shot.Captures++
		shot.PNG = cur
		if bytes.Equal(prev, cur) {
			shot.Stable = true
			return shot, nil
		}
		prev = cur
	}
	return shot, nil
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
