package flow

import (
	"fmt"

	"go.yaml.in/yaml/v3"
)

// MaxIgnoreRegions bounds a snapshot's ignoreRegions list, as
// MaxSnapshotSelectors bounds its selector lists.
const MaxIgnoreRegions = 32

// maxIgnoreSide bounds a coordinate or a side of an ignore region: no
// capture a Chromium device makes is larger (a full page is at most 64
// megapixels).
const maxIgnoreSide = 1 << 26

// Rect is a rectangle of a capture, in whole pixels from its top left.
type Rect struct {
	X      int `json:"x"`
	Y      int `json:"y"`
	Width  int `json:"width"`
	Height int `json:"height"`
}

// ignoreOptions reads what a snapshot leaves out of its comparison:
// ignore: selectors, whose elements' boxes are found at the capture, and
// ignoreRegions: rectangles of the capture. Neither paints anything: the
// capture and the baseline keep those pixels, the comparison skips them.
func (p *parser) ignoreOptions(o *object, s *Snapshot) *Error {
	if o.has("ignore") {
		sels, err := p.selectorList(o.get("ignore"), "ignore", "leave out of the comparison")
		if err != nil {
			return err
		}
		s.Ignore = sels
	}
	if v := o.get("ignoreRegions"); v != nil {
		rs, err := ignoreRegionsValue(v)
		if err != nil {
			return err
		}
		s.IgnoreRegions = rs
	}
	return nil
}

// ignoreRegionsValue reads ignoreRegions: a list of {x, y, width, height}
// in pixels of the capture, each item named ignoreRegions[N] from 1.
func ignoreRegionsValue(v *yaml.Node) ([]Rect, *Error) {
	v = resolve(v)
	const shape = "ignoreRegions is a list of rectangles of the capture in pixels, e.g. ignoreRegions: [{ x: 0, y: 0, width: 200, height: 40 }]"
	switch {
	case v == nil || v.Kind != yaml.SequenceNode:
		return nil, errAt(v, ProblemShape, "%s, got %s", shape, describe(v))
	case len(v.Content) == 0:
		return nil, errAt(v, ProblemShape, "ignoreRegions is an empty list; list the rectangles to leave out or drop ignoreRegions")
	case len(v.Content) > MaxIgnoreRegions:
		return nil, errAt(v, ProblemValue, "ignoreRegions lists %d rectangles; a snapshot takes at most %d", len(v.Content), MaxIgnoreRegions)
	}
	out := make([]Rect, 0, len(v.Content))
	for i, it := range v.Content {
		where := fmt.Sprintf("ignoreRegions[%d]", i+1)
		it = resolve(it)
		if it == nil || it.Kind != yaml.MappingNode {
			return nil, errAt(it, ProblemShape, "%s must be a map { x, y, width, height }, got %s", where, describe(it))
		}
		o, err := newObject(it)
		if err != nil {
			return nil, err
		}
		if err := o.only(where, "x", "y", "width", "height"); err != nil {
			return nil, err
		}
		var r Rect
		for _, f := range []struct {
			key string
			dst *int
			min int
		}{{"x", &r.X, 0}, {"y", &r.Y, 0}, {"width", &r.Width, 1}, {"height", &r.Height, 1}} {
			n := o.get(f.key)
			if n == nil {
				return nil, errAt(it, ProblemShape, "%s has no %s; a rectangle gives x, y, width and height", where, f.key)
			}
			c, ok := numValue(n)
			if !ok || c != float64(int(c)) || int(c) < f.min || int(c) > maxIgnoreSide {
				return nil, errAt(n, ProblemValue, "%s.%s must be a whole number of pixels from %d to %d, got %s", where, f.key, f.min, maxIgnoreSide, describe(n))
			}
			*f.dst = int(c)
		}
		out = append(out, r)
	}
	return out, nil
}
