package run

import (
	"fmt"
	"slices"

	"github.com/toolserver/toolserver/flow"
)

// Update is which baselines a run adopts (docs/snapshots.md, "Updating
// baselines").
type Update string

// The updates of a run. UpdateNone compares every snapshot; UpdateAll
// adopts every capture without comparing; UpdateChanged compares and
// adopts the captures that failed their comparison or have no baseline;
// UpdateMissing compares and adopts only where there is no baseline.
const (
	UpdateNone    Update = ""
	UpdateAll     Update = "all"
	UpdateChanged Update = "changed"
	UpdateMissing Update = "missing"
)

// Updates are the values of --update-baselines, in the order help lists
// them.
var Updates = []Update{UpdateAll, UpdateChanged, UpdateMissing}

// ParseUpdate reads a value of --update-baselines (or flow-execute's
// updateOnly); "" is UpdateNone.
func ParseUpdate(s string) (Update, error) {
	if u := Update(s); u == UpdateNone || slices.Contains(Updates, u) {
		return u, nil
	}
	return UpdateNone, fmt.Errorf("%q is not all, changed or missing", s)
}

// compares tells that a run under u reads its baselines and compares.
func (u Update) compares() bool { return u != UpdateAll }

// adoptsMissing tells that a run under u writes a baseline that is not
// there.
func (u Update) adoptsMissing() bool { return u != UpdateNone }

// update is the run's update: Options.Update, or UpdateAll for the older
// Options.UpdateBaselines.
func (o Options) update() Update {
	if o.Update == UpdateNone && o.UpdateBaselines {
		return UpdateAll
	}
	return o.Update
}

// nestedUpdate is the update of a nested run whose step has
// updateBaselines step (nil when it says nothing): true adopts every capture, false
// compares, and a silent step inherits the update of the run that
// starts it (docs/link-protocol.md, "Baselines").
func nestedUpdate(parent Update, step *bool) Update {
	switch {
	case step == nil:
		return parent
	case *step:
		return UpdateAll
	}
	return UpdateNone
}

// hadFailed joins the reason of an adoption under UpdateChanged to the
// reason of the comparison that failed.
const hadFailed = "; it had failed: "

// adoptChanged adopts the capture of a comparison that failed, in a run
// that updates what changed: the step passes with the new baseline, and
// keeps the failure's images and mismatch so the report shows what
// changed. A screen that did not hold still is not adopted.
func (r *Runner) adoptChanged(fr *frame, d *flow.Snapshot, s *shot, path string, failed outcome) outcome {
	if !s.stable {
		failed.reason += "; no baseline was written: the screen kept changing"
		return failed
	}
	o := r.adopt(fr, d, s.key, path, s.png)
	if o.status != flow.StatusPass {
		return o
	}
	o.reason += hadFailed + failed.reason
	o.artifacts, o.mismatch = failed.artifacts, failed.mismatch
	return o
}

// Only is the narrowing of an update that compares: changed or missing;
// "" for UpdateNone and UpdateAll.
func (u Update) Only() string {
	if u == UpdateAll {
		return ""
	}
	return string(u)
}
