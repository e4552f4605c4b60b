package run

import (
	"context"
	"fmt"

	"github.com/toolserver/toolserver/flow"
	"github.com/toolserver/toolserver/snapshot"
)

// maxNamedRegions bounds the regions whose element is named: the largest
// ones say where a change is; the rest are in the diff image.
const maxNamedRegions = 3

// where places a capture in the viewport, to name the elements under its
// regions: the capture's top-left corner in CSS pixels (a crop's corner),
// and the viewport size the elements' normalized boxes are fractions of.
type where struct {
	X, Y, Width, Height int
}

// changedRegions names, for each of the largest regions, the innermost
// element of the page whose box covers it: what no anchor gives, since a
// browser has its DOM where Argent has OCR of a phone screen. at is nil
// when the capture is not placed in the viewport (a full page), and the
// regions go unnamed.
func changedRegions(ctx context.Context, dev Device, regions []snapshot.Region, at *where) []flow.ChangedRegion {
	out := make([]flow.ChangedRegion, len(regions))
	for i, g := range regions {
		out[i].Region = flow.Region(g)
	}
	if len(regions) == 0 || at == nil || dev == nil {
		return out
	}
	els, err := dev.Describe(ctx)
	if err != nil {
		return out
	}
	for i := range out {
		if i == maxNamedRegions {
			break
		}
		if e := coveringElement(els, regions[i], at); e != nil {
			out[i].Element = describeElement(*e)
		}
	}
	return out
}

// coveringElement returns the visible element of the smallest box that
// contains the region; when none contains all of it, the smallest that
// contains its centre; nil when none does. A box may miss the region by
// a pixel of rounding.
func coveringElement(els []Element, g snapshot.Region, at *where) *Element {
	x0, y0 := float64(at.X+g.X), float64(at.Y+g.Y)
	x1, y1 := x0+float64(g.Width), y0+float64(g.Height)
	cx, cy := (x0+x1)/2, (y0+y1)/2
	var whole, centre *Element
	var wholeArea, centreArea float64
	for i := range els {
		e := &els[i]
		if !e.Visible {
			continue
		}
		ex0, ey0 := e.X*float64(at.Width), e.Y*float64(at.Height)
		ex1, ey1 := ex0+e.Width*float64(at.Width), ey0+e.Height*float64(at.Height)
		area := (ex1 - ex0) * (ey1 - ey0)
		if area <= 0 {
			continue
		}
		if ex0-1 <= x0 && ey0-1 <= y0 && x1 <= ex1+1 && y1 <= ey1+1 && (whole == nil || area < wholeArea) {
			whole, wholeArea = e, area
		}
		if ex0 <= cx && cx <= ex1 && ey0 <= cy && cy <= ey1 && (centre == nil || area < centreArea) {
			centre, centreArea = e, area
		}
	}
	if whole != nil {
		return whole
	}
	return centre
}

// regionPhrase is how a reason names a region: "124x35 at (651, 384)",
// and the element there when known.
func regionPhrase(g flow.ChangedRegion) string {
	s := fmt.Sprintf("%dx%d at (%d, %d)", g.Width, g.Height, g.X, g.Y)
	if g.Element != "" {
		s += ", on " + g.Element
	}
	return s
}
