package run

import (
	"fmt"
	"math"

	"github.com/toolserver/toolserver/flow"
)

// actedOn names el, whose frame is normalized to a w×h viewport.
func actedOn(el *Element, w, h int) *flow.StepElement {
	if el == nil {
		return nil
	}
	px := func(f float64, size int) int { return int(math.Round(f * float64(size))) }
	return &flow.StepElement{
		Description: describeElement(*el),
		Box:         flow.Box{X: px(el.X, w), Y: px(el.Y, h), Width: px(el.Width, w), Height: px(el.Height, h)},
		Matches:     el.Matches,
	}
}

// severalWarning is the warning of a step whose selector matched several
// elements as well: Argent acts on the best match, and so does this
// runner, but the report says which one it took.
func severalWarning(verb string, sel *flow.Selector, e *flow.StepElement) string {
	return fmt.Sprintf("%s matched %d elements; %s the first: %s. Narrow the selector (id, within, next) to pick one; --strict makes this a failure", sel, e.Matches, verb, e)
}

// severalFailure is the reason of the same step in strict mode, which
// acts on nothing.
func severalFailure(verb string, sel *flow.Selector, e *flow.StepElement) outcome {
	return fail("%s matched %d elements and strict mode wants exactly one; it would have %s the first: %s. Narrow the selector (id, within, next) to pick one", sel, e.Matches, verb, e)
}

// coveredReason says that the point a step acted on was covered by
// another element (a toast, a banner, a modal's backdrop), so the tap
// landed on that one: a warning (Argent taps the point regardless), or
// in strict mode the reason of a failure that taps nothing.
func coveredReason(verb string, sel *flow.Selector, e, top *flow.StepElement, strict bool) string {
	if strict {
		return fmt.Sprintf("%s matched %s but %s covers its centre, so a tap would land there; strict mode taps nothing. Wait for it to go (await: { hidden: … }) or dismiss it first", sel, e, top)
	}
	return fmt.Sprintf("%s %s at the centre of %s, where %s is on top: the tap landed on that element. Wait for it to go (await: { hidden: … }) or dismiss it first; --strict makes this a failure", verb, sel, e, top)
}
