package cdp

import (
	"context"
	"fmt"
	"math"
	"strings"
	"time"

	proto "github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/chromedp"
)

// send runs one input command on the page.
func send[P any](tab context.Context, cmd proto.Command[P, proto.Empty], p P) error {
	_, err := chromedp.Run(tab, func(ctx context.Context, t *chromedp.Target) (proto.Empty, error) {
		return proto.Call(ctx, t, cmd, p)
	})
	return err
}

func mouse(tab context.Context, typ input.DispatchMouseEventType, x, y float64, buttons int64) error {
	p := input.DispatchMouseEventParams{Type: typ, X: x, Y: y, Button: input.MouseButtonLeft, Buttons: buttons, ClickCount: 1}
	if typ == input.DispatchMouseEventTypeMouseMoved {
		p.Button, p.ClickCount = input.MouseButtonNone, 0
	}
	return send(tab, input.DispatchMouseEvent, p)
}

// tapAt presses and releases the left button at (x, y) CSS pixels, holding
// it for hold.
func tapAt(ctx, tab context.Context, x, y float64, hold time.Duration) error {
	// No separate mouse move: the press itself moves the pointer and
	// updates hover, and one round trip fewer is a third of a tap.
	if err := mouse(tab, input.DispatchMouseEventTypeMousePressed, x, y, 1); err != nil {
		return err
	}
	if hold > 0 {
		t := time.NewTimer(hold)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			// Release anyway so the page is not left with a held button.
			_ = mouse(context.WithoutCancel(tab), input.DispatchMouseEventTypeMouseReleased, x, y, 0)
			return ctx.Err()
		}
	}
	return mouse(tab, input.DispatchMouseEventTypeMouseReleased, x, y, 0)
}

// TapNormalized taps at (x, y) given as fractions of the viewport.
func (d *Device) TapNormalized(ctx context.Context, x, y float64, hold time.Duration) error {
	if x < 0 || x > 1 || y < 0 || y > 1 {
		return fmt.Errorf("tap at (%g, %g): coordinates are normalized, want 0..1", x, y)
	}
	return d.call(ctx, "tap", func(tab context.Context) error {
		return tapAt(ctx, tab, x*float64(d.width), y*float64(d.height), hold)
	})
}

// TapElement taps the centre of the element, holding for hold (a long
// press when non-zero), times times.
func (d *Device) TapElement(ctx context.Context, e *Element, times int, hold time.Duration) error {
	if times < 1 {
		times = 1
	}
	return d.call(ctx, "tap", func(tab context.Context) error {
		for range times {
			if err := tapAt(ctx, tab, e.Center.X, e.Center.Y, hold); err != nil {
				return err
			}
		}
		return nil
	})
}

// Swipe drags from one normalized point to another as a scroll gesture
// over duration: content follows the finger, as on a touch screen.
func (d *Device) Swipe(ctx context.Context, fromX, fromY, toX, toY float64, duration time.Duration) error {
	for _, v := range []float64{fromX, fromY, toX, toY} {
		if v < 0 || v > 1 {
			return fmt.Errorf("swipe: coordinates are normalized, want 0..1, got %g", v)
		}
	}
	w, h := float64(d.width), float64(d.height)
	dx, dy := (toX-fromX)*w, (toY-fromY)*h
	dist := dx*dx + dy*dy
	speed := int64(800)
	if duration > 0 && dist > 0 {
		speed = max(int64(math.Sqrt(dist)/duration.Seconds()), 100)
	}
	return d.call(ctx, "swipe", func(tab context.Context) error {
		return send(tab, input.SynthesizeScrollGesture, input.SynthesizeScrollGestureParams{
			X: fromX * w, Y: fromY * h, XDistance: dx, YDistance: dy,
			Speed: speed, GestureSourceType: input.GestureSourceTypeMouse, PreventFling: new(true),
		})
	})
}

// Scroll sends a mouse wheel at a normalized point, by dx, dy CSS pixels
// (positive dy scrolls down).
func (d *Device) Scroll(ctx context.Context, x, y, dx, dy float64) error {
	if x < 0 || x > 1 || y < 0 || y > 1 {
		return fmt.Errorf("scroll at (%g, %g): coordinates are normalized, want 0..1", x, y)
	}
	return d.call(ctx, "scroll", func(tab context.Context) error {
		return send(tab, wheelEvent, wheelParams{
			Type: input.DispatchMouseEventTypeMouseWheel, X: x * float64(d.width), Y: y * float64(d.height), DeltaX: dx, DeltaY: dy,
		})
	})
}

// wheelParams is Input.dispatchMouseEvent for a wheel: cdproto omits zero
// deltas, but Chromium requires both.
type wheelParams struct {
	Type   input.DispatchMouseEventType `json:"type"`
	X      float64                      `json:"x"`
	Y      float64                      `json:"y"`
	DeltaX float64                      `json:"deltaX"`
	DeltaY float64                      `json:"deltaY"`
}

var wheelEvent = proto.Command[wheelParams, proto.Empty]{Method: input.CommandDispatchMouseEvent}

// key describes one key for Input.dispatchKeyEvent.
type key struct {
	key, code string
	vk        int64
	text      string
}

// namedKeys are the keys the keyboard tool and type steps can press by name.
var namedKeys = map[string]key{
	"enter":       {"Enter", "Enter", 13, "\r"},
	"return":      {"Enter", "Enter", 13, "\r"},
	"tab":         {"Tab", "Tab", 9, ""},
	"escape":      {"Escape", "Escape", 27, ""},
	"esc":         {"Escape", "Escape", 27, ""},
	"backspace":   {"Backspace", "Backspace", 8, ""},
	"delete":      {"Delete", "Delete", 46, ""},
	"space":       {" ", "Space", 32, " "},
	"arrow-up":    {"ArrowUp", "ArrowUp", 38, ""},
	"arrow-down":  {"ArrowDown", "ArrowDown", 40, ""},
	"arrow-left":  {"ArrowLeft", "ArrowLeft", 37, ""},
	"arrow-right": {"ArrowRight", "ArrowRight", 39, ""},
	"home":        {"Home", "Home", 36, ""},
	"end":         {"End", "End", 35, ""},
	"page-up":     {"PageUp", "PageUp", 33, ""},
	"page-down":   {"PageDown", "PageDown", 34, ""},
	"insert":      {"Insert", "Insert", 45, ""},
	"f1":          {"F1", "F1", 112, ""},
	"f2":          {"F2", "F2", 113, ""},
	"f3":          {"F3", "F3", 114, ""},
	"f4":          {"F4", "F4", 115, ""},
	"f5":          {"F5", "F5", 116, ""},
	"f6":          {"F6", "F6", 117, ""},
	"f7":          {"F7", "F7", 118, ""},
	"f8":          {"F8", "F8", 119, ""},
	"f9":          {"F9", "F9", 120, ""},
	"f10":         {"F10", "F10", 121, ""},
	"f11":         {"F11", "F11", 122, ""},
	"f12":         {"F12", "F12", 123, ""},
}

func lookupKey(name string) (key, bool) {
	n := strings.ToLower(strings.TrimSpace(name))
	n = strings.ReplaceAll(n, "_", "-")
	if k, ok := namedKeys[n]; ok {
		return k, true
	}
	// Also accept DOM names such as ArrowUp or PageDown.
	for _, k := range namedKeys {
		if strings.EqualFold(k.key, name) {
			return k, true
		}
	}
	return key{}, false
}

func press(tab context.Context, k key) error {
	down := input.DispatchKeyEventParams{Type: input.DispatchKeyEventTypeKeyDown, Key: k.key, Code: k.code, WindowsVirtualKeyCode: k.vk, NativeVirtualKeyCode: k.vk, Text: k.text, UnmodifiedText: k.text}
	if k.text == "" {
		down.Type = input.DispatchKeyEventTypeRawKeyDown
	}
	if err := send(tab, input.DispatchKeyEvent, down); err != nil {
		return err
	}
	return send(tab, input.DispatchKeyEvent, input.DispatchKeyEventParams{Type: input.DispatchKeyEventTypeKeyUp, Key: k.key, Code: k.code, WindowsVirtualKeyCode: k.vk, NativeVirtualKeyCode: k.vk})
}

// PressKey presses one named key (enter, tab, escape, backspace,
// arrow-up, …), a single character or a chord (Control+A): Press once.
func (d *Device) PressKey(ctx context.Context, name string) error {
	return d.Press(ctx, name, 1)
}

// TypeText types text into the focused element, one key-down (with its
// text) and key-up per character, so pages see real key events.
func (d *Device) TypeText(ctx context.Context, text string) error {
	return d.call(ctx, "type", func(tab context.Context) error {
		return typeText(ctx, tab, text)
	})
}

func typeText(ctx, tab context.Context, text string) error {
	for _, r := range text {
		if err := ctx.Err(); err != nil {
			return err
		}
		var k key
		switch r {
		case '\n', '\r':
			k = namedKeys["enter"]
		case '\t':
			k = namedKeys["tab"]
		default:
			s := string(r)
			k = key{key: s, text: s}
			if r < 128 {
				k.vk = int64(strings.ToUpper(s)[0])
			}
		}
		if err := press(tab, k); err != nil {
			return err
		}
	}
	return nil
}

// Fill focuses the element matching sel (waiting up to timeout), selects
// its content, and inserts text in one input event, then presses Enter when
// submit is set. It returns the element, or nil when nothing matched.
func (d *Device) Fill(ctx context.Context, sel Selector, text string, submit bool, timeout time.Duration) (*Element, error) {
	el, err := d.Locate(ctx, sel, timeout)
	if err != nil || el == nil {
		return el, err
	}
	arg, err := jsArg(sel)
	if err != nil {
		return nil, err
	}
	err = d.call(ctx, "type", func(tab context.Context) error {
		focused, err := evaluate[*elementJSON](tab, fmt.Sprintf(`window.__toolserver.focusSelect(%s)`, arg))
		if err != nil {
			return err
		}
		if focused == nil {
			return fmt.Errorf("the element matching %s went away before typing", arg)
		}
		// The element where it is once focused (focusing scrolls it to
		// the centre), and the count Locate made.
		e := focused.element()
		e.Matches = el.Matches
		el = &e
		if text != "" {
			if err := send(tab, input.InsertText, input.InsertTextParams{Text: text}); err != nil {
				return err
			}
		}
		if submit {
			return press(tab, namedKeys["enter"])
		}
		return nil
	})
	return el, err
}
