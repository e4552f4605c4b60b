package cdp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/chromedp/chromedp"
)

// Frame is a rectangle normalized to the viewport (0..1 on each axis).
type Frame struct {
	X      float64 `json:"x"`
	Y      float64 `json:"y"`
	Width  float64 `json:"width"`
	Height float64 `json:"height"`
}

// Point is a position in CSS pixels.
type Point struct {
	X float64 `json:"x"`
	Y float64 `json:"y"`
}

// Element is one element of the page as a selector sees it.
type Element struct {
	ID string `json:"id,omitempty"`
	// IDs are every name an id selector matches, in the order DOM id,
	// data-testid, aria-label, name.
	IDs     []string `json:"ids,omitempty"`
	Text    string   `json:"text,omitempty"`
	Role    string   `json:"role,omitempty"`
	Tag     string   `json:"tag"`
	Frame   Frame    `json:"frame"`
	Visible bool     `json:"visible"`
	// Center is the element's centre in CSS pixels, where a tap lands.
	Center Point `json:"-"`
	// Matches counts, for an element Locate (or Fill) found, the elements
	// the selector matched as well as this one: the same score (all exact,
	// all by id), rendered (on-screen or not), none holding another. More
	// than one means Locate took the best of several. 0 where not counted.
	Matches int `json:"matches,omitempty"`
	// CoveredBy is, for an element Locate found, the element on top at its
	// centre when that is not the element or inside it: where a tap lands.
	CoveredBy *Element `json:"coveredBy,omitempty"`
}

// elementJSON mirrors Element with the centre included, as the agent
// returns it.
type elementJSON struct {
	ID      string   `json:"id"`
	IDs     []string `json:"ids"`
	Text    string   `json:"text"`
	Role    string   `json:"role"`
	Tag     string   `json:"tag"`
	Frame   Frame    `json:"frame"`
	Visible bool     `json:"visible"`
	Center  Point    `json:"center"`
	Matches int      `json:"matches"`
	// CoveredBy is what is on top at the centre (Element.CoveredBy).
	CoveredBy *elementJSON `json:"coveredBy"`
}

func (e elementJSON) element() Element {
	out := Element{ID: e.ID, IDs: e.IDs, Text: e.Text, Role: e.Role, Tag: e.Tag, Frame: e.Frame,
		Visible: e.Visible, Center: e.Center, Matches: e.Matches}
	if e.CoveredBy != nil {
		c := e.CoveredBy.element()
		out.CoveredBy = &c
	}
	return out
}

// Selector is what the in-page matcher (agent.js) looks for. Every field
// that is set must match:
//
//   - ID: exact, case-insensitive; the DOM id, data-testid, aria-label or
//     name.
//   - Text: a case-insensitive substring of the element's text.
//   - Matches: a JavaScript regular expression tested, case-sensitive,
//     against the element's own text.
//   - Role: the ARIA role, explicit or implied by the tag.
//   - Any: match every element (with a scope).
//   - Loose: Text is tried as an ID first, then as text (a bare "tap: Save").
//
// Within, After and Next narrow by another element: inside its frame,
// after it in reading order, or the nearest such follower. The zero
// Selector has no criteria and matches nothing.
type Selector struct {
	ID      string    `json:"id,omitempty"`
	Text    string    `json:"text,omitempty"`
	Matches string    `json:"matches,omitempty"`
	Role    string    `json:"role,omitempty"`
	Any     bool      `json:"any,omitempty"`
	Loose   bool      `json:"loose,omitempty"`
	Within  *Selector `json:"within,omitempty"`
	After   *Selector `json:"after,omitempty"`
	Next    *Selector `json:"next,omitempty"`
}

// evaluate runs a call of the in-page agent and decodes its result.
func evaluate[T any](tab context.Context, expr string) (T, error) {
	return chromedp.Run(tab, chromedp.Evaluate[T](expr, chromedp.EvalAwaitPromise))
}

// navGrace bounds how long an agent call that does not wait itself (a
// describe) waits for a document that replaced the one it ran in.
const navGrace = 5 * time.Second

// agentCall runs a call of the in-page agent that may take until
// deadline: expr gets the milliseconds left. A navigation that replaces
// the document while the call runs, or just as it starts (a tap that
// followed a link, then an await of the next page), ends it with an
// error that says nothing about the page; the call is made again in the
// new document with the time left. A page that is still navigating when
// the time is up answers as a call that timed out does: the zero T (no
// match, not idle), no error.
func agentCall[T any](tab context.Context, deadline time.Time, expr func(leftMs int64) string) (T, error) {
	for {
		v, err := evaluate[T](tab, expr(max(0, time.Until(deadline).Milliseconds())))
		if err == nil || !navigatedAway(err) {
			return v, err
		}
		var zero T
		if !time.Now().Before(deadline) {
			return zero, nil
		}
		if err := awaitAgent(tab, deadline); errors.Is(err, errStillNavigating) {
			return zero, nil
		} else if err != nil {
			return zero, err
		}
	}
}

// errStillNavigating is a page whose documents kept being replaced until
// the deadline.
var errStillNavigating = errors.New("the page was still navigating")

// navigatedAway tells an error of an evaluation that the document it ran
// in was replaced before it answered.
func navigatedAway(err error) bool {
	msg := err.Error()
	for _, s := range []string{"Inspected target navigated or closed", "Execution context was destroyed", "Cannot find context with specified id"} {
		if strings.Contains(msg, s) {
			return true
		}
	}
	return false
}

// awaitAgent waits until the page's current document answers with its
// agent (the agent is installed in every new document before its own
// scripts), checking every 10 ms, until deadline.
func awaitAgent(tab context.Context, deadline time.Time) error {
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		ok, err := evaluate[bool](tab, `typeof window.__toolserver === "object"`)
		switch {
		case err == nil && ok:
			return nil
		case err != nil && !navigatedAway(err):
			return err
		case !time.Now().Before(deadline):
			return errStillNavigating
		}
		select {
		case <-tick.C:
		case <-tab.Done():
			return context.Cause(tab)
		}
	}
}

func jsArg(v any) (string, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return "", fmt.Errorf("encode selector: %w", err)
	}
	return string(b), nil
}

// Describe returns the elements a selector can reach, in reading order.
func (d *Device) Describe(ctx context.Context) ([]Element, error) {
	var out []Element
	err := d.call(ctx, "describe", func(tab context.Context) error {
		raw, err := agentCall[[]elementJSON](tab, time.Now().Add(navGrace), func(int64) string { return `window.__toolserver.describe()` })
		if err != nil {
			return err
		}
		out = make([]Element, len(raw))
		for i, e := range raw {
			out[i] = e.element()
		}
		return nil
	})
	return out, err
}

// Locate waits up to timeout for the best element matching sel to be
// visible, scrolls it into view, and returns it. A nil Element with a nil
// error means nothing matched in time.
func (d *Device) Locate(ctx context.Context, sel Selector, timeout time.Duration) (*Element, error) {
	arg, err := jsArg(sel)
	if err != nil {
		return nil, err
	}
	var out *Element
	err = d.call(ctx, "locate", func(tab context.Context) error {
		raw, err := agentCall[*elementJSON](tab, time.Now().Add(timeout), func(left int64) string {
			return fmt.Sprintf(`window.__toolserver.waitLocate(%s, %d)`, arg, left)
		})
		if err != nil {
			return err
		}
		if raw != nil {
			e := raw.element()
			out = &e
		}
		return nil
	})
	return out, err
}

// Condition is an await or assert condition: the state of the elements
// matching Selector ("exists", "visible", "hidden" or "text"). For "text",
// Text is compared with the element's text by Match: "contains" (the
// default) and "equals" ignore case unless MatchCase, "matches" is a
// case-sensitive regex.
type Condition struct {
	Selector  Selector `json:"selector"`
	State     string   `json:"state"`
	Text      string   `json:"text,omitempty"`
	Match     string   `json:"match,omitempty"`
	MatchCase bool     `json:"matchCase,omitempty"`
}

// WaitResult tells whether a condition held and what was seen.
type WaitResult struct {
	OK      bool     `json:"ok"`
	Elapsed float64  `json:"elapsed"`
	Element *Element `json:"element,omitempty"`
}

// Wait checks cond now, then on each frame for the first second and after
// that on each change of the DOM or every 100 ms, until it holds or
// timeout passes; it returns OK false (not an error) on timeout.
func (d *Device) Wait(ctx context.Context, cond Condition, timeout time.Duration) (WaitResult, error) {
	arg, err := jsArg(cond)
	if err != nil {
		return WaitResult{}, err
	}
	var res WaitResult
	err = d.call(ctx, "await", func(tab context.Context) error {
		raw, err := agentCall[waitJSON](tab, time.Now().Add(timeout), func(left int64) string {
			return fmt.Sprintf(`window.__toolserver.waitFor(%s, %d)`, arg, left)
		})
		if err != nil {
			return err
		}
		res = WaitResult{OK: raw.OK, Elapsed: raw.Elapsed}
		if raw.El != nil {
			e := raw.El.element()
			res.Element = &e
		}
		return nil
	})
	return res, err
}

type waitJSON struct {
	OK      bool         `json:"ok"`
	Elapsed float64      `json:"elapsed"`
	El      *elementJSON `json:"el"`
}

// IdleResult tells whether the page went idle and after how long.
type IdleResult struct {
	Idle    bool    `json:"idle"`
	Elapsed float64 `json:"elapsedMs"`
}

// AwaitIdle waits until the document and its fonts are loaded and the DOM
// has not changed for stableFor, or until timeout (Idle false, no error).
func (d *Device) AwaitIdle(ctx context.Context, stableFor, timeout time.Duration) (IdleResult, error) {
	var res IdleResult
	err := d.call(ctx, "await-screen-idle", func(tab context.Context) error {
		var err error
		res, err = agentCall[IdleResult](tab, time.Now().Add(timeout), func(left int64) string {
			return fmt.Sprintf(`window.__toolserver.idle(%d, %d).then(r => ({idle: r.idle, elapsedMs: r.elapsed}))`, stableFor.Milliseconds(), left)
		})
		return err
	})
	return res, err
}
