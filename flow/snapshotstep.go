package flow

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/toolserver/toolserver/snapshot"
)

// snapshot captures a settled frame and compares it with its baseline, or
// adopts it when the run updates baselines.
func (r *Runner) snapshot(ctx context.Context, fr *frame, dev Device, d *Snapshot) outcome {
	s, o := r.shoot(ctx, dev, d)
	if s == nil {
		return o
	}
	path := filepath.Join(fr.scope.baselineDir, s.key)
	unsettled := ""
	if !s.stable {
		unsettled = fmt.Sprintf("the screen kept changing: no two of %d consecutive captures were identical", r.opts.MaxCaptures)
	}
	if fr.scope.update {
		if !s.stable {
			// An animating screen is not adopted: the next run could never
			// reproduce it.
			return fail("%s, so no baseline was written (%s); stop what moves or crop to a still element", unsettled, s.key)
		}
		return r.adopt(fr, d, s.key, path, s.png)
	}
	base, err := r.baseline(path)
	var refused *RefusedError
	switch {
	case errors.As(err, &refused):
		return errored("%s", refused.Reason)
	case IsMissing(err):
		return fail("no baseline for %q on this device class — expected %s, nothing was compared. Run with updateBaselines (--update-baselines) to adopt the current screen, then review and commit it", d.Name, path)
	case err != nil:
		return errored("read baseline %s: %v", path, err)
	}
	return r.compare(fr, d, s, base, unsettled)
}

// shot is what a snapshot step captured: the PNG to compare or adopt (the
// cropOn region when the step has one), its baseline key, and whether the
// screen held still.
type shot struct {
	png     []byte
	key     string
	cropped bool
	stable  bool
}

// shoot locates the cropOn element, when the step has one, captures a
// settled frame and crops it. A nil shot comes with the step's outcome.
func (r *Runner) shoot(ctx context.Context, dev Device, d *Snapshot) (*shot, outcome) {
	var crop *Element
	if d.CropOn != nil {
		el, err := dev.Locate(ctx, d.CropOn, DefaultAwaitTimeout)
		if err != nil {
			return nil, errored("%v", err)
		}
		if el == nil {
			return nil, r.notFound(ctx, dev, d.CropOn)
		}
		crop = el
	}
	got, err := dev.Capture(ctx, CaptureOptions{MaxCaptures: r.opts.MaxCaptures})
	if err != nil {
		return nil, errored("%v", err)
	}
	png, stable := got.PNG, got.Stable
	// A full capture is exactly the viewport at DPR 1; it is decoded only
	// to crop it, or when it differs from its baseline.
	w, h := dev.Size()
	key, err := snapshot.BaselineKey(d.Name, w, h)
	if crop != nil {
		key, err = snapshot.CropBaselineKey(d.Name, w, h, d.CropOn.CropHash())
	}
	if err != nil {
		return nil, errored("%v", err)
	}
	if crop != nil {
		cur, err := snapshot.Decode("capture", png)
		if err != nil {
			return nil, errored("%v", err)
		}
		cur, err = snapshot.Crop(cur, snapshot.Frame{X: crop.X, Y: crop.Y, Width: crop.Width, Height: crop.Height})
		if err != nil {
			return nil, fail("cropOn matched %s but its on-screen region is empty at this resolution — nothing was compared", d.CropOn)
		}
		if png, err = snapshot.EncodePNG(cur); err != nil {
			return nil, errored("%v", err)
		}
	}
	return &shot{png: png, key: key, cropped: crop != nil, stable: stable}, outcome{}
}

// compare compares a shot with its baseline and keeps the baseline,
// current and diff images of a failed comparison as artifacts. unsettled
// says why the screen did not hold still, when it did not.
func (r *Runner) compare(fr *frame, d *Snapshot, s *shot, base []byte, unsettled string) outcome {
	// Compare the files first, without a diff image: identical files are
	// only validated, and only the rows that differ are decoded.
	opts := snapshot.DefaultOptions()
	res, err := snapshot.CompareBytes(s.key, base, "capture", s.png, opts)
	art := map[string]Artifact{}
	var sizes *snapshot.SizeMismatchError
	switch {
	case errors.As(err, &sizes):
		r.keep(art, fr, "baseline", s.key, base)
		r.keep(art, fr, "current", s.key, s.png)
		what, more := "capture", ""
		if s.cropped {
			what, more = "cropOn region", ". The element's size drifted — crop a fixed-size container, or re-adopt with updateBaselines"
		}
		o := fail("baseline is %dx%d but the %s is %dx%d (%s) — nothing was compared%s", sizes.A.X, sizes.A.Y, what, sizes.B.X, sizes.B.Y, s.key, more)
		o.artifacts, o.snapshotKey = art, s.key
		return o
	case err != nil:
		return errored("%v", err)
	}
	max := d.MaxMismatch
	mm := &Mismatch{Pixels: res.MismatchPixels, Percent: res.MismatchPercent, MaxMismatch: max}
	if snapshot.Passes(res, max) {
		o := outcome{status: StatusPass, reason: fmt.Sprintf("diff %.2f%% ≤ %g%% (%s)", res.MismatchPercent, max, s.key), warning: unsettled}
		if res.MismatchPixels > 0 {
			// Within the tolerance, but say so: a small real change (a
			// digit of a price) must not read as "nothing changed".
			mm.Regions = res.Regions
			o.mismatch = mm
			o.reason += fmt.Sprintf(" — %d %s differ within the tolerance", res.MismatchPixels, pluralWord(res.MismatchPixels, "pixel"))
			if len(res.Regions) > 0 {
				g := res.Regions[0]
				o.reason += fmt.Sprintf(", largest area %dx%d at (%d, %d)", g.Width, g.Height, g.X, g.Y)
			}
		}
		return o
	}
	r.keep(art, fr, "baseline", s.key, base)
	r.keep(art, fr, "current", s.key, s.png)
	if dpng := diffImage(s.key, base, s.png); dpng != nil {
		r.keep(art, fr, "diff", s.key, dpng)
	}
	mm.Regions = res.Regions
	where := ""
	if len(res.Regions) > 0 {
		g := res.Regions[0]
		where = fmt.Sprintf("; the largest changed area is %dx%d at (%d, %d)", g.Width, g.Height, g.X, g.Y)
	}
	o := fail("diff %.2f%% > %g%% (%s) — %d of %d pixels differ in %s%s", res.MismatchPercent, max, s.key, res.MismatchPixels, res.Width*res.Height, plural(res.RegionCount, "area"), where)
	if unsettled != "" {
		o.reason += "; note: " + unsettled
	}
	o.artifacts, o.snapshotKey, o.mismatch = art, s.key, mm
	return o
}

// adopt writes the capture as the baseline.
func (r *Runner) adopt(fr *frame, d *Snapshot, key, path string, png []byte) outcome {
	_, before := r.written[path]
	updated, err := r.opts.Source.WriteBaseline(path, png)
	if err != nil {
		var refused *RefusedError
		if errors.As(err, &refused) {
			return errored("%s", refused.Reason)
		}
		return errored("write baseline %s: %v", path, err)
	}
	r.written[path] = png
	o := outcome{status: StatusPass, snapshotKey: key}
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
// (--artifacts DIR/<flow>/<key>-baseline.png, -current, -diff; PRODUCT.md still calls it --output DIR).
func (r *Runner) keep(art map[string]Artifact, fr *frame, role, key string, data []byte) {
	if r.opts.Artifacts == nil {
		return
	}
	name := strings.TrimSuffix(key, ".png") + "-" + role + ".png"
	h, err := r.opts.Artifacts.Put(fr.scope.name, name, "image/png", data)
	if err == nil && (h.Handle != nil || h.Path != "") {
		art[role] = h
	}
}

// diffImage decodes a failed comparison's two images and draws its diff
// (changed pixels red over a faded baseline), or nil when it cannot.
func diffImage(key string, base, png []byte) []byte {
	a, err := snapshot.Decode(key, base)
	if err != nil {
		return nil
	}
	b, err := snapshot.Decode("capture", png)
	if err != nil {
		return nil
	}
	opts := snapshot.DefaultOptions()
	opts.Diff = true
	res, err := snapshot.Compare(a, b, opts)
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
