package flow

import (
	"fmt"
	"math"
	"path"
	"regexp"
	"slices"
	"strings"
	"sync"

	"go.yaml.in/yaml/v3"
)

// Bounds of a snapshot's own options (issue 12), beyond Argent's name,
// maxMismatch and cropOn.
const (
	// MaxSnapshotSelectors bounds the selectors of one mask: or hide:
	// list: each is located in the page before the capture, so the list
	// is part of the step's time. Clocks, avatars and ads are a handful.
	MaxSnapshotSelectors = 32
	// MaxStyleBytes bounds the CSS a capture applies, the style: text and
	// the stylePath file each: it overrides a few rules for a capture
	// (hide a caret, freeze a clock), it is not the site's stylesheet.
	MaxStyleBytes = 64 << 10
	// MaxPixelCount bounds maxDiffPixels, a count of pixels: no capture
	// a Chromium device makes has more.
	MaxPixelCount = math.MaxInt32
	// MaxMismatchPercent and MaxThreshold bound maxMismatch (a percent)
	// and threshold (pixelmatch's, 0..1) wherever a limit is set: a flow
	// file, the config file, flow run's flags, flow-execute's
	// snapshotDefaults.
	MaxMismatchPercent = 100
	MaxThreshold       = 1
	// DefaultThreshold is pixelmatch's colour threshold, the one a
	// snapshot compares with when no level sets one. The comparison's
	// own default is snapshot.DefaultOptions().Threshold; a runner test
	// holds the two equal.
	DefaultThreshold = 0.1
	// MaxWindowSize bounds windowSize: a square of that side is larger
	// than any change a window is meant to find, and the comparison
	// clamps it to the image's smaller side anyway.
	MaxWindowSize = 4096
)

// SnapshotMetrics are the colour distances a snapshot may compare with,
// the default first: pixelmatch 7's YIQ and pixelmatch 8's OKLab (the
// comparison's own list is snapshot.Metrics; a runner test holds the two
// equal).
var SnapshotMetrics = []string{"yiq", "oklab"}

// The patterns are compiled on first use, not before main, which every
// command pays (docs/performance.md, "Start-up").
var (
	maskColorPattern = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^#[0-9A-Fa-f]{6}$`) })
)

// snapshotOptions reads the options of snapshot:'s map form into s: the
// limits (maxMismatch, maxDiffPixels, threshold), what is captured
// (cropOn, fullPage), what the capture changes in the page (mask,
// maskColor, hide, style, stylePath) and whether a failure stops the flow
// (stopOnFailure). Each selector of cropOn, mask: and
// hide: has the scope budget of a selector slot of its own.
func (p *parser) snapshotOptions(o *object, s *Snapshot) *Error {
	var err *Error
	if mv := o.get("maxMismatch"); mv != nil {
		if s.MaxMismatch, err = percentValue(mv, "maxMismatch"); err != nil {
			return err
		}
		s.MaxMismatchSet = true
	}
	if v := o.get("maxDiffPixels"); v != nil {
		n, err := pixelCountValue(v, "maxDiffPixels")
		if err != nil {
			return err
		}
		s.MaxDiffPixels = &n
	}
	if v := o.get("threshold"); v != nil {
		t, err := thresholdValue(v, "threshold")
		if err != nil {
			return err
		}
		s.Threshold = &t
	}
	if v := o.get("metric"); v != nil {
		if s.Metric, err = metricValue(v, "metric"); err != nil {
			return err
		}
	}
	if v := o.get("windowSize"); v != nil {
		n, err := windowSizeValue(v, "windowSize")
		if err != nil {
			return err
		}
		s.WindowSize = &n
	}
	if o.has("cropOn") {
		budget := MaxSelectorScopes
		if s.CropOn, err = p.selector(o.get("cropOn"), "cropOn", &budget); err != nil {
			return err
		}
	}
	if v := o.get("fullPage"); v != nil {
		b, ok := boolValue(v)
		if !ok {
			return errAt(v, ProblemShape, "fullPage must be true or false, got %s", describe(v))
		}
		if b && s.CropOn != nil {
			return errAt(o.key("fullPage"), ProblemShape, "fullPage: true captures the whole scrollable page and cropOn compares one element's frame; give one of them")
		}
		s.FullPage = b
	}
	if o.has("mask") {
		if s.Mask, err = p.selectorList(o.get("mask"), "mask", "mask"); err != nil {
			return err
		}
	}
	if v := o.get("maskColor"); v != nil {
		c, ok := strValue(v)
		if !ok || !maskColorPattern().MatchString(c) {
			hint := ""
			if isNull(v) {
				hint = `; quote it (maskColor: "#FF00FF"): an unquoted # starts a YAML comment`
			}
			return errAt(v, ProblemValue, `maskColor must be a colour written "#RRGGBB" (six hex digits, e.g. %q), got %s%s`, DefaultMaskColor, describe(v), hint)
		}
		if s.Mask == nil {
			return errAt(o.key("maskColor"), ProblemShape, "maskColor is the colour of the mask: boxes, and this snapshot has no mask:; add mask: [<selector>, …] or drop maskColor")
		}
		s.MaskColor = c
	}
	if o.has("hide") {
		if s.Hide, err = p.selectorList(o.get("hide"), "hide", "hide"); err != nil {
			return err
		}
	}
	if err := p.ignoreOptions(o, s); err != nil {
		return err
	}
	if v := o.get("style"); v != nil {
		css, ok := strValue(v)
		switch {
		case !ok:
			return errAt(v, ProblemShape, "style must be CSS text (style: | and the rules on the lines below), got %s", describe(v))
		case strings.TrimSpace(css) == "":
			return errAt(v, ProblemValue, "style is empty; write the CSS the capture applies, or drop style")
		case len(css) > MaxStyleBytes:
			return errAt(v, ProblemValue, "style is %d bytes; the CSS of a capture is at most %d bytes (64 KiB)", len(css), MaxStyleBytes)
		}
		s.Style = css
	}
	if v := o.get("stylePath"); v != nil {
		if s.StylePath, err = stylePathValue(v); err != nil {
			return err
		}
	}
	if v := o.get("stopOnFailure"); v != nil {
		b, ok := boolValue(v)
		if !ok {
			return errAt(v, ProblemShape, "stopOnFailure must be true or false, got %s", describe(v))
		}
		s.StopOnFailure = &b
	}
	return nil
}

// selectorList parses mask: or hide:: a list of selectors, or a single
// selector that stands for a one-item list. A list item is named key[N],
// counted from 1 as steps are, in its messages.
func (p *parser) selectorList(v *yaml.Node, key, verb string) ([]*Selector, *Error) {
	v = resolve(v)
	items := []*yaml.Node{v}
	list := v != nil && v.Kind == yaml.SequenceNode
	if list {
		switch n := len(v.Content); {
		case n == 0:
			return nil, errAt(v, ProblemShape, "%s is an empty list; list the elements to %s (%s: [<selector>, …]) or drop %s", key, verb, key, key)
		case n > MaxSnapshotSelectors:
			return nil, errAt(v, ProblemValue, "%s lists %d selectors; a snapshot takes at most %d", key, n, MaxSnapshotSelectors)
		}
		items = v.Content
	}
	out := make([]*Selector, 0, len(items))
	for i, it := range items {
		where := key
		if list {
			where = fmt.Sprintf("%s[%d]", key, i+1)
		}
		budget := MaxSelectorScopes
		sel, err := p.selector(it, where, &budget)
		if err != nil {
			return nil, err
		}
		out = append(out, sel)
	}
	return out, nil
}

// stylePathValue checks a stylePath's shape as run: and script: paths are
// checked: relative to the flow file that names it, forward slashes, a
// lowercase .css extension. ".." is allowed, as for run:; where the path
// lands is the source's question (a linked client sends only files under
// its roots).
func stylePathValue(v *yaml.Node) (string, *Error) {
	p, ok := strValue(v)
	switch {
	case !ok || p == "":
		return "", errAt(v, ProblemShape, "stylePath needs a .css file relative to this flow file, e.g. stylePath: styles/capture.css, got %s", describe(v))
	case strings.ContainsRune(p, 0):
		return "", errAt(v, ProblemValue, "stylePath holds a NUL byte")
	case strings.Contains(p, `\`):
		return "", errAt(v, ProblemValue, "a stylePath uses forward slashes, e.g. stylePath: styles/capture.css")
	case strings.HasPrefix(p, "/") || driveLetter().MatchString(p):
		return "", errAt(v, ProblemValue, "a stylePath must be relative to the flow file that names it, got %q", p)
	case !strings.HasSuffix(p, ".css") && strings.HasSuffix(strings.ToLower(p), ".css"):
		return "", errAt(v, ProblemValue, "a stylePath must use the lowercase .css extension, got %q", p)
	case !strings.HasSuffix(p, ".css"):
		return "", errAt(v, ProblemValue, "a stylePath must end in .css, got %q", p)
	case path.Base(p) == ".css":
		return "", errAt(v, ProblemValue, "a stylePath must name a file before .css, got %q", p)
	}
	return p, nil
}

// percentValue reads a maxMismatch: a percent of pixels from 0 to 100.
func percentValue(n *yaml.Node, key string) (float64, *Error) {
	m, ok := numValue(n)
	if !ok || m < 0 || m > MaxMismatchPercent {
		return 0, errAt(n, ProblemValue, "%s must be a percent from 0 to %d, got %s", key, MaxMismatchPercent, describe(n))
	}
	return m, nil
}

// metricValue reads a colour distance: one of SnapshotMetrics.
func metricValue(n *yaml.Node, key string) (string, *Error) {
	m, ok := strValue(n)
	if !ok || !slices.Contains(SnapshotMetrics, m) {
		return "", errAt(n, ProblemValue, "%s must be one of %s (pixelmatch 7's YIQ distance, the default, or pixelmatch 8's OKLab), got %s", key, strings.Join(SnapshotMetrics, ", "), describe(n))
	}
	return m, nil
}

// windowSizeValue reads pixelmatch 8's windowSize: a side in pixels.
func windowSizeValue(n *yaml.Node, key string) (int, *Error) {
	c, ok := numValue(n)
	if !ok || c != math.Trunc(c) || c < 1 || c > MaxWindowSize {
		return 0, errAt(n, ProblemValue, "%s must be a whole number of pixels from 1 to %d (the side of the square whose differing pixels are counted), got %s", key, MaxWindowSize, describe(n))
	}
	return int(c), nil
}

// thresholdValue reads pixelmatch's colour threshold, 0 to 1.
func thresholdValue(n *yaml.Node, key string) (float64, *Error) {
	t, ok := numValue(n)
	if !ok || t < 0 || t > MaxThreshold {
		return 0, errAt(n, ProblemValue, "%s must be a number from 0 to %d (pixelmatch's colour threshold: 0 counts every colour change, the default is %g), got %s", key, MaxThreshold, DefaultThreshold, describe(n))
	}
	return t, nil
}

// pixelCountValue reads a maxDiffPixels: a whole number of pixels.
func pixelCountValue(n *yaml.Node, key string) (int, *Error) {
	c, ok := numValue(n)
	if !ok || c != math.Trunc(c) || c < 0 || c > MaxPixelCount {
		return 0, errAt(n, ProblemValue, "%s must be a whole number of pixels from 0 to %d, got %s", key, MaxPixelCount, describe(n))
	}
	return int(c), nil
}

// SnapshotFromArgs builds a snapshot: step from the options of its map
// form as JSON decodes them (name, maxMismatch, cropOn, mask, …), checked
// exactly as Parse checks them: the recorder records a snapshot step with
// it. Its error is an *Error that names no file, step or line.
func SnapshotFromArgs(args map[string]any) (*Snapshot, error) {
	var n yaml.Node
	if err := n.Encode(args); err != nil {
		return nil, &Error{Directive: KindSnapshot, Problem: ProblemShape, Msg: fmt.Sprintf("the options do not encode: %v", err)}
	}
	p := &parser{}
	d, e := p.snapshot(&n)
	if e != nil {
		e.Line, e.Column, e.Directive = 0, 0, KindSnapshot
		return nil, e
	}
	return d.(*Snapshot), nil
}

// StylePaths returns every snapshot's stylePath, in all steps and all
// when: blocks, in document order without repeats: the files a linked
// client sends beside this flow file.
func (f *Flow) StylePaths() []string {
	var out []string
	seen := map[string]bool{}
	for s := range f.All() {
		if sn, ok := s.Directive.(*Snapshot); ok && sn.StylePath != "" && !seen[sn.StylePath] {
			seen[sn.StylePath] = true
			out = append(out, sn.StylePath)
		}
	}
	return out
}
