package report

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/toolserver/toolserver/flow"
	"github.com/toolserver/toolserver/internal/atomicfile"
)

// Builder collects a run's flows into a report directory: the run's
// images go to ImagesDir as they are made, Finish writes the page and
// the data.
type Builder struct {
	dir string
	rep Report
	// warn receives what the report could not include (an image that
	// could not be copied); the run goes on.
	warn func(string)
}

// Create prepares dir for a new report of run: a new or empty directory,
// or one holding an earlier report, whose page, data and images it
// removes. Any other directory is refused, so a mistyped --report never
// deletes a file of the user's.
func Create(dir string, run Run, writer Version, warn func(string)) (*Builder, error) {
	if err := prepare(dir); err != nil {
		return nil, err
	}
	run.ID = "1"
	if run.BaselineDirs == nil {
		run.BaselineDirs = []string{}
	}
	b := &Builder{dir: dir, warn: warn, rep: Report{Format: Format, Toolserver: writer, Runs: []Run{run}, Flows: []Flow{}}}
	if err := os.MkdirAll(b.ImagesDir(), 0o755); err != nil {
		return nil, err
	}
	return b, nil
}

// prepare empties dir of an earlier report, or refuses a directory that
// holds something else.
func prepare(dir string) error {
	ents, err := os.ReadDir(dir)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return os.MkdirAll(dir, 0o755)
	case err != nil:
		return err
	case len(ents) == 0:
		return nil
	}
	if _, err := os.Stat(filepath.Join(dir, DataFile)); err != nil {
		return fmt.Errorf("%s is a directory that holds no report (no %s); give a new or empty directory, or an earlier report's, which is replaced", dir, DataFile)
	}
	// The last approve's record goes with the report it approved from.
	for _, name := range []string{DataFile, PageFile, ImagesDir, ApprovedDir} {
		if err := os.RemoveAll(filepath.Join(dir, name)); err != nil {
			return err
		}
	}
	return nil
}

// ImagesDir is where a run writes the images of its snapshots
// (<dir>/images/<flow>/<key>-<role>.png).
func (b *Builder) ImagesDir() string { return filepath.Join(b.dir, ImagesDir) }

// AddFlow adds a flow's report (as flow run prints it; the builder keeps
// its own copy) with the images of its snapshots: the run's artifacts,
// copied in when they are elsewhere, and the baselines of passing and
// new snapshots, copied from the project.
func (b *Builder) AddFlow(rep *flow.Report) {
	run := &b.rep.Runs[0]
	cp := *rep
	cp.Steps = slices.Clone(rep.Steps)
	fl := Flow{Run: run.ID, Status: FlowStatus(rep), Report: &cp, Snapshots: []Snapshot{}}
	for i := range cp.Steps {
		st := &cp.Steps[i]
		if st.SnapshotKey == "" {
			continue
		}
		st.Artifacts = maps.Clone(st.Artifacts)
		fl.Snapshots = append(fl.Snapshots, b.snapshot(run, st))
	}
	b.rep.Flows = append(b.rep.Flows, fl)
}

// snapshot gathers the images of a snapshot step and rewrites its
// artifacts' paths to them. Its status is the step's outcome
// (flow.SnapshotOutcome); which images show it is the report's.
func (b *Builder) snapshot(run *Run, st *flow.StepReport) Snapshot {
	s := Snapshot{Step: st.Index, Flow: st.Flow, Key: st.SnapshotKey, Status: flow.SnapshotOutcome(*st)}
	slug := slugOf(st.Flow)
	stem := strings.TrimSuffix(st.SnapshotKey, ".png")
	// The baseline artifact's bytes when take copied them in: its hash
	// is taken from them below instead of reading the copy again.
	var baseline []byte
	for _, role := range []string{"baseline", "current", "diff"} {
		a, ok := st.Artifacts[role]
		if !ok || a.Path == "" {
			continue
		}
		rel, copied, err := b.take(a.Path, slug)
		if err != nil {
			b.warn(fmt.Sprintf("--report: the %s image of %s (step %d of %s): %v", role, st.SnapshotKey, st.Index+1, st.Flow, err))
			continue
		}
		st.Artifacts[role] = flow.Artifact{Path: rel}
		switch role {
		case "baseline":
			s.Images.Baseline, baseline = rel, copied
		case "current":
			s.Images.Current = rel
		default:
			s.Images.Diff = rel
		}
	}
	if st.Baseline == nil {
		return s
	}
	s.Baseline = b.projectPath(run, st.Baseline.Path)
	switch st.Baseline.State {
	case flow.BaselineMissing:
		return s
	case flow.BaselineWritten, flow.BaselineUpdated:
		if st.Status != flow.StatusPass {
			return s // failed: nothing was adopted to show
		}
		if run.DryRun {
			return s // nothing was written to show
		}
		if rel, _, err := b.copyIn(st.Baseline.Path, slug, stem+"-new.png"); err == nil {
			s.Images.Current = rel
		} else {
			b.warn(fmt.Sprintf("--report: the new baseline %s: %v", st.Baseline.Path, err))
		}
		return s
	}
	// Compared: the hash of the baseline the run compared with, from
	// its artifact when it failed, else from the file.
	data := baseline
	switch {
	case s.Images.Baseline == "":
		rel, copied, err := b.copyIn(st.Baseline.Path, slug, stem+"-baseline.png")
		if err != nil {
			b.warn(fmt.Sprintf("--report: the baseline %s: %v", st.Baseline.Path, err))
			return s
		}
		s.Images.Baseline, data = rel, copied
	case data == nil:
		data, _ = os.ReadFile(filepath.Join(b.dir, filepath.FromSlash(s.Images.Baseline)))
	}
	if data != nil {
		s.BaselineSHA256 = hashOf(data)
	}
	return s
}

// projectPath is a baseline's path relative to the run's project, and
// notes its directory among the run's baseline directories; a path
// outside the project stays absolute.
func (b *Builder) projectPath(run *Run, p string) string {
	abs, err := filepath.Abs(p)
	if err != nil {
		return p
	}
	rel, err := filepath.Rel(run.Project, abs)
	if err != nil || !filepath.IsLocal(rel) {
		return abs
	}
	rel = filepath.ToSlash(rel)
	if d := path.Dir(rel); !slices.Contains(run.BaselineDirs, d) {
		run.BaselineDirs = append(run.BaselineDirs, d)
		slices.Sort(run.BaselineDirs)
	}
	return rel
}

// take returns the report's path of an image the run wrote: as it is
// when it lies in the images directory, else copied there, with the
// bytes copied (nil when nothing was copied).
func (b *Builder) take(p, slug string) (string, []byte, error) {
	imgs, err := filepath.Abs(b.ImagesDir())
	if err != nil {
		return "", nil, err
	}
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", nil, err
	}
	if rel, err := filepath.Rel(imgs, abs); err == nil && filepath.IsLocal(rel) {
		return ImagesDir + "/" + filepath.ToSlash(rel), nil, nil
	}
	return b.copyIn(p, slug, filepath.Base(p))
}

// copyIn copies the file at src to images/<slug>/<name> and returns that
// path and the bytes; a file already there with the same bytes is kept.
func (b *Builder) copyIn(src, slug, name string) (string, []byte, error) {
	data, err := os.ReadFile(src)
	if err != nil {
		return "", nil, err
	}
	rel := ImagesDir + "/" + slug + "/" + name
	dst := filepath.Join(b.dir, filepath.FromSlash(rel))
	if old, err := os.ReadFile(dst); err == nil && bytes.Equal(old, data) {
		return rel, data, nil
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return "", nil, err
	}
	return rel, data, atomicfile.WriteFile(dst, data)
}

// Finish ends the run at end and writes the report's page and data.
func (b *Builder) Finish(end time.Time) error {
	run := &b.rep.Runs[0]
	run.DurationMs = float64(end.Sub(run.StartedAt)) / float64(time.Millisecond)
	b.rep.CreatedAt = end.UTC()
	return Write(b.dir, &b.rep)
}

// SetUnusedBaselines records the project's baselines no snapshot step
// reads, for the end of the report.
func (b *Builder) SetUnusedBaselines(paths []string) { b.rep.UnusedBaselines = paths }

// Dir is the report's directory.
func (b *Builder) Dir() string { return b.dir }

var unsafeName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`[^A-Za-z0-9._-]+`) })

// slugOf is a flow's name as a directory name of images/.
func slugOf(name string) string {
	s := strings.Trim(unsafeName().ReplaceAllString(name, "_"), "._")
	if s == "" {
		return "flow"
	}
	return s
}

// hashOf is the hex SHA-256 of data.
func hashOf(data []byte) string {
	h := sha256.Sum256(data)
	return hex.EncodeToString(h[:])
}
