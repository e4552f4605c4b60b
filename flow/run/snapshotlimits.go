package run

import (
	"fmt"
	"strings"

	"github.com/toolserver/toolserver/flow"
	"github.com/toolserver/toolserver/snapshot"
)

// Where a snapshot's limit came from, when neither the step nor the
// project's defaults set it.
const (
	fromStep         = "the step"
	fromArgent       = "Argent's default"
	fromPixelmatch   = "pixelmatch's default"
	fromUnnamedLevel = "the project's defaults"
)

// limitsOf resolves the limits of d against the run's defaults.
func (r *Runner) limitsOf(d *flow.Snapshot) flow.Limits {
	def := r.opts.Snapshot
	l := flow.Limits{
		MaxMismatch: d.MaxMismatch, MaxMismatchFrom: fromArgent,
		Threshold: snapshot.DefaultOptions().Threshold, ThresholdFrom: fromPixelmatch,
	}
	switch {
	case d.MaxMismatchSet:
		l.MaxMismatchFrom = fromStep
	case def.MaxMismatch != nil:
		l.MaxMismatch, l.MaxMismatchFrom = *def.MaxMismatch, defaultFrom(def, "maxMismatch")
	}
	switch {
	case d.MaxDiffPixels != nil:
		l.MaxDiffPixels, l.MaxDiffPixelsFrom = d.MaxDiffPixels, fromStep
	case def.MaxDiffPixels != nil:
		l.MaxDiffPixels, l.MaxDiffPixelsFrom = def.MaxDiffPixels, defaultFrom(def, "maxDiffPixels")
	}
	switch {
	case d.Threshold != nil:
		l.Threshold, l.ThresholdFrom = *d.Threshold, fromStep
	case def.Threshold != nil:
		l.Threshold, l.ThresholdFrom = *def.Threshold, defaultFrom(def, "threshold")
	}
	return l
}

// defaultFrom names where a default came from.
func defaultFrom(d flow.SnapshotDefaults, field string) string {
	if s := d.Sources[field]; s != "" {
		return s
	}
	return fromUnnamedLevel
}

// compareOptions are the comparison options of the limits.
func compareOptions(l flow.Limits) snapshot.Options {
	o := snapshot.DefaultOptions()
	o.Threshold = l.Threshold
	return o
}

// exceeded names the limit a comparison broke, "" when it passes: both
// the percentage and, when set, the pixel count must hold (Playwright
// takes the smaller of maxDiffPixels and maxDiffPixelRatio the same way).
func exceeded(l flow.Limits, res snapshot.Result) string {
	switch {
	case l.MaxDiffPixels != nil && res.MismatchPixels > *l.MaxDiffPixels:
		return "maxDiffPixels"
	case !snapshot.Passes(res, l.MaxMismatch):
		return "maxMismatch"
	}
	return ""
}

// describeLimits says which limits applied and from where, for a reason:
// "maxMismatch 0.5% (Argent's default), maxDiffPixels 0 (flag
// --max-diff-pixels)". The threshold is named only when not the default.
func describeLimits(l flow.Limits) string {
	parts := []string{fmt.Sprintf("maxMismatch %g%% (%s)", l.MaxMismatch, l.MaxMismatchFrom)}
	if l.MaxDiffPixels != nil {
		parts = append(parts, fmt.Sprintf("maxDiffPixels %d (%s)", *l.MaxDiffPixels, l.MaxDiffPixelsFrom))
	}
	if l.ThresholdFrom != fromPixelmatch {
		parts = append(parts, fmt.Sprintf("threshold %g (%s)", l.Threshold, l.ThresholdFrom))
	}
	return strings.Join(parts, ", ")
}
