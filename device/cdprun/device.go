// Package cdprun adapts a device/cdp device to the device interface the
// flow runner declares (flowrun.Device), translating selectors, conditions
// and elements between the two, so neither package imports the other. A
// local run of the CLI, flow-execute and the recorder all drive Chromium
// through it.
package cdprun

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/toolserver/toolserver/device/cdp"
	"github.com/toolserver/toolserver/fault"
	"github.com/toolserver/toolserver/flow"
	flowrun "github.com/toolserver/toolserver/flow/run"
)

// Device is a *cdp.Device seen as a flowrun.Device.
type Device struct{ D *cdp.Device }

var _ flowrun.Device = Device{}

// ID implements flowrun.Device.
func (a Device) ID() string { return a.D.ID() }

// Size implements flowrun.Device.
func (a Device) Size() (int, int) { return a.D.Size() }

// Launch implements flowrun.Device.
func (a Device) Launch(ctx context.Context, url string) error { return Classify(a.D.Launch(ctx, url)) }

// Classify marks an error that says the browser itself is gone as a
// failure of the machinery (fault.ErrInfrastructure), so the runner and
// the CLI tell a crashed Chromium from a failed step: the browser died
// (ErrCrashed), there is no Chromium (ErrNoChromium), the pool closed
// (ErrClosed) or the device was stopped under the run (ErrNotBooted).
func Classify(err error) error {
	for _, target := range []error{cdp.ErrCrashed, cdp.ErrNoChromium, cdp.ErrClosed, cdp.ErrNotBooted} {
		if errors.Is(err, target) {
			return fault.Infrastructure(err)
		}
	}
	return err
}

// element is the device's element as the runner's, nil for nil; the
// element covering it comes along.
func element(e *cdp.Element) *flowrun.Element {
	if e == nil {
		return nil
	}
	return &flowrun.Element{
		ID: e.ID, IDs: e.IDs, Text: e.Text, Role: e.Role, Visible: e.Visible,
		X: e.Frame.X, Y: e.Frame.Y, Width: e.Frame.Width, Height: e.Frame.Height,
		CenterX: e.Center.X, CenterY: e.Center.Y, Matches: e.Matches,
		CoveredBy: element(e.CoveredBy),
	}
}

// Selector is sel as the in-page matcher takes it; nil is the zero
// Selector, which matches nothing.
func Selector(sel *flow.Selector) cdp.Selector {
	if sel == nil {
		return cdp.Selector{}
	}
	return cdp.Selector{
		ID: sel.ID, Text: sel.Text, Matches: sel.Matches, Role: sel.Role, Any: sel.Any, Loose: sel.Loose,
		Within: scope(sel.Within), After: scope(sel.After), Next: scope(sel.Next),
	}
}

func scope(sel *flow.Selector) *cdp.Selector {
	if sel == nil {
		return nil
	}
	s := Selector(sel)
	return &s
}

// Locate implements flowrun.Device.
func (a Device) Locate(ctx context.Context, sel *flow.Selector, timeout time.Duration) (*flowrun.Element, error) {
	e, err := a.D.Locate(ctx, Selector(sel), timeout)
	return element(e), Classify(err)
}

// Tap implements flowrun.Device.
func (a Device) Tap(ctx context.Context, x, y float64, times int, hold time.Duration) error {
	return Classify(a.D.TapElement(ctx, &cdp.Element{Center: cdp.Point{X: x, Y: y}}, times, hold))
}

// Fill implements flowrun.Device.
func (a Device) Fill(ctx context.Context, sel *flow.Selector, text string, submit bool, timeout time.Duration) (*flowrun.Element, error) {
	e, err := a.D.Fill(ctx, Selector(sel), text, submit, timeout)
	return element(e), Classify(err)
}

// Press implements flowrun.Device.
func (a Device) Press(ctx context.Context, key string, times int) error {
	return Classify(a.D.Press(ctx, key, times))
}

// Scroll implements flowrun.Device.
func (a Device) Scroll(ctx context.Context, x, y, dx, dy float64) error {
	return Classify(a.D.Scroll(ctx, x, y, dx, dy))
}

// Check implements flowrun.Device.
func (a Device) Check(ctx context.Context, c flow.Condition, timeout time.Duration) (flowrun.Outcome, error) {
	res, err := a.D.Wait(ctx, cdp.Condition{Selector: Selector(c.Selector), State: string(c.Kind), Text: c.Expected, Match: string(c.Match), MatchCase: c.MatchCase}, timeout)
	if err != nil {
		return flowrun.Outcome{}, Classify(err)
	}
	return flowrun.Outcome{OK: res.OK, Element: element(res.Element)}, nil
}

// Idle implements flowrun.Device.
func (a Device) Idle(ctx context.Context, stableFor, timeout time.Duration) (bool, error) {
	res, err := a.D.AwaitIdle(ctx, stableFor, timeout)
	return res.Idle, Classify(err)
}

// Describe implements flowrun.Device.
func (a Device) Describe(ctx context.Context) ([]flowrun.Element, error) {
	els, err := a.D.Describe(ctx)
	if err != nil {
		return nil, Classify(err)
	}
	out := make([]flowrun.Element, len(els))
	for i := range els {
		out[i] = *element(&els[i])
	}
	return out, nil
}

// Capture implements flowrun.Device.
func (a Device) Capture(ctx context.Context, opts flowrun.CaptureOptions) (flowrun.Shot, error) {
	o := cdp.CaptureOptions{
		MaxCaptures: opts.MaxCaptures, FullPage: opts.FullPage,
		Mask: selectors(opts.Mask), MaskColor: opts.MaskColor, Hide: selectors(opts.Hide),
		Ignore: selectors(opts.Ignore), Style: opts.Style,
	}
	if opts.Accept != nil {
		o.Accept = func(png []byte, ignored []cdp.Rect) bool { return opts.Accept(png, rects(ignored)) }
	}
	if c := opts.Clip; c != nil {
		o.Clip = &cdp.Rect{X: c.X, Y: c.Y, Width: c.Width, Height: c.Height}
	}
	shot, err := a.D.Capture(ctx, o)
	if err != nil {
		return flowrun.Shot{}, captureError(err, opts)
	}
	return flowrun.Shot{PNG: shot.PNG, Stable: shot.Stable, Accepted: shot.Accepted, Captures: shot.Captures, Ignored: rects(shot.Ignored)}, nil
}

// rects are the device's rectangles as the runner's.
func rects(rs []cdp.Rect) []flowrun.Rect {
	var out []flowrun.Rect
	for _, r := range rs {
		out = append(out, flowrun.Rect{X: r.X, Y: r.Y, Width: r.Width, Height: r.Height})
	}
	return out
}

func selectors(sels []*flow.Selector) []cdp.Selector {
	if len(sels) == 0 {
		return nil
	}
	out := make([]cdp.Selector, len(sels))
	for i, sel := range sels {
		out[i] = Selector(sel)
	}
	return out
}

// captureError is the error of a capture. A mask or hide selector, or a
// mask colour, that the page refused is named as the flow spells it
// (mask text=/(/: bad regex …) rather than by its index; it still
// matches *cdp.CaptureOptionError.
func captureError(err error, opts flowrun.CaptureOptions) error {
	var oe *cdp.CaptureOptionError
	if !errors.As(err, &oe) {
		return Classify(err)
	}
	sels := opts.Mask
	switch oe.Option {
	case "hide":
		sels = opts.Hide
	case "ignore":
		sels = opts.Ignore
	}
	msg := fmt.Sprintf("%s: %s", oe.Option, oe.Reason)
	if oe.Index >= 0 && oe.Index < len(sels) {
		msg = fmt.Sprintf("%s %s: %s", oe.Option, sels[oe.Index], oe.Reason)
	}
	return &optionError{msg: msg, err: err}
}

// optionError reads as msg and unwraps to the device's error.
type optionError struct {
	msg string
	err error
}

func (e *optionError) Error() string { return e.msg }
func (e *optionError) Unwrap() error { return e.err }
