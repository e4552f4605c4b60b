package run

import (
	"fmt"
	"os"
	"strings"

	"github.com/toolserver/toolserver/flow"
)

// The actions of a Plan.
const (
	PlanNew    = "new"
	PlanUpdate = "update"
)

// Plan is a baseline that a dry run would have written: the rules of a
// dry run are this file's, for a local run (dryRunSource) and for the
// result of a linked one (PlansOf) alike.
type Plan struct {
	Path string `json:"path"`
	// Action is new (no file at Path yet) or update.
	Action string `json:"action"`
	Bytes  int    `json:"bytes"`
}

// dryRunSource is a local run's Source in a dry run: it reads as its
// Source does and, instead of writing a baseline, records what it would
// write. The runner keeps the capture in memory, so later steps of the
// run compare with it as they would with the written file.
type dryRunSource struct {
	Source
	plans []Plan
}

// WriteBaseline implements Source: it records the write.
func (s *dryRunSource) WriteBaseline(path string, png []byte) (bool, error) {
	for i, p := range s.plans {
		if p.Path == path {
			// Adopted twice in one run (a fragment run twice): the last
			// capture wins, as on disk.
			s.plans[i].Bytes = len(png)
			return true, nil
		}
	}
	_, err := os.Stat(path)
	s.plans = append(s.plans, planOf(path, len(png), err == nil))
	return err == nil, nil
}

// planOf is the plan of writing n bytes at path: an update when a file
// is there already, else new.
func planOf(path string, n int, updated bool) Plan {
	if updated {
		return Plan{Path: path, Action: PlanUpdate, Bytes: n}
	}
	return Plan{Path: path, Action: PlanNew, Bytes: n}
}

// PlansOf turns the baselineWrites of a linked dry run's result into
// plans; the refusals among them are left to the caller.
func PlansOf(writes []flow.BaselineWrite) []Plan {
	var out []Plan
	for _, w := range writes {
		if w.Plan == nil {
			continue
		}
		out = append(out, planOf(w.Path, w.Plan.Bytes, w.Plan.Updated))
	}
	return out
}

// MarkDryRun rewrites the reason of each step whose baseline the dry
// run did not write.
func MarkDryRun(rep *flow.Report) {
	for i := range rep.Steps {
		MarkDryRunStep(&rep.Steps[i])
	}
}

// MarkDryRunStep rewrites the reason of an adoption: a snapshot that
// passed with a baseline key is one (a comparison that passes reports
// no key), and its reason would say "written". A capture equal to its
// baseline was compared, not adopted: its "unchanged" stands.
func MarkDryRunStep(s *flow.StepReport) {
	if s.Baseline != nil && s.Baseline.State == flow.BaselineCompared {
		return
	}
	if s.Kind == string(flow.KindSnapshot) && s.Status == flow.StatusPass && s.SnapshotKey != "" {
		_, failed, _ := strings.Cut(s.Reason, hadFailed)
		s.Reason = fmt.Sprintf("dry run: baseline not written (%s)", s.SnapshotKey)
		if failed != "" {
			s.Reason += hadFailed + failed
		}
	}
}
