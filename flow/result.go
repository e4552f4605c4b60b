package flow

import (
	"fmt"
)

// StepElement is the element a step acted on (a tap, a long-press, a
// type, a scroll-to), named in its report so a reader sees which one it
// was: a selector that matched the wrong card reads differently from
// the right one. It is this project's addition to Argent's report.
type StepElement struct {
	// Description is the element as our selectors print it:
	// id="pay" role="button" text="Pay now".
	Description string `json:"description"`
	// Box is the element's box in the viewport when the step acted, in
	// CSS pixels rounded to whole ones.
	Box Box `json:"box"`
	// Matches is how many elements the selector matched as well as this
	// one (Element.Matches); above 1 the step took the best of several.
	Matches int `json:"matches,omitempty"`
}

// Box is a rectangle in whole CSS pixels.
type Box struct {
	X      int `json:"x"`
	Y      int `json:"y"`
	Width  int `json:"width"`
	Height int `json:"height"`
}

// String renders the box as (x, y, w×h).
func (b Box) String() string { return fmt.Sprintf("(%d, %d, %d×%d)", b.X, b.Y, b.Width, b.Height) }

// String renders the element as the report's line shows it:
// role="button" text="Add to basket" (24, 310, 160×36).
func (e *StepElement) String() string {
	if e == nil {
		return ""
	}
	return e.Description + " " + e.Box.String()
}

// ChangedRegion is one changed area of a snapshot comparison, with the
// element the page has there.
type ChangedRegion struct {
	Region
	// Element describes the innermost element whose box covers the area,
	// as a selector that matched nothing lists elements (id="pay"
	// role="button" text="Pay now"); empty when no element covers it.
	Element string `json:"element,omitempty"`
}

// Limits are what one snapshot is compared with, each with where it came
// from: the step's own option, else the flags of flow run, else
// .argent/toolserver.yaml, else the default: on a chromium-cdp-* device
// with no count set anywhere the strict default (Strict: 0 pixels, at
// threshold 0.01 with anti-aliased pixels counted), else Argent's
// maxMismatch 0.5 %, pixelmatch's threshold 0.1, no pixel count.
type Limits struct {
	// Strict tells that the strict default decided: maxMismatch and
	// maxDiffPixels are 0 and come from "default on chromium".
	Strict          bool    `json:"strict,omitempty"`
	MaxMismatch     float64 `json:"maxMismatch"`
	MaxMismatchFrom string  `json:"maxMismatchFrom"`
	// MaxDiffPixels is nil when no level set one.
	MaxDiffPixels     *int    `json:"maxDiffPixels,omitempty"`
	MaxDiffPixelsFrom string  `json:"maxDiffPixelsFrom,omitempty"`
	Threshold         float64 `json:"threshold"`
	ThresholdFrom     string  `json:"thresholdFrom"`
	// Metric and WindowSize are the comparison's, with where each came
	// from; empty and 0 for the defaults (yiq, no window).
	Metric         string `json:"metric,omitempty"`
	MetricFrom     string `json:"metricFrom,omitempty"`
	WindowSize     int    `json:"windowSize,omitempty"`
	WindowSizeFrom string `json:"windowSizeFrom,omitempty"`
}

// Region is one connected area of differing pixels in a comparison: its
// bounding box in the compared images' pixels and how many of its pixels
// differ (the fields of snapshot.Region, which the runner copies).
type Region struct {
	X      int `json:"x"`
	Y      int `json:"y"`
	Width  int `json:"width"`
	Height int `json:"height"`
	Pixels int `json:"pixels"`
}
