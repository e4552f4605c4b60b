package devicetool

import (
	"context"
	"time"

	"github.com/toolserver/toolserver/device/cdp"
	"github.com/toolserver/toolserver/fault"
	"github.com/toolserver/toolserver/tool"
)

func norm(desc string) *tool.Schema {
	return tool.Number(desc+" (normalized 0.0–1.0, not pixels)", 0, 1)
}

func (t *Tools) gestureTap() *tool.Tool {
	return &tool.Tool{
		Name:        "gesture-tap",
		Description: "Tap the page at normalized coordinates (fractions of the viewport, 0.0–1.0): a mouse press and release at that point.",
		InputSchema: tool.Object(deviceProps(map[string]*tool.Schema{
			"x":          norm("Horizontal position"),
			"y":          norm("Vertical position"),
			"durationMs": tool.Number("Hold time in ms (a long press when above 0)", 0, 60000),
		}), "x", "y"),
		Run: onDevice(t, nil, func(ctx context.Context, d *cdp.Device, a tapArgs) (any, error) {
			ts := time.Now().UnixMilli()
			if err := d.TapNormalized(ctx, a.X, a.Y, ms(a.DurationMs, 0)); err != nil {
				return nil, err
			}
			return map[string]any{"tapped": true, "timestampMs": ts}, nil
		}),
	}
}

func (t *Tools) gestureSwipe() *tool.Tool {
	return &tool.Tool{
		Name:        "gesture-swipe",
		Description: "Swipe between two normalized points as a touch screen would: content follows the pointer, so a swipe up (fromY > toY) scrolls the page down.",
		InputSchema: tool.Object(deviceProps(map[string]*tool.Schema{
			"fromX":      norm("Start x"),
			"fromY":      norm("Start y"),
			"toX":        norm("End x"),
			"toY":        norm("End y"),
			"durationMs": tool.Number("Gesture duration in ms (default 300)", 0, 60000),
		}), "fromX", "fromY", "toX", "toY"),
		Run: onDevice(t, nil, func(ctx context.Context, d *cdp.Device, a swipeArgs) (any, error) {
			ts := time.Now().UnixMilli()
			if err := d.Swipe(ctx, a.FromX, a.FromY, a.ToX, a.ToY, ms(a.DurationMs, 300*time.Millisecond)); err != nil {
				return nil, err
			}
			return map[string]any{"swiped": true, "timestampMs": ts}, nil
		}),
	}
}

func (t *Tools) gestureScroll() *tool.Tool {
	return &tool.Tool{
		Name:        "gesture-scroll",
		Description: "Scroll with the mouse wheel at a normalized point by deltaX, deltaY CSS pixels (positive deltaY scrolls down).",
		InputSchema: tool.Object(deviceProps(map[string]*tool.Schema{
			"x":      norm("Horizontal position (default 0.5)"),
			"y":      norm("Vertical position (default 0.5)"),
			"deltaX": tool.Number("Horizontal scroll in CSS pixels", -100000, 100000),
			"deltaY": tool.Number("Vertical scroll in CSS pixels", -100000, 100000),
		})),
		Run: onDevice(t, nil, func(ctx context.Context, d *cdp.Device, a scrollArgs) (any, error) {
			x, y := 0.5, 0.5
			if a.X != nil {
				x = *a.X
			}
			if a.Y != nil {
				y = *a.Y
			}
			if err := d.Scroll(ctx, x, y, a.DeltaX, a.DeltaY); err != nil {
				return nil, err
			}
			return map[string]any{"scrolled": true}, nil
		}),
	}
}

func (t *Tools) keyboard() *tool.Tool {
	return &tool.Tool{
		Name:        "keyboard",
		Description: "Type text into the focused element (a key-down and key-up per character) and/or press one key: a named key (enter, tab, escape, backspace, delete, insert, space, arrow-up, arrow-down, arrow-left, arrow-right, home, end, page-up, page-down, f1–f12; DOM names such as ArrowUp too), a single character, or either after modifiers joined by + (Control+A, Shift+Tab, Meta+Enter).",
		InputSchema: tool.Object(deviceProps(map[string]*tool.Schema{
			"text":    tool.String("Text to type character by character."),
			"key":     tool.String("A key to press after the text: a named key, a single character, or a chord such as Control+A."),
			"delayMs": tool.Number("Accepted for compatibility; keys are sent back to back.", 0, 10000),
		})),
		Run: onDevice(t, func(a keyboardArgs) error {
			if a.Text == "" && a.Key == "" {
				return fault.FieldError("text", "give text, key, or both")
			}
			return nil
		}, func(ctx context.Context, d *cdp.Device, a keyboardArgs) (any, error) {
			keys := 0
			if a.Text != "" {
				if err := d.TypeText(ctx, a.Text); err != nil {
					return nil, err
				}
				keys += len([]rune(a.Text))
			}
			if a.Key != "" {
				if err := d.PressKey(ctx, a.Key); err != nil {
					return nil, &fault.Error{Kind: fault.Validation, Field: "key", Message: err.Error()}
				}
				keys++
			}
			typed := a.Text
			if typed == "" {
				typed = a.Key
			}
			return map[string]any{"typed": typed, "keys": keys}, nil
		}),
	}
}

func (t *Tools) awaitUIElement() *tool.Tool {
	sel := tool.Object(map[string]*tool.Schema{
		"text":       tool.String("Case-insensitive substring of the element's text."),
		"identifier": tool.String("Exact, case-insensitive DOM id, data-testid, aria-label or name."),
		"id":         tool.String("Same as identifier."),
		"role":       tool.String("ARIA role, explicit or implied by the tag."),
	})
	return &tool.Tool{
		Name:        "await-ui-element",
		Description: "Wait until an element reaches a state (exists, visible, hidden, or text containing expectedText) or the timeout passes. Returns { success, elapsed }; success false (not an error) when the condition never held.",
		LongRunning: true,
		InputSchema: tool.Object(deviceProps(map[string]*tool.Schema{
			"condition":      tool.Enum("What to wait for.", "exists", "visible", "hidden", "text"),
			"selector":       sel,
			"expectedText":   tool.String("For condition text: a case-insensitive substring the element must contain."),
			"timeoutMs":      tool.Integer("Maximum wait in ms (default 5000).", 1, 120000),
			"pollIntervalMs": tool.Integer("Accepted for compatibility; the page checks on every frame.", 0, 5000),
			"bundleId":       tool.String("Ignored on Chromium."),
		}), "condition", "selector"),
		Run: onDevice(t, func(a awaitArgs) error {
			if a.spec() == (cdp.Selector{}) {
				return fault.FieldError("selector", "selector needs at least one of text, identifier or role")
			}
			if a.Condition == "text" && a.ExpectedText == "" {
				return fault.FieldError("expectedText", "condition text requires expectedText")
			}
			return nil
		}, func(ctx context.Context, d *cdp.Device, a awaitArgs) (any, error) {
			res, err := d.Wait(ctx, cdp.Condition{Selector: a.spec(), State: a.Condition, Text: a.ExpectedText}, ms(a.TimeoutMs, 5*time.Second))
			if err != nil {
				return nil, err
			}
			out := map[string]any{"success": res.OK, "elapsed": int64(res.Elapsed)}
			if res.Element != nil {
				out["element"] = res.Element
			}
			if !res.OK {
				out["note"] = waitNote(a.Condition, res)
			}
			return out, nil
		}),
	}
}

func waitNote(cond string, res cdp.WaitResult) string {
	switch {
	case cond == "hidden":
		return "an element matching the selector was still visible at timeout"
	case res.Element == nil:
		return "no element matched the selector before timeout"
	case cond == "text":
		return "element matched but its text was \"" + res.Element.Text + "\""
	default:
		return "element(s) matched but none was visible before timeout"
	}
}

func (t *Tools) awaitScreenIdle() *tool.Tool {
	return &tool.Tool{
		Name:        "await-screen-idle",
		Description: "Wait until the page is idle: loaded, fonts ready, and no DOM change for stableForMs. Never fails on a busy page: returns idle false after timeoutMs.",
		LongRunning: true,
		InputSchema: tool.Object(deviceProps(map[string]*tool.Schema{
			"stableForMs": tool.Integer("Quiet time that counts as idle (default 300).", 0, 60000),
			"timeoutMs":   tool.Integer("Maximum wait in ms (default 5000).", 1, 120000),
		})),
		Run: onDevice(t, nil, func(ctx context.Context, d *cdp.Device, a idleArgs) (any, error) {
			return d.AwaitIdle(ctx, ms(a.StableForMs, 300*time.Millisecond), ms(a.TimeoutMs, 5*time.Second))
		}),
	}
}

type tapArgs struct {
	deviceArgs
	X          float64 `json:"x"`
	Y          float64 `json:"y"`
	DurationMs float64 `json:"durationMs"`
}

type swipeArgs struct {
	deviceArgs
	FromX      float64 `json:"fromX"`
	FromY      float64 `json:"fromY"`
	ToX        float64 `json:"toX"`
	ToY        float64 `json:"toY"`
	DurationMs float64 `json:"durationMs"`
}

type scrollArgs struct {
	deviceArgs
	X      *float64 `json:"x"`
	Y      *float64 `json:"y"`
	DeltaX float64  `json:"deltaX"`
	DeltaY float64  `json:"deltaY"`
}

type keyboardArgs struct {
	deviceArgs
	Text string `json:"text"`
	Key  string `json:"key"`
}

type awaitArgs struct {
	deviceArgs
	Condition string `json:"condition"`
	Selector  struct {
		Text       string `json:"text"`
		Identifier string `json:"identifier"`
		ID         string `json:"id"`
		Role       string `json:"role"`
	} `json:"selector"`
	ExpectedText string  `json:"expectedText"`
	TimeoutMs    float64 `json:"timeoutMs"`
}

// spec is the in-page matcher's selector: identifier (or id) exact, text a
// substring, role exact.
func (a awaitArgs) spec() cdp.Selector {
	id := a.Selector.Identifier
	if id == "" {
		id = a.Selector.ID
	}
	return cdp.Selector{ID: id, Text: a.Selector.Text, Role: a.Selector.Role}
}

type idleArgs struct {
	deviceArgs
	StableForMs float64 `json:"stableForMs"`
	TimeoutMs   float64 `json:"timeoutMs"`
}
