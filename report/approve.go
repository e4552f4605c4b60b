package report

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/toolserver/toolserver/internal/atomicfile"
	"github.com/toolserver/toolserver/snapshot"
)

// Selection picks the snapshots of a report that approve adopts: every
// approvable one (All), those of the flows and snapshots named (both
// must match when both are given), or those the page points at (a flow
// by its index in the report, a snapshot by its flow's index and step).
type Selection struct {
	All         bool
	Flows       []string
	Snapshots   []string
	FlowIndexes []int
	Items       []Item
}

// Item is a snapshot as the page names it.
type Item struct {
	Flow int `json:"flow"`
	Step int `json:"step"`
}

// Empty reports whether the selection names nothing.
func (s Selection) Empty() bool {
	return !s.All && len(s.Flows) == 0 && len(s.Snapshots) == 0 && len(s.FlowIndexes) == 0 && len(s.Items) == 0
}

// picks reports whether the selection includes snapshot s of flow i.
func (s Selection) picks(i int, fl Flow, snap Snapshot) bool {
	switch {
	case s.All, slices.Contains(s.FlowIndexes, i), slices.Contains(s.Items, Item{Flow: i, Step: snap.Step}):
		return true
	case len(s.Flows) == 0 && len(s.Snapshots) == 0:
		return false
	}
	flowOK := len(s.Flows) == 0 || slices.Contains(s.Flows, fl.Report.Flow) || slices.Contains(s.Flows, snap.Flow)
	snapOK := len(s.Snapshots) == 0 || slices.ContainsFunc(s.Snapshots, func(k string) bool { return keyMatches(snap.Key, k) })
	return flowOK && snapOK
}

// keyMatches reports whether a --snapshot value names key: the key
// itself, without .png, or the snapshot's name (the part before __).
func keyMatches(key, k string) bool {
	stem := strings.TrimSuffix(key, ".png")
	name, _, _ := strings.Cut(stem, "__")
	return k == key || k == stem || k == name
}

// Result is what approve did with one snapshot.
type Result struct {
	Flow     int    `json:"flow"`
	Step     int    `json:"step"`
	FlowName string `json:"flowName"`
	Key      string `json:"key"`
	// Baseline is the baseline's path as the report records it
	// (relative to the project).
	Baseline string `json:"baseline"`
	Written  bool   `json:"written"`
	DryRun   bool   `json:"dryRun,omitempty"`
	Bytes    int    `json:"bytes,omitempty"`
	// Message says why the baseline was not written.
	Message string `json:"message,omitempty"`
}

// MaxImageBytes caps an image approve reads from a report.
const MaxImageBytes = 64 << 20

// pngSignature starts every PNG file.
var pngSignature = []byte("\x89PNG\r\n\x1a\n")

// Approve adopts the current images of the selected failed or missing
// snapshots of the report in dir as baselines of the project at
// project. It writes only inside the baseline directories the report
// records for the snapshot's run, each file through a temp file and one
// rename, confined to the project by os.Root (no symbolic link or ".."
// leads out), and only over a baseline that still has the hash the run
// recorded (none, for a missing one), so a change made since the run is
// never overwritten. A dry run checks the same and writes nothing.
//
// The error is for a selection that names no snapshot of the report, a
// project that cannot be opened, or the wrong project (see
// checkProject); each refusal is a Result. A selection whose snapshots
// all passed has nothing to approve: no result and no error.
func Approve(dir, project string, r *Report, sel Selection, dryRun bool) ([]Result, error) {
	if sel.Empty() {
		return nil, errors.New("nothing selected: no flow, no snapshot and not all")
	}
	picked := pickedSnapshots(r, sel)
	if len(picked) == 0 && !sel.All {
		return nil, fmt.Errorf("nothing matches: no snapshot of the report matches%s", sel.describe())
	}
	images, err := os.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	defer images.Close()
	proj, err := os.OpenRoot(project)
	if err != nil {
		return nil, fmt.Errorf("the project: %w", err)
	}
	defer proj.Close()
	if err := checkProject(r, proj, project, picked); err != nil {
		return nil, err
	}
	var k *keeper
	if !dryRun {
		k = &keeper{report: images, rec: approval{Project: project}}
	}
	out := []Result{}
	for _, p := range picked {
		fl, s := r.Flows[p.flow], p.snap
		if !s.Approvable() {
			continue
		}
		res := Result{Flow: p.flow, Step: s.Step, FlowName: fl.Report.Flow, Key: s.Key, Baseline: s.Baseline, DryRun: dryRun}
		res.Bytes, res.Message = approveOne(images, proj, r.run(fl.Run), s, k)
		res.Written = res.Message == "" && !dryRun
		out = append(out, res)
	}
	if k != nil {
		if err := k.commit(); err != nil {
			return out, fmt.Errorf("the baselines are written, but the record of what they replaced, for approve --undo, is not: %w", err)
		}
	}
	return out, nil
}

// pick is a snapshot a selection picks, with its flow's index.
type pick struct {
	flow int
	snap Snapshot
}

// pickedSnapshots are the snapshots of the report sel picks, approvable
// or not.
func pickedSnapshots(r *Report, sel Selection) []pick {
	var out []pick
	for i, fl := range r.Flows {
		for _, s := range fl.Snapshots {
			if sel.picks(i, fl, s) {
				out = append(out, pick{i, s})
			}
		}
	}
	return out
}

// checkProject refuses a project that is not the one the run ran in: a
// snapshot's baseline lies in __baselines__ beside its flow files, so
// the directory that holds __baselines__ exists in the run's project
// (its flows were read from there). A project without it is the wrong
// one, said plainly, rather than every baseline "gone since the run".
func checkProject(r *Report, proj *os.Root, project string, picks []pick) error {
	for _, p := range picks {
		s := p.snap
		run := r.run(r.Flows[p.flow].Run)
		if !s.Approvable() {
			continue
		}
		if _, why := baselineTarget(run, s.Baseline); why != "" {
			continue // refused on its own, below
		}
		home := flowsDirOf(s.Baseline)
		if home == "" {
			continue // __baselines__ at the project's root
		}
		if _, err := proj.Stat(filepath.FromSlash(home)); !errors.Is(err, fs.ErrNotExist) {
			continue
		}
		abs, err := filepath.Abs(project)
		if err != nil {
			abs = project
		}
		ran := "the project the run ran in"
		if run.Project != "" {
			ran += " (" + run.Project + ")"
		}
		return fmt.Errorf("wrong project: looked for %s/ (where %s lies) in %s, and it is not there; give --project DIR, your checkout of %s", home, s.Baseline, abs, ran)
	}
	return nil
}

// flowsDirOf is the directory of a baseline's path (as baselineTarget
// accepts it) that holds its __baselines__ directory; "" for the
// project's root.
func flowsDirOf(p string) string {
	parts := strings.Split(path.Dir(p), "/")
	i := slices.Index(parts, snapshot.BaselinesDirName)
	return path.Join(parts[:i]...)
}

// describe names a CLI selection in a message.
func (s Selection) describe() string {
	var parts []string
	if len(s.Flows) > 0 {
		parts = append(parts, "--flow "+strings.Join(s.Flows, ", "))
	}
	if len(s.Snapshots) > 0 {
		parts = append(parts, "--snapshot "+strings.Join(s.Snapshots, ", "))
	}
	if len(parts) == 0 {
		return " the selection"
	}
	return " " + strings.Join(parts, " and ")
}

// approveOne checks and writes one baseline, the bytes it replaces kept
// by k first; it returns the image's size and, when it refused, why. A
// nil k is a dry run: it checks and writes nothing.
func approveOne(images, proj *os.Root, run *Run, s Snapshot, k *keeper) (int, string) {
	target, why := baselineTarget(run, s.Baseline)
	if why != "" {
		return 0, why
	}
	img, why := readImage(images, s.Images.Current)
	if why != "" {
		return 0, why
	}
	now, err := proj.ReadFile(target)
	switch {
	case s.BaselineSHA256 == "" && s.Status == SnapFailed:
		return len(img), "the report records no hash of the baseline it compared with, so a change since the run could not be told; re-run the flow"
	case s.BaselineSHA256 == "" && err == nil:
		return len(img), "it exists now and did not when the run ran; it is not overwritten (re-run the flow to compare with it)"
	case s.BaselineSHA256 == "" && !errors.Is(err, os.ErrNotExist):
		return len(img), err.Error()
	case s.BaselineSHA256 != "" && err != nil:
		return len(img), fmt.Sprintf("changed on disk since the run (it is gone: %v); it is not written", err)
	case s.BaselineSHA256 != "" && hashOf(now) != s.BaselineSHA256:
		return len(img), fmt.Sprintf("changed on disk since the run (sha256 %.12s… when it ran, %.12s… now); it is not overwritten (re-run the flow to review the change)", s.BaselineSHA256, hashOf(now))
	}
	if k == nil {
		return len(img), ""
	}
	before, kerr := k.keep(now, err == nil)
	if kerr != nil {
		return len(img), fmt.Sprintf("the baseline it replaces could not be kept for approve --undo (%v); it is not overwritten", kerr)
	}
	if err := proj.MkdirAll(filepath.Dir(target), 0o755); err != nil {
		return len(img), err.Error()
	}
	if err := atomicfile.WriteFileIn(proj, target, img); err != nil {
		return len(img), err.Error()
	}
	k.wrote(target, before, img)
	return len(img), ""
}

// baselineTarget checks a baseline's path from a report against the
// run's baseline directories and returns it as a path of this machine,
// relative to the project; else why it is refused.
func baselineTarget(run *Run, p string) (string, string) {
	if run == nil {
		return "", "the report names no run for it"
	}
	switch {
	case p == "":
		return "", "the report records no baseline path for it"
	case path.IsAbs(p) || filepath.IsAbs(p):
		return "", "the path is outside the project the run ran in; approve writes only inside the project's baseline directories"
	case !filepath.IsLocal(filepath.FromSlash(p)) || path.Clean(p) != p || strings.Contains(p, `\`):
		return "", "not a plain path inside the project; approve writes only inside the project's baseline directories"
	case !strings.HasSuffix(p, ".png"):
		return "", "not a .png file; approve writes only baseline images"
	}
	dir := path.Dir(p)
	if !slices.Contains(run.BaselineDirs, dir) || !slices.Contains(strings.Split(dir, "/"), snapshot.BaselinesDirName) {
		return "", fmt.Sprintf("not in a baseline directory of the run (%s); approve writes only there", strings.Join(run.BaselineDirs, ", "))
	}
	return filepath.FromSlash(p), ""
}

// readImageFile reads the image rel (a path of the report) through
// root, which keeps it inside the report, capped at MaxImageBytes; the
// error names it.
func readImageFile(root *os.Root, rel string) ([]byte, error) {
	f, err := root.Open(filepath.FromSlash(rel))
	if err != nil {
		return nil, fmt.Errorf("the report's image %s: %w", rel, err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxImageBytes+1))
	switch {
	case err != nil:
		return nil, fmt.Errorf("the report's image %s: %w", rel, err)
	case len(data) > MaxImageBytes:
		return nil, fmt.Errorf("the report's image %s is larger than %d MiB", rel, MaxImageBytes>>20)
	}
	return data, nil
}

// readImage reads a report's image (a path relative to the report's
// directory, confined to it); else why not.
func readImage(images *os.Root, rel string) ([]byte, string) {
	if !filepath.IsLocal(filepath.FromSlash(rel)) || !strings.HasPrefix(rel, ImagesDir+"/") {
		return nil, fmt.Sprintf("the report's image %q is not in its %s directory", rel, ImagesDir)
	}
	data, err := readImageFile(images, rel)
	switch {
	case err != nil:
		return nil, err.Error()
	case !bytes.HasPrefix(data, pngSignature):
		return nil, fmt.Sprintf("the report's image %s is not a PNG file", rel)
	}
	return data, ""
}

// Project is the project the report's runs ran in, for approving when no
// project is given: the one every run records, when it is a directory on
// this machine. Else it is "" with why not, and the caller falls back on
// the current directory (the checkout of a report made elsewhere, as on
// a CI runner), which checkProject then tells from the wrong project.
func (r *Report) Project() (dir, whyNot string) {
	var projects []string
	for _, run := range r.Runs {
		if run.Project != "" && !slices.Contains(projects, run.Project) {
			projects = append(projects, run.Project)
		}
	}
	switch {
	case len(projects) == 0:
		return "", "the report records no project"
	case len(projects) > 1:
		return "", fmt.Sprintf("the report's runs ran in %d projects", len(projects))
	}
	if fi, err := os.Stat(projects[0]); err != nil || !fi.IsDir() || !filepath.IsAbs(projects[0]) {
		return "", fmt.Sprintf("the run's project %s is not on this machine", projects[0])
	}
	return projects[0], ""
}

// ApproveInto is the project approvals of r write into, absolute: dir
// when one is given (--project); else the project the report records
// (Project), approve being run from anywhere on the machine the run ran
// on; else the current directory, the checkout of a report made
// elsewhere. from says which when dir was not given: "the project the
// run ran in", or "the current directory: " and why not the recorded
// one.
func (r *Report) ApproveInto(dir string) (project, from string, err error) {
	if dir != "" {
		project, err = filepath.Abs(dir)
		return project, "", err
	}
	project, whyNot := r.Project()
	if whyNot == "" {
		return project, "the project the run ran in", nil
	}
	project, err = os.Getwd()
	return project, "the current directory: " + whyNot, err
}
