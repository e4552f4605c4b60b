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
	fromStrict       = "default on chromium"
)

// strictThreshold is the strict default's colour threshold: 0.01, so a
// pixel whose channels all moved by 3 levels differs (a button one shade
// darker) and the ±1 level a rounded corner's anti-aliasing was seen to
// vary by between reruns does not (docs/snapshots.md, "Strict by default
// on Chromium").
const strictThreshold = 0.01

// chromiumDevice starts the id of every device the strict default applies
// to: our canonical renderer (device/cdp's IDPrefix, which this package
// may not import).
const chromiumDevice = "chromium-cdp-"

// limitsOf resolves the limits of d against the run's defaults, on the
// device id: with no maxMismatch or maxDiffPixels set anywhere, a
// chromium-cdp-* device compares strictly (docs/snapshots.md, "Strict by
// default on Chromium"); a count set anywhere gives every limit Argent's
// meaning, as it had before the strict default.
func (r *Runner) limitsOf(d *flow.Snapshot, device string) flow.Limits {
	def := r.opts.Snapshot
	var l flow.Limits
	if !d.MaxMismatchSet && d.MaxDiffPixels == nil && def.MaxMismatch == nil && def.MaxDiffPixels == nil && strings.HasPrefix(device, chromiumDevice) {
		l = r.strictLimits(d)
	} else {
		l = r.argentLimits(d)
	}
	switch {
	case d.Metric != "":
		l.Metric, l.MetricFrom = d.Metric, fromStep
	case def.Metric != nil:
		l.Metric, l.MetricFrom = *def.Metric, defaultFrom(def, "metric")
	}
	switch {
	case d.WindowSize != nil:
		l.WindowSize, l.WindowSizeFrom = *d.WindowSize, fromStep
	case def.WindowSize != nil:
		l.WindowSize, l.WindowSizeFrom = *def.WindowSize, defaultFrom(def, "windowSize")
	}
	return l
}

// argentLimits are the limits with Argent's meaning, where a count is set
// at some level or the device is not ours.
func (r *Runner) argentLimits(d *flow.Snapshot) flow.Limits {
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

// strictLimits are the strict default: no pixel may differ, at
// strictThreshold with anti-aliased pixels counted, unless a threshold is
// set (the step's own, else the project's), which then decides which
// pixels differ.
func (r *Runner) strictLimits(d *flow.Snapshot) flow.Limits {
	zero := 0
	l := flow.Limits{Strict: true, MaxMismatchFrom: fromStrict, MaxDiffPixels: &zero, MaxDiffPixelsFrom: fromStrict, Threshold: strictThreshold, ThresholdFrom: fromStrict}
	switch def := r.opts.Snapshot; {
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
	// Strict counts anti-aliased pixels too: a change that only moves
	// anti-aliased pixels (a corner's radius) is a change, and the
	// threshold alone absorbs what reruns vary by (docs/snapshots.md,
	// "Strict by default on Chromium").
	o.IncludeAA = l.Strict && l.ThresholdFrom == fromStrict
	o.Metric, o.WindowSize = snapshot.Metric(l.Metric), l.WindowSize
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
	if l.Strict {
		return strictGate(l) + comparisonOf(l)
	}
	parts := []string{fmt.Sprintf("maxMismatch %g%% (%s)", l.MaxMismatch, l.MaxMismatchFrom)}
	if l.MaxDiffPixels != nil {
		parts = append(parts, fmt.Sprintf("maxDiffPixels %d (%s)", *l.MaxDiffPixels, l.MaxDiffPixelsFrom))
	}
	if l.ThresholdFrom != fromPixelmatch {
		parts = append(parts, fmt.Sprintf("threshold %g (%s)", l.Threshold, l.ThresholdFrom))
	}
	return strings.Join(parts, ", ") + comparisonOf(l)
}

// comparisonOf names a metric and a window that are not the defaults,
// with where each came from: ", metric oklab (the step), windowSize 16
// (.argent/toolserver.yaml)".
func comparisonOf(l flow.Limits) string {
	var out string
	if l.Metric != "" {
		out += fmt.Sprintf(", metric %s (%s)", l.Metric, l.MetricFrom)
	}
	if l.WindowSize > 0 {
		out += fmt.Sprintf(", windowSize %d (%s)", l.WindowSize, l.WindowSizeFrom)
	}
	return out
}

// strictGate names the strict default as a reason says it decided: "0 px
// allowed (default on chromium)", with a threshold set at some level.
func strictGate(l flow.Limits) string {
	gate := "0 px allowed (" + fromStrict + ")"
	if l.ThresholdFrom != fromStrict {
		gate += fmt.Sprintf(", threshold %g (%s)", l.Threshold, l.ThresholdFrom)
	}
	return gate
}
