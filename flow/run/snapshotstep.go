package run

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"image"
	"path/filepath"
	"strings"

	"github.com/toolserver/toolserver/flow"
	"github.com/toolserver/toolserver/snapshot"
)

// snapshot captures a frame and compares it with its baseline, or adopts
// a settled frame when the run updates baselines.
//
// Playwright's fast path: the first capture is compared at once and a
// match passes (a frame that matches its baseline is itself evidence the
// page settled); only a mismatch waits for two identical captures and
// compares that settled frame. An update always takes two.
func (r *Runner) snapshot(ctx context.Context, fr *frame, dev Device, d *flow.Snapshot) outcome {
	t, o := r.plan(ctx, dev, d)
	if t == nil {
		return o
	}
	b := stored{path: filepath.Join(fr.scope.baselineDir, t.key)}
	lim := r.limitsOf(d, dev.ID())
	if fr.scope.update.compares() {
		var err error
		b.png, err = r.baseline(b.path)
		var refused *flow.RefusedError
		switch {
		case errors.As(err, &refused):
			return errored("%s", refused.Reason)
		case flow.IsMissing(err):
			b.missing = true
		case err != nil:
			return errored("read baseline %s: %v", b.path, err)
		}
	}
	css, err := r.snapshotCSS(fr, d)
	if err != nil {
		return errored("%v", err)
	}
	opts := CaptureOptions{
		MaxCaptures: r.opts.MaxCaptures, Clip: t.clip, FullPage: d.FullPage,
		Mask: d.Mask, MaskColor: d.MaskColor, Hide: d.Hide, Ignore: d.Ignore, Style: css,
	}
	var first *snapshot.Result
	if b.png != nil {
		opts.Accept = func(png []byte, ignored []Rect) bool {
			res, err := snapshot.CompareBytes(t.key, b.png, "capture", png, withIgnored(compareOptions(lim), ignoreRects(ignored, d.IgnoreRegions)))
			if err != nil || exceeded(lim, res) != "" {
				return false
			}
			first = &res
			return true
		}
	}
	got, err := dev.Capture(ctx, opts)
	if err != nil {
		return errored("%v", err)
	}
	s := &shot{plan: t, png: got.PNG, stable: got.Stable, ignored: ignoreRects(got.Ignored, d.IgnoreRegions)}
	o = r.judge(ctx, fr, dev, d, s, b, lim, first)
	o.captures, o.ignored = got.Captures, s.ignored
	if o.baseline == nil && o.snapshotKey != "" {
		o.baseline = &flow.SnapshotBaseline{Path: b.path, State: flow.BaselineCompared}
		if b.missing {
			o.baseline.State = flow.BaselineMissing
		}
	}
	return o
}

// stored is a snapshot's baseline: its path, and its bytes when the run
// compares (missing when there is no file).
type stored struct {
	path    string
	png     []byte
	missing bool
}

// judge turns a capture into the step's outcome: adopted, compared, or
// missing its baseline. first is the fast path's comparison, when the
// first capture matched.
func (r *Runner) judge(ctx context.Context, fr *frame, dev Device, d *flow.Snapshot, s *shot, b stored, lim flow.Limits, first *snapshot.Result) outcome {
	unsettled := ""
	if !s.stable {
		unsettled = fmt.Sprintf("the screen kept changing: no two of %d consecutive captures were identical", r.opts.MaxCaptures)
	}
	adopting := fr.scope.update == UpdateAll || b.missing && fr.scope.update.adoptsMissing()
	switch {
	case adopting && !s.stable:
		// An animating screen is not adopted: the next run could never
		// reproduce it.
		return fail("%s, so no baseline was written (%s); stop what moves or crop to a still element", unsettled, s.key)
	case adopting:
		return r.adopt(fr, d, s.key, b.path, s.png)
	case b.missing:
		o := fail("no baseline for %q on this device class — expected %s, nothing was compared. Run with updateBaselines (--update-baselines) to adopt the current screen, then review and commit it", d.Name, b.path)
		art := map[string]flow.Artifact{}
		r.keep(art, fr, "current", s.key, s.png)
		o.artifacts, o.snapshotKey = art, s.key
		return o
	case first != nil:
		return passed(ctx, dev, s, *first, lim, "")
	}
	o := r.compare(ctx, fr, dev, s, b.png, lim, unsettled)
	if fr.scope.update == UpdateChanged && o.status == flow.StatusFail && o.snapshotKey != "" {
		return r.adoptChanged(fr, d, s, b.path, o)
	}
	return o
}

// shot is what a snapshot step captured by its plan: the PNG to compare
// or adopt (the cropOn region when the step has one) and whether the
// screen held still.
type shot struct {
	*plan
	png    []byte
	stable bool
	// ignored are the rectangles its comparison leaves out.
	ignored []Rect
}

// plan is what a snapshot step captures: its baseline key, the cropOn
// region in whole pixels of the viewport when it has one (captured with
// CDP's clip), and where the capture sits in the viewport (nil for a full
// page).
type plan struct {
	key  string
	clip *Rect
	at   *where
}

// plan locates the cropOn element, when the step has one, and names the
// baseline. A nil plan comes with the step's outcome.
func (r *Runner) plan(ctx context.Context, dev Device, d *flow.Snapshot) (*plan, outcome) {
	w, h := dev.Size()
	t := &plan{at: &where{Width: w, Height: h}}
	var err error
	switch {
	case d.CropOn != nil:
		el, lerr := dev.Locate(ctx, d.CropOn, flow.DefaultAwaitTimeout)
		if lerr != nil {
			return nil, errored("%v", lerr)
		}
		if el == nil {
			return nil, r.notFound(ctx, dev, d.CropOn)
		}
		// The region Crop would cut from a viewport capture, captured
		// with CDP's clip: the same pixels without decoding, cropping
		// and encoding a whole frame.
		r, cerr := snapshot.CropRect(snapshot.Frame{X: el.X, Y: el.Y, Width: el.Width, Height: el.Height}, w, h)
		if cerr != nil {
			return nil, fail("cropOn matched %s but its on-screen region is empty at this resolution — nothing was compared", d.CropOn)
		}
		t.clip = &Rect{X: r.Min.X, Y: r.Min.Y, Width: r.Dx(), Height: r.Dy()}
		t.at.X, t.at.Y = r.Min.X, r.Min.Y
		t.key, err = snapshot.CropBaselineKey(d.Name, w, h, d.CropOn.CropHash())
	case d.FullPage:
		t.at = nil
		t.key, err = snapshot.FullPageKey(d.Name, w, h)
	default:
		t.key, err = snapshot.BaselineKey(d.Name, w, h)
	}
	if err != nil {
		return nil, errored("%v", err)
	}
	return t, outcome{}
}

// compare compares a shot with its baseline and keeps the baseline,
// current and diff images of a failed comparison as artifacts. unsettled
// says why the screen did not hold still, when it did not.
func (r *Runner) compare(ctx context.Context, fr *frame, dev Device, s *shot, base []byte, lim flow.Limits, unsettled string) outcome {
	// Compare the files first, without a diff image: identical files are
	// only validated, and only the rows that differ are decoded.
	res, err := snapshot.CompareBytes(s.key, base, "capture", s.png, withIgnored(compareOptions(lim), s.ignored))
	art := map[string]flow.Artifact{}
	var sizes *snapshot.SizeMismatchError
	switch {
	case errors.As(err, &sizes):
		r.keep(art, fr, "baseline", s.key, base)
		r.keep(art, fr, "current", s.key, s.png)
		what, more := "capture", ""
		if s.clip != nil {
			what, more = "cropOn region", ". The element's size drifted — crop a fixed-size container, or re-adopt with updateBaselines"
		}
		o := fail("baseline is %dx%d but the %s is %dx%d (%s) — nothing was compared%s", sizes.A.X, sizes.A.Y, what, sizes.B.X, sizes.B.Y, s.key, more)
		o.artifacts, o.snapshotKey = art, s.key
		return o
	case err != nil:
		return errored("%v", err)
	}
	exceeded := exceeded(lim, res)
	if exceeded == "" {
		return passed(ctx, dev, s, res, lim, unsettled)
	}
	r.keep(art, fr, "baseline", s.key, base)
	r.keep(art, fr, "current", s.key, s.png)
	// The diff is drawn only where it can be kept.
	if r.opts.Artifacts != nil {
		if dpng := diffImage(s.key, base, s.png, withIgnored(compareOptions(lim), s.ignored)); dpng != nil {
			r.keep(art, fr, "diff", s.key, dpng)
		}
	}
	mm := mismatch(ctx, dev, s, res, lim)
	mm.Exceeded = exceeded
	where := ""
	if len(mm.Regions) > 0 {
		where = "; the largest changed area is " + regionPhrase(mm.Regions[0])
		for _, g := range mm.Regions[1:min(len(mm.Regions), maxNamedRegions)] {
			if g.Element != "" {
				where += "; also " + regionPhrase(g)
			}
		}
	}
	var o outcome
	of := comparedPhrase(res)
	switch {
	case lim.Strict:
		o = fail("%d %s differ, %s (%s) — diff %.2f%% of %s in %s%s", res.MismatchPixels, pluralWord(res.MismatchPixels, "pixel"), strictGate(lim), s.key, res.MismatchPercent, of, plural(res.RegionCount, "area"), where)
	case exceeded == "maxDiffPixels":
		o = fail("%d %s differ > maxDiffPixels %d (%s) — diff %.2f%% of %s in %s%s", res.MismatchPixels, pluralWord(res.MismatchPixels, "pixel"), *lim.MaxDiffPixels, s.key, res.MismatchPercent, of, plural(res.RegionCount, "area"), where)
	default:
		o = fail("diff %.2f%% > %g%% (%s) — %d of %s differ in %s%s", res.MismatchPercent, lim.MaxMismatch, s.key, res.MismatchPixels, of, plural(res.RegionCount, "area"), where)
	}
	if !lim.Strict {
		o.reason += "; limits: " + describeLimits(lim)
	}
	if unsettled != "" {
		o.reason += "; note: " + unsettled
	}
	o.artifacts, o.snapshotKey, o.mismatch = art, s.key, mm
	return o
}

// passed is a comparison within the limits.
func passed(ctx context.Context, dev Device, s *shot, res snapshot.Result, lim flow.Limits, unsettled string) outcome {
	o := outcome{status: flow.StatusPass, reason: fmt.Sprintf("diff %.2f%% ≤ %g%% (%s)", res.MismatchPercent, lim.MaxMismatch, s.key), warning: unsettled, snapshotKey: s.key}
	switch {
	case lim.Strict:
		// Strict passes only what has no differing pixel.
		o.reason = fmt.Sprintf("0 pixels differ, %s (%s)", strictGate(lim), s.key)
		return o
	case lim.MaxDiffPixels != nil:
		o.reason = fmt.Sprintf("diff %.2f%% ≤ %g%%, %d ≤ maxDiffPixels %d (%s)", res.MismatchPercent, lim.MaxMismatch, res.MismatchPixels, *lim.MaxDiffPixels, s.key)
	}
	if res.MismatchPixels > 0 {
		// Within the tolerance, but say so: a small real change (a
		// digit of a price) must not read as "nothing changed".
		o.mismatch = mismatch(ctx, dev, s, res, lim)
		o.reason += fmt.Sprintf(" — %d %s differ within the tolerance", res.MismatchPixels, pluralWord(res.MismatchPixels, "pixel"))
		if len(o.mismatch.Regions) > 0 {
			o.reason += ", largest area " + regionPhrase(o.mismatch.Regions[0])
		}
		o.reason += "; limits: " + describeLimits(lim)
	}
	return o
}

// mismatch explains a comparison that found differing pixels.
func mismatch(ctx context.Context, dev Device, s *shot, res snapshot.Result, lim flow.Limits) *flow.Mismatch {
	return &flow.Mismatch{
		Pixels: res.MismatchPixels, Percent: res.MismatchPercent, MaxMismatch: lim.MaxMismatch, Limits: &lim,
		Regions: changedRegions(ctx, dev, res.Regions, s.at),
	}
}

// adopt writes the capture as the baseline. A capture with the bytes of
// the baseline it would replace writes nothing: the file, and its time,
// stay as they are.
func (r *Runner) adopt(fr *frame, d *flow.Snapshot, key, path string, png []byte) outcome {
	if old, err := r.baseline(path); err == nil && bytes.Equal(old, png) {
		return outcome{status: flow.StatusPass, snapshotKey: key, reason: fmt.Sprintf("baseline unchanged (%s)", key),
			baseline: &flow.SnapshotBaseline{Path: path, State: flow.BaselineCompared}}
	}
	_, before := r.written[path]
	updated, err := r.opts.Source.WriteBaseline(path, png)
	if err != nil {
		var refused *flow.RefusedError
		if errors.As(err, &refused) {
			return errored("%s", refused.Reason)
		}
		return errored("write baseline %s: %v", path, err)
	}
	r.written[path] = png
	o := outcome{status: flow.StatusPass, snapshotKey: key, baseline: &flow.SnapshotBaseline{Path: path, State: flow.BaselineWritten}}
	if updated || before {
		o.baseline.State = flow.BaselineUpdated
	}
	switch {
	case r.opts.Linked && (updated || before):
		o.reason = fmt.Sprintf("baseline captured; the client updates it when the run ends (%s)", path)
	case r.opts.Linked:
		o.reason = fmt.Sprintf("baseline captured; the client writes it when the run ends (%s)", path)
	case updated || before:
		o.reason = fmt.Sprintf("baseline updated (%s)", key)
	default:
		o.reason = fmt.Sprintf("baseline written (%s)", key)
	}
	return o
}

// baseline reads a baseline: one this call wrote first, then the source.
func (r *Runner) baseline(path string) ([]byte, error) {
	if b, ok := r.written[path]; ok {
		return b, nil
	}
	return r.opts.Source.ReadBaseline(path)
}

// keep stores an artifact of a failed snapshot step as <key>-<role>.png
// (--artifacts DIR/<flow>/<key>-baseline.png, -current, -diff; docs/product.md
// still calls it --output DIR).
func (r *Runner) keep(art map[string]flow.Artifact, fr *frame, role, key string, data []byte) {
	if r.opts.Artifacts == nil {
		return
	}
	name := strings.TrimSuffix(key, ".png") + "-" + role + ".png"
	h, err := r.opts.Artifacts.Put(fr.scope.name, name, "image/png", data)
	if err == nil && (h.Handle != nil || h.Path != "") {
		art[role] = h
	}
}

// comparedPhrase says what a comparison's count and percent are of: the
// image's pixels, or with a window those of the worst N×N square, with
// the count of the whole image beside it.
func comparedPhrase(res snapshot.Result) string {
	if res.WindowSize <= 0 {
		return fmt.Sprintf("%d pixels", res.Width*res.Height)
	}
	n := min(res.WindowSize, res.Width, res.Height)
	return fmt.Sprintf("the %d pixels of the worst %d×%d square (%d differ in the whole image)", n*n, n, n, res.TotalMismatchPixels)
}

// ignoreRects are what a comparison leaves out: the boxes of the ignore:
// elements a capture found, then the step's ignoreRegions.
func ignoreRects(found, regions []Rect) []Rect {
	if len(found)+len(regions) == 0 {
		return nil
	}
	return append(append([]Rect(nil), found...), regions...)
}

// withIgnored is opts leaving out the rectangles rs.
func withIgnored(opts snapshot.Options, rs []Rect) snapshot.Options {
	for _, r := range rs {
		opts.Ignore = append(opts.Ignore, image.Rect(r.X, r.Y, r.X+r.Width, r.Y+r.Height))
	}
	return opts
}

// diffImage draws a failed comparison's diff (changed pixels red over a
// faded baseline) as a PNG, or nil when it cannot. The comparison that
// failed decoded only the rows that differ; drawing needs them all.
func diffImage(key string, base, png []byte, opts snapshot.Options) []byte {
	opts.Diff = true
	res, err := snapshot.CompareBytes(key, base, "capture", png, opts)
	if err != nil || res.Diff == nil {
		return nil
	}
	out, err := snapshot.EncodePNG(res.Diff)
	if err != nil {
		return nil
	}
	return out
}

func pluralWord(n int, word string) string {
	if n == 1 {
		return word
	}
	return word + "s"
}
