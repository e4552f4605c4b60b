package flow

import (
	"context"
	"time"
)

// Device is what the runner needs of a device. device/cdp satisfies it
// through the flowdevice adapter; the runner never talks CDP itself.
type Device interface {
	// ID is the device id the report names, such as chromium-cdp-1280x800.
	ID() string
	// Size is the viewport in CSS pixels, equal to a capture's pixels.
	Size() (width, height int)
	// Launch opens url in a fresh browser context and waits for the load.
	Launch(ctx context.Context, url string) error
	// Locate waits up to timeout for the best visible match of sel and
	// scrolls it into view; nil, nil when nothing matched in time.
	Locate(ctx context.Context, sel *Selector, timeout time.Duration) (*Element, error)
	// Tap presses and releases at a point in CSS pixels, times times,
	// holding each press for hold.
	Tap(ctx context.Context, x, y float64, times int, hold time.Duration) error
	// Fill focuses the match of sel, replaces its content with text and
	// presses Enter when submit; nil, nil when nothing matched in time.
	Fill(ctx context.Context, sel *Selector, text string, submit bool, timeout time.Duration) (*Element, error)
	// Scroll sends a wheel at a normalized point by dx, dy CSS pixels.
	Scroll(ctx context.Context, x, y, dx, dy float64) error
	// Check waits up to timeout for a UI condition (exists, visible,
	// hidden, text) and tells whether it held and what matched.
	Check(ctx context.Context, cond Condition, timeout time.Duration) (Outcome, error)
	// Idle waits until the page is still for stableFor, up to timeout.
	Idle(ctx context.Context, stableFor, timeout time.Duration) (bool, error)
	// Describe lists the page's elements, for messages about a selector
	// that matched nothing.
	Describe(ctx context.Context) ([]Element, error)
	// Capture settles the page and captures the viewport as PNG until two
	// consecutive captures agree (stable) or maxCaptures is reached.
	Capture(ctx context.Context, maxCaptures int) (png []byte, stable bool, err error)
}

// Element is a matched element.
type Element struct {
	ID, Text, Role string
	// IDs are every name an id selector matches (DOM id, data-testid,
	// aria-label, name).
	IDs     []string
	Visible bool
	// Frame is normalized to the viewport (0..1).
	X, Y, Width, Height float64
	// CenterX and CenterY are where a tap lands, in CSS pixels.
	CenterX, CenterY float64
}

// Outcome is the result of a Check.
type Outcome struct {
	OK bool
	// Element is what the condition looked at, when something matched.
	Element *Element
}

// ToolCaller calls a tool of the server by name for a tool: step.
type ToolCaller func(ctx context.Context, name string, args map[string]any) (any, error)

// ArtifactSink keeps a file a step produced (baseline, current and diff
// images of a snapshot) and returns what the report shows for it: an
// artifact handle or a path.
type ArtifactSink interface {
	Put(flow, filename, mimeType string, data []byte) (Artifact, error)
}
