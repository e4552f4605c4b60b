package main

import (
	"fmt"
	"os"

	"github.com/toolserver/toolserver/flow"
	flowrun "github.com/toolserver/toolserver/flow/run"
)

// The actions of a baselinePlan.
const (
	planNew    = "new"
	planUpdate = "update"
)

// baselinePlan is a baseline that flow run --dry-run would have written.
type baselinePlan struct {
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
	flowrun.Source
	plans []baselinePlan
}

// WriteBaseline implements flowrun.Source: it records the write.
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
	updated := err == nil
	action := planNew
	if updated {
		action = planUpdate
	}
	s.plans = append(s.plans, baselinePlan{Path: path, Action: action, Bytes: len(png)})
	return updated, nil
}

// linkedPlans turns the baselineWrites of a linked dry run's result into
// plans; the refusals among them are left to printRefusals.
func linkedPlans(writes []flow.BaselineWrite) []baselinePlan {
	var out []baselinePlan
	for _, w := range writes {
		if w.Plan == nil {
			continue
		}
		action := planNew
		if w.Plan.Updated {
			action = planUpdate
		}
		out = append(out, baselinePlan{Path: w.Path, Action: action, Bytes: w.Plan.Bytes})
	}
	return out
}

// markDryRun rewrites the reason of each step whose baseline the dry
// run did not write.
func markDryRun(rep *flow.Report) {
	for i := range rep.Steps {
		markDryRunStep(&rep.Steps[i])
	}
}

// markDryRunStep rewrites the reason of an adoption: a snapshot that
// passed with a baseline key is one (a comparison that passes reports
// no key), and its reason would say "written".
func markDryRunStep(s *flow.StepReport) {
	if s.Kind == string(flow.KindSnapshot) && s.Status == flow.StatusPass && s.SnapshotKey != "" {
		s.Reason = fmt.Sprintf("dry run: baseline not written (%s)", s.SnapshotKey)
	}
}
