package report

import (
	"encoding/json"
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

// ApprovedDir holds, beside a report, what its last approve replaced:
// the manifest and the replaced baselines, each named by the SHA-256 of
// its bytes (docs/snapshots.md, "Undoing an approve").
const ApprovedDir = "approved"

// approvedManifest is the manifest's name in ApprovedDir.
const approvedManifest = "manifest.json"

// maxManifestBytes caps the manifest undo reads.
const maxManifestBytes = 16 << 20

// approval is the manifest of an approve: the project it wrote into and
// each baseline it wrote.
type approval struct {
	Project   string     `json:"project"`
	Baselines []approved `json:"baselines"`
}

// approved is one baseline an approve wrote: its path relative to the
// project (forward slashes), the SHA-256 of the bytes it replaced (""
// when there was no file) and of the bytes it wrote.
type approved struct {
	Path   string `json:"path"`
	Before string `json:"before,omitempty"`
	After  string `json:"after"`
}

// keeper keeps the baselines an approve replaces, before it replaces
// them, and records the approve for Undo once it is done.
type keeper struct {
	report *os.Root
	rec    approval
}

// keep saves the bytes a baseline has before approve writes over it
// (none when exists is false).
func (k *keeper) keep(old []byte, exists bool) (string, error) {
	if !exists {
		return "", nil
	}
	sum := hashOf(old)
	if err := k.report.MkdirAll(ApprovedDir, 0o755); err != nil {
		return "", err
	}
	return sum, atomicfile.WriteFileIn(k.report, path.Join(ApprovedDir, sum+".png"), old)
}

// wrote records a baseline the approve wrote.
func (k *keeper) wrote(target, before string, img []byte) {
	k.rec.Baselines = append(k.rec.Baselines, approved{Path: filepath.ToSlash(target), Before: before, After: hashOf(img)})
}

// commit writes the manifest of an approve that wrote something, in one
// rename, so it replaces the last approve's; then it drops the kept
// files no entry names.
func (k *keeper) commit() error {
	if len(k.rec.Baselines) == 0 {
		return nil
	}
	return writeApproval(k.report, k.rec)
}

// writeApproval writes rec as the manifest (or removes the manifest when
// rec has no baseline) and drops the kept files rec does not name.
func writeApproval(root *os.Root, rec approval) error {
	name := path.Join(ApprovedDir, approvedManifest)
	if len(rec.Baselines) == 0 {
		if err := root.Remove(name); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	} else {
		data, err := json.MarshalIndent(rec, "", "  ")
		if err != nil {
			return err
		}
		if err := atomicfile.WriteFileIn(root, name, append(data, '\n')); err != nil {
			return err
		}
	}
	ents, err := fs.ReadDir(root.FS(), ApprovedDir)
	if err != nil {
		return nil
	}
	for _, e := range ents {
		sum, ok := strings.CutSuffix(e.Name(), ".png")
		if ok && !slices.ContainsFunc(rec.Baselines, func(a approved) bool { return a.Before == sum }) {
			_ = root.Remove(path.Join(ApprovedDir, e.Name()))
		}
	}
	return nil
}

// UndoResult is what Undo did with one baseline.
type UndoResult struct {
	// Baseline is its path relative to the project.
	Baseline string `json:"baseline"`
	// Action is restored (the replaced bytes are back) or removed (the
	// approve had created it); "" when it was refused.
	Action  string `json:"action,omitempty"`
	Message string `json:"message,omitempty"`
}

// The actions of an UndoResult.
const (
	UndoRestored = "restored"
	UndoRemoved  = "removed"
)

// ErrNothingToUndo is Undo's error for a report with no approve on
// record.
var ErrNothingToUndo = errors.New("nothing to undo: no approve of this report replaced a baseline")

// LastApproveProject is the project the last approve of the report in
// dir wrote into, or ErrNothingToUndo.
func LastApproveProject(dir string) (string, error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return "", err
	}
	defer root.Close()
	rec, err := readApproval(root)
	return rec.Project, err
}

// Undo restores the baselines the last approve of the report in dir
// wrote into project: each one that still has the bytes the approve
// wrote gets back the bytes it replaced, or is removed when the approve
// created it. One that changed since is refused, named, and stays on
// record for a later undo; the others leave the record.
func Undo(dir, project string) ([]UndoResult, error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	rec, err := readApproval(root)
	if err != nil {
		return nil, err
	}
	proj, err := os.OpenRoot(project)
	if err != nil {
		return nil, fmt.Errorf("the project: %w", err)
	}
	defer proj.Close()
	out := make([]UndoResult, 0, len(rec.Baselines))
	left := approval{Project: rec.Project}
	// Last written first: a baseline an approve wrote twice gets its
	// middle bytes back, then its first.
	for _, a := range slices.Backward(rec.Baselines) {
		res := UndoResult{Baseline: a.Path}
		res.Action, res.Message = undoOne(root, proj, a)
		if res.Message != "" {
			left.Baselines = append([]approved{a}, left.Baselines...)
		}
		out = append(out, res)
	}
	slices.Reverse(out)
	return out, writeApproval(root, left)
}

// undoOne restores one baseline; it returns what it did or why not.
func undoOne(report, proj *os.Root, a approved) (action, why string) {
	p := a.Path
	if !filepath.IsLocal(filepath.FromSlash(p)) || path.Clean(p) != p || strings.Contains(p, `\`) ||
		!strings.HasSuffix(p, ".png") || !slices.Contains(strings.Split(path.Dir(p), "/"), snapshot.BaselinesDirName) {
		return "", "not a baseline path inside the project; undo writes only baseline images"
	}
	target := filepath.FromSlash(p)
	now, err := proj.ReadFile(target)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "", "it is gone since the approve; nothing is restored"
	case err != nil:
		return "", err.Error()
	case hashOf(now) != a.After:
		return "", fmt.Sprintf("changed since the approve (sha256 %.12s… approved, %.12s… now); it is not restored", a.After, hashOf(now))
	case a.Before == "":
		if err := proj.Remove(target); err != nil {
			return "", err.Error()
		}
		return UndoRemoved, ""
	}
	old, err := readKept(report, a.Before)
	if err != nil {
		return "", err.Error()
	}
	if err := atomicfile.WriteFileIn(proj, target, old); err != nil {
		return "", err.Error()
	}
	return UndoRestored, ""
}

// readKept reads a kept baseline by its hash and checks it still has it.
func readKept(report *os.Root, sum string) ([]byte, error) {
	if len(sum) != 64 || strings.Trim(sum, "0123456789abcdef") != "" {
		return nil, fmt.Errorf("the manifest names the kept baseline %q, which is not a SHA-256", sum)
	}
	rel := path.Join(ApprovedDir, sum+".png")
	data, err := readImageFile(report, rel)
	switch {
	case err != nil:
		return nil, fmt.Errorf("the baseline it replaced: %w", err)
	case hashOf(data) != sum:
		return nil, fmt.Errorf("the kept baseline %s no longer has the bytes approve kept; nothing is restored", rel)
	}
	return data, nil
}

// readApproval reads the manifest of the last approve.
func readApproval(root *os.Root) (approval, error) {
	var rec approval
	name := path.Join(ApprovedDir, approvedManifest)
	f, err := root.Open(name)
	if errors.Is(err, fs.ErrNotExist) {
		return rec, ErrNothingToUndo
	}
	if err != nil {
		return rec, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxManifestBytes+1))
	switch {
	case err != nil:
		return rec, fmt.Errorf("%s: %w", name, err)
	case len(data) > maxManifestBytes:
		return rec, fmt.Errorf("%s: larger than %d MiB", name, maxManifestBytes>>20)
	}
	if err := json.Unmarshal(data, &rec); err != nil {
		return rec, fmt.Errorf("%s: %w", name, err)
	}
	if len(rec.Baselines) == 0 {
		return rec, ErrNothingToUndo
	}
	return rec, nil
}
