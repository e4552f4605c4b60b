package run

import (
	"context"
	"time"

	"github.com/toolserver/toolserver/flow"
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
	Locate(ctx context.Context, sel *flow.Selector, timeout time.Duration) (*Element, error)
	// Tap presses and releases at a point in CSS pixels, times times,
	// holding each press for hold.
	Tap(ctx context.Context, x, y float64, times int, hold time.Duration) error
	// Fill focuses the match of sel, replaces its content with text and
	// presses Enter when submit; nil, nil when nothing matched in time.
	Fill(ctx context.Context, sel *flow.Selector, text string, submit bool, timeout time.Duration) (*Element, error)
	// Press presses key times times on the focused element: a name of
	// KeyNames or a single character, after modifiers joined by "+"
	// (Control+A), as Press.Key spells it.
	Press(ctx context.Context, key string, times int) error
	// Scroll sends a wheel at a normalized point by dx, dy CSS pixels.
	Scroll(ctx context.Context, x, y, dx, dy float64) error
	// Check waits up to timeout for a UI condition (exists, visible,
	// hidden, text) and tells whether it held and what matched.
	Check(ctx context.Context, cond flow.Condition, timeout time.Duration) (Outcome, error)
	// Idle waits until the page is still for stableFor, up to timeout.
	Idle(ctx context.Context, stableFor, timeout time.Duration) (bool, error)
	// Describe lists the page's elements, for messages about a selector
	// that matched nothing.
	Describe(ctx context.Context) ([]Element, error)
	// Capture settles the page, applies the options (hide, style, mask),
	// captures as PNG until two consecutive captures agree (stable) or
	// opts.MaxCaptures is reached, and undoes in the page all it changed
	// to settle and dress it.
	Capture(ctx context.Context, opts CaptureOptions) (Shot, error)
}

// CaptureOptions say what a Capture captures and how.
type CaptureOptions struct {
	// MaxCaptures bounds the captures (at least 2 when Accept is nil or
	// refuses the first).
	MaxCaptures int
	// Clip captures only this region of the viewport, in whole CSS
	// pixels, as CDP's clip does; nil captures the viewport.
	Clip *Rect
	// FullPage captures the whole scrollable page (Clip is then nil).
	FullPage bool
	// Mask paints each match of each selector with MaskColor.
	Mask      []*flow.Selector
	MaskColor string
	// Hide makes each match of each selector visibility: hidden.
	Hide []*flow.Selector
	// Ignore finds the box of each match of each selector without
	// painting it: the shot's Ignored.
	Ignore []*flow.Selector
	// Style is CSS added to the page for the capture.
	Style string
	// Accept, when set, is shown the first capture; when it returns true
	// that capture is the shot (Playwright's fast path: a frame that
	// matches its baseline is itself evidence the page settled).
	// ignored are the shot's Ignored.
	Accept func(png []byte, ignored []Rect) bool
}

// Rect is a region in whole CSS pixels.
type Rect = flow.Rect

// Shot is what a Capture took.
type Shot struct {
	PNG []byte
	// Stable tells that two consecutive captures agreed, or that Accept
	// took the first.
	Stable bool
	// Accepted tells that Accept took the first capture.
	Accepted bool
	// Captures counts the captures taken.
	Captures int
	// Ignored are the boxes of the Ignore elements in the shot's pixels.
	Ignored []Rect
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
	// Matches counts, for an element Locate or Fill found, the elements
	// its selector matched as well as this one (not the wrappers around
	// them); above 1 the device took the best of several. 0 where not
	// counted.
	Matches int
	// CoveredBy is, for an element Locate found, the element on top at
	// its centre when that is neither it nor inside it (a toast, a
	// banner): a tap there lands on CoveredBy.
	CoveredBy *Element
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
	Put(flow, filename, mimeType string, data []byte) (flow.Artifact, error)
}
