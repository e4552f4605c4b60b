// Package report owns the review loop's report of a flow run: its data
// (report.json), the static page that shows it (index.html, opened from
// file:// with no server), the images beside them, merging the reports of
// several runs, and approving a report's current images as baselines.
//
// A report directory holds index.html, report.json and images/. Every
// path inside report.json that names an image is relative to the
// directory, with forward slashes, so the folder can be uploaded as one CI
// artifact and opened anywhere. A baseline's path is relative to the
// project the run ran in, so a report made on a CI runner approves into a
// developer's checkout of the same project.
package report

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/toolserver/toolserver/flow"
)

// The files of a report directory.
const (
	DataFile  = "report.json"
	PageFile  = "index.html"
	ImagesDir = "images"
)

// Format is the version of report.json's shape; Read refuses others.
const Format = 1

// MaxDataBytes caps report.json as Read reads it: a report names its
// images, it does not hold them.
const MaxDataBytes = 64 << 20

// Report is report.json: the runs it covers (one, or several merged) and
// their flows.
type Report struct {
	Format     int       `json:"format"`
	Toolserver Version   `json:"toolserver"`
	CreatedAt  time.Time `json:"createdAt"`
	Runs       []Run     `json:"runs"`
	Flows      []Flow    `json:"flows"`
	// UnusedBaselines are the baselines no snapshot step of the project
	// reads (relative to the project), listed by a run of all its flows.
	UnusedBaselines []string `json:"unusedBaselines,omitempty"`
}

// Version is the toolserver that wrote a report or ran a run.
type Version struct {
	Version string `json:"version"`
	Commit  string `json:"commit,omitempty"`
}

// Run is one flow run command's part of a report.
type Run struct {
	// ID is the run's number in the report ("1", "2", …); Flow.Run
	// refers to it.
	ID string `json:"id"`
	// Label names the report a merged run came from.
	Label      string  `json:"label,omitempty"`
	Device     string  `json:"device"`
	Toolserver Version `json:"toolserver"`
	// Project is the project directory as the run saw it (absolute).
	Project string `json:"project"`
	// BaselineDirs are the baseline directories of the run's
	// snapshots, relative to the project with forward slashes: the only
	// directories approve writes in.
	BaselineDirs []string `json:"baselineDirs"`
	// Linked is the tool-server the run linked to, when it did.
	Linked          string `json:"linked,omitempty"`
	UpdateBaselines bool   `json:"updateBaselines,omitempty"`
	// UpdateOnly narrows UpdateBaselines: changed or missing.
	UpdateOnly string    `json:"updateOnly,omitempty"`
	DryRun     bool      `json:"dryRun,omitempty"`
	StartedAt  time.Time `json:"startedAt"`
	DurationMs float64   `json:"durationMs"`
	Git        *Git      `json:"git,omitempty"`
}

// Git is the checkout a run ran in.
type Git struct {
	Commit string `json:"commit"`
	Branch string `json:"branch,omitempty"`
	Dirty  bool   `json:"dirty,omitempty"`
}

// The statuses of a flow in a report.
const (
	FlowPassed  = "passed"
	FlowFailed  = "failed"
	FlowErrored = "errored"
	FlowNotRun  = "notRun"
)

// Flow is one flow of a run: the report flow run --json prints for it
// (its artifacts' paths are the report's images) and its snapshots.
type Flow struct {
	Run       string       `json:"run"`
	Status    string       `json:"status"`
	Report    *flow.Report `json:"report"`
	Snapshots []Snapshot   `json:"snapshots"`
}

// The statuses of a snapshot in a report: its outcome
// (flow.SnapshotOutcome).
const (
	SnapPassed  = flow.SnapshotPassed
	SnapFailed  = flow.SnapshotFailed
	SnapMissing = flow.SnapshotMissing
	SnapNew     = flow.SnapshotNew
	SnapUpdated = flow.SnapshotUpdated
)

// Snapshot is a snapshot step of a flow with the images to review it.
type Snapshot struct {
	// Step is the step's index in the flow's report.
	Step int `json:"step"`
	// Flow is the flow or fragment whose step it is.
	Flow   string `json:"flow"`
	Key    string `json:"key"`
	Status string `json:"status"`
	// Baseline is the baseline's path relative to the run's project
	// (forward slashes), or absolute when it lies outside the project.
	Baseline string `json:"baseline"`
	// BaselineSHA256 is the hash of the baseline the run compared with
	// (failed and passed snapshots); empty when there was none. approve
	// writes only over a file that still has it.
	BaselineSHA256 string `json:"baselineSha256,omitempty"`
	Images         Images `json:"images"`
}

// Images are a snapshot's images, relative to the report directory.
// Current is the capture (a new baseline's image when the run wrote one).
type Images struct {
	Baseline string `json:"baseline,omitempty"`
	Current  string `json:"current,omitempty"`
	Diff     string `json:"diff,omitempty"`
}

// Approvable reports whether approve may adopt the snapshot's current
// image: it failed or had no baseline, and its capture is in the report.
func (s Snapshot) Approvable() bool {
	return (s.Status == SnapFailed || s.Status == SnapMissing) && s.Images.Current != ""
}

// Read reads the report of directory dir.
func Read(dir string) (*Report, error) {
	f, err := os.Open(filepath.Join(dir, DataFile))
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("%s is not a report directory: it has no %s", dir, DataFile)
		}
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, MaxDataBytes+1))
	if err != nil {
		return nil, err
	}
	if len(b) > MaxDataBytes {
		return nil, fmt.Errorf("%s: larger than the %d MiB a report's data may be", filepath.Join(dir, DataFile), MaxDataBytes>>20)
	}
	var r Report
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(dir, DataFile), err)
	}
	if r.Format != Format {
		return nil, fmt.Errorf("%s: format %d, this toolserver reads format %d", filepath.Join(dir, DataFile), r.Format, Format)
	}
	for i, fl := range r.Flows {
		if fl.Report == nil {
			return nil, fmt.Errorf("%s: flows[%d] has no report", filepath.Join(dir, DataFile), i)
		}
		if r.run(fl.Run) == nil {
			return nil, fmt.Errorf("%s: flows[%d] names run %q, which the report does not have", filepath.Join(dir, DataFile), i, fl.Run)
		}
	}
	return &r, nil
}

// run returns the run with the ID, or nil.
func (r *Report) run(id string) *Run {
	for i := range r.Runs {
		if r.Runs[i].ID == id {
			return &r.Runs[i]
		}
	}
	return nil
}

// FlowStatus is a flow report's status in a report.
func FlowStatus(rep *flow.Report) string {
	switch {
	case rep.OK:
		return FlowPassed
	case len(rep.Steps) == 0 && rep.Errored > 0:
		return FlowNotRun
	case rep.Failed == 0 && rep.Errored > 0:
		return FlowErrored
	}
	return FlowFailed
}
