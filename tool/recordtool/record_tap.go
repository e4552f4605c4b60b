package recordtool

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/toolserver/toolserver/device/cdp"
	"github.com/toolserver/toolserver/device/cdprun"
	"github.com/toolserver/toolserver/flow"
)

// maxTextSelector is the longest element text recorded as a selector: a
// longer one is a paragraph, not a label, and breaks at the first copy
// edit.
const maxTextSelector = 80

// maxTapChecks bounds the selectors tried against the live page before a
// tap, one round trip each.
const maxTapChecks = 4

// tapStep records a coordinate gesture-tap as a tap: (or, with durationMs,
// a long-press:) of the element under the point, read from the page before
// the tap changes it. It returns nil for a gesture-tap it does not capture
// (other arguments than device, x, y and durationMs), which is then
// recorded as a tool: step; the warning is set when the step falls back to
// coordinates.
func (t *Tools) tapStep(ctx context.Context, args map[string]any) (*flow.Step, string) {
	for k := range args {
		switch k {
		case "device", "udid", "x", "y", "durationMs":
		default:
			return nil, ""
		}
	}
	x, okx := args["x"].(float64)
	y, oky := args["y"].(float64)
	if !okx || !oky || x < 0 || x > 1 || y < 0 || y > 1 {
		return nil, "" // the live call reports the bad argument
	}
	hold, _ := args["durationMs"].(float64)
	build := func(sel *flow.Selector) *flow.Step {
		point := sel == nil
		if hold > 0 {
			return &flow.Step{Directive: &flow.LongPress{On: sel, Point: point, X: x, Y: y, Duration: millis(hold)}}
		}
		return &flow.Step{Directive: &flow.Tap{On: sel, Point: point, X: x, Y: y, Times: 1}}
	}
	coords := func(why string) (*flow.Step, string) {
		return build(nil), fmt.Sprintf("recorded the tap at (%s, %s) as coordinates: %s. A coordinate tap breaks when the layout changes; give the element an id or data-testid and record it again.", num(x), num(y), why)
	}

	id, _ := args["device"].(string)
	if id == "" {
		id, _ = args["udid"].(string)
	}
	if t.Pool == nil || id == "" {
		return coords("no device to read the page from")
	}
	d, ok := t.Pool.Lookup(id)
	if !ok {
		return coords("the device was not booted before the tap, so there was no page to read")
	}
	els, err := d.Describe(ctx)
	if err != nil {
		return coords("the page could not be read (" + err.Error() + ")")
	}
	cands, region, why := tapSelectors(els, x, y)
	for i, c := range cands {
		if i == maxTapChecks {
			break
		}
		// A replay taps the centre of the best visible match of the
		// selector (the runner's Locate); check now, without waiting and
		// without scrolling, that it lands where this tap did.
		res, err := d.Wait(ctx, cdp.Condition{Selector: cdprun.Selector(c), State: "visible"}, 0)
		if err != nil || !res.OK || res.Element == nil || !landsIn(res.Element.Frame, region) {
			continue
		}
		return build(c), ""
	}
	if why == "" {
		why = "no id or text of the elements under that point finds that element again (another element matches first)"
	}
	return coords(why)
}

// tapSelectors returns the selectors that may find again the element a
// tap at (x, y) hits, best first, and the region a replay's tap must land
// in to be the same tap. The element hit is the smallest visible element
// of the description that contains the point. When a control (a button, a
// link, a field) contains it, the control owns the click: a tap anywhere
// on it is the same tap, since the event reaches the control's handler
// from whichever child it lands on, so the region is the control's frame;
// otherwise it is the frame of the element hit. A selector may come from
// any element under the point whose centre — where a replay taps — lies
// in that region (a button around an icon, never the page section around
// the button). Stable ids come first, then texts, smallest element first
// within each: an id survives copy edits and translations, and text
// outlives an id that looks generated. why says, when there is no
// candidate, what was missing.
func tapSelectors(els []cdp.Element, x, y float64) (cands []*flow.Selector, region cdp.Frame, why string) {
	var under []cdp.Element
	for _, e := range els {
		f := e.Frame
		if e.Visible && f.Width > 0 && f.Height > 0 && x >= f.X && x <= f.X+f.Width && y >= f.Y && y <= f.Y+f.Height {
			under = append(under, e)
		}
	}
	if len(under) == 0 {
		return nil, cdp.Frame{}, "no element that a selector can name is under that point"
	}
	slices.SortStableFunc(under, func(a, b cdp.Element) int {
		aa, ab := a.Frame.Width*a.Frame.Height, b.Frame.Width*b.Frame.Height
		switch {
		case aa < ab:
			return -1
		case aa > ab:
			return 1
		}
		return 0
	})
	region = under[0].Frame
	for _, e := range under {
		if control(e) {
			region = e.Frame
			break
		}
	}
	var texts []*flow.Selector
	seen := map[string]bool{}
	add := func(list *[]*flow.Selector, s *flow.Selector) {
		if k := s.String(); !seen[k] {
			seen[k] = true
			*list = append(*list, s)
		}
	}
	generated := ""
	for _, e := range under {
		if !landsIn(e.Frame, region) {
			continue
		}
		switch {
		case e.ID == "":
		case generatedID(e.ID):
			if generated == "" {
				generated = e.ID
			}
		default:
			add(&cands, &flow.Selector{ID: e.ID})
		}
		if textSelectable(e) {
			add(&texts, &flow.Selector{Text: e.Text})
		}
	}
	cands = append(cands, texts...)
	if len(cands) == 0 {
		why = "the element under that point has no id and no text"
		if generated != "" {
			why = fmt.Sprintf("the element under that point has only an id that looks generated (%q) and no text", generated)
		}
	}
	return cands, region, why
}

// control reports whether e is an element that owns a click on any of its
// children: a control by its tag or its (explicit or implied) ARIA role.
func control(e cdp.Element) bool {
	switch e.Tag {
	case "button", "a", "input", "select", "textarea", "label", "summary", "option":
		return true
	}
	switch e.Role {
	case "button", "link", "checkbox", "radio", "switch", "tab", "menuitem", "menuitemcheckbox", "menuitemradio",
		"option", "textbox", "searchbox", "combobox", "slider", "spinbutton", "treeitem":
		return true
	}
	return false
}

// landsIn reports whether the centre of frame f lies inside frame in.
func landsIn(f, in cdp.Frame) bool {
	const eps = 1e-9
	cx, cy := f.X+f.Width/2, f.Y+f.Height/2
	return cx >= in.X-eps && cx <= in.X+in.Width+eps && cy >= in.Y-eps && cy <= in.Y+in.Height+eps
}

// textSelectable reports whether an element's text can name it. A form
// field's "text" is its value or placeholder, which typing changes, so it
// never does; nor does a text too long to be a label.
func textSelectable(e cdp.Element) bool {
	switch e.Tag {
	case "input", "textarea", "select":
		return false
	}
	return strings.TrimSpace(e.Text) != "" && utf8.RuneCountInString(e.Text) <= maxTextSelector
}

// Ids that frameworks generate differ between builds or page loads, so a
// flow that names one breaks on the next run. generatedID recognises the
// common shapes:
//
//   - React's useId (":r1:", "«r1»") and anything else with ':' or '«';
//   - a run of four or more digits ("ember1234", "input-20931");
//   - a hex run of eight or more characters mixing digits and letters (a
//     hash or a UUID: "a1b2c3d4", "550e8400-e29b-…");
//   - a segment of five or more characters that switches between letters
//     and digits three or more times ("x7f3k9", css-in-js "1n7v3ny");
//   - a framework counter: a known prefix with a digit ("ember12",
//     "mui-3", "react-select-2-input", "mat-input-0", "radix-7");
//   - more than 60 characters.
//
// It errs towards "generated": a false positive costs a text selector or a
// coordinate warning, a false negative a flow that breaks later.
func generatedID(id string) bool {
	if len(id) > 60 || strings.ContainsAny(id, ":«»") {
		return true
	}
	if digitRun().MatchString(id) || frameworkID().MatchString(id) {
		return true
	}
	for _, h := range hexRun().FindAllString(id, -1) {
		if strings.IndexFunc(h, unicode.IsDigit) >= 0 && strings.IndexFunc(h, unicode.IsLetter) >= 0 {
			return true
		}
	}
	for _, seg := range strings.FieldsFunc(id, func(r rune) bool { return strings.ContainsRune("-_. ", r) }) {
		if len(seg) >= 5 && switches(seg) >= 3 {
			return true
		}
	}
	return false
}

var (
	digitRun    = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`[0-9]{4,}`) })
	hexRun      = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?i)[0-9a-f]{8,}`) })
	frameworkID = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?i)^(ember|yui_|ext-gen|ext-comp|mui-|radix-|headlessui-|react-aria|react-select-|rc-|downshift-|cdk-|mat-|__next|jsx-)[^0-9]*[0-9]`)
	})
)

// switches counts the changes between letters and digits in s.
func switches(s string) int {
	n, prev := 0, 0 // 1 letter, 2 digit
	for _, r := range s {
		cur := 0
		switch {
		case unicode.IsDigit(r):
			cur = 2
		case unicode.IsLetter(r):
			cur = 1
		}
		if cur != 0 && prev != 0 && cur != prev {
			n++
		}
		if cur != 0 {
			prev = cur
		}
	}
	return n
}
