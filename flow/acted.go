package flow

import (
	"fmt"
	"math"
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

// actedOn names el, whose frame is normalized to a w×h viewport.
func actedOn(el *Element, w, h int) *StepElement {
	if el == nil {
		return nil
	}
	px := func(f float64, size int) int { return int(math.Round(f * float64(size))) }
	return &StepElement{
		Description: describeElement(*el),
		Box:         Box{X: px(el.X, w), Y: px(el.Y, h), Width: px(el.Width, w), Height: px(el.Height, h)},
		Matches:     el.Matches,
	}
}

// severalWarning is the warning of a step whose selector matched several
// elements as well: Argent acts on the best match, and so does this
// runner, but the report says which one it took.
func severalWarning(verb string, sel *Selector, e *StepElement) string {
	return fmt.Sprintf("%s matched %d elements; %s the first: %s. Narrow the selector (id, within, next) to pick one; --strict makes this a failure", sel, e.Matches, verb, e)
}

// severalFailure is the reason of the same step in strict mode, which
// acts on nothing.
func severalFailure(verb string, sel *Selector, e *StepElement) outcome {
	return fail("%s matched %d elements and strict mode wants exactly one; it would have %s the first: %s. Narrow the selector (id, within, next) to pick one", sel, e.Matches, verb, e)
}

// coveredReason says that the point a step acted on was covered by
// another element (a toast, a banner, a modal's backdrop), so the tap
// landed on that one: a warning (Argent taps the point regardless), or
// in strict mode the reason of a failure that taps nothing.
func coveredReason(verb string, sel *Selector, e, top *StepElement, strict bool) string {
	if strict {
		return fmt.Sprintf("%s matched %s but %s covers its centre, so a tap would land there; strict mode taps nothing. Wait for it to go (await: { hidden: … }) or dismiss it first", sel, e, top)
	}
	return fmt.Sprintf("%s %s at the centre of %s, where %s is on top: the tap landed on that element. Wait for it to go (await: { hidden: … }) or dismiss it first; --strict makes this a failure", verb, sel, e, top)
}
