package run

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/toolserver/toolserver/flow"
	"github.com/toolserver/toolserver/internal/clientpath"
	"github.com/toolserver/toolserver/snapshot"
)

// Baseline is a baseline file of a project: a .png under one of the
// __baselines__ directories of its flows, and whether a snapshot step
// would read it (docs/snapshots.md, "Unused baselines").
type Baseline struct {
	// Path is relative to the project, with forward slashes.
	Path  string `json:"path"`
	Bytes int64  `json:"bytes"`
	Used  bool   `json:"used"`
}

// BaselineUse is the project's baselines and what kept any of them from
// being told unused: a flow file that does not parse leaves every
// baseline of its run counted as used.
type BaselineUse struct {
	Baselines []Baseline `json:"baselines"`
	Warnings  []string   `json:"warnings,omitempty"`
}

// Unused is the paths of the baselines no snapshot step reads.
func (u BaselineUse) Unused() []string {
	var out []string
	for _, b := range u.Baselines {
		if !b.Used {
			out = append(out, b.Path)
		}
	}
	return out
}

// read is what a snapshot step reads in its run's baseline directory:
// the keys of its name, of one form (viewport, fullPage or the cropOn
// hash), at any device size.
type read struct {
	name, crop string
	full       bool
}

// usage is what the runs of a project read, by baseline directory.
type usage struct {
	reads map[string][]read
	// unknown holds the directories of runs with a file that did not
	// parse: what they read cannot be told.
	unknown  map[string]bool
	warnings []string
	// seen holds the files walked, by canonical path and directory.
	seen map[[2]string]bool
}

// ProjectBaselines lists the baselines under the __baselines__
// directories of <project>/.argent/flows and tells which a snapshot step
// reads. Every flow file there is taken as a run (a fragment run by
// itself reads nothing more than its callers do); run: fragments and
// nested flow-execute flows are followed as the runner follows them.
// Symbolic links are not followed into directories, so nothing outside
// the project's baseline directories is listed.
func ProjectBaselines(project string) (BaselineUse, error) {
	// The runner keys a run's baselines by the real path of its file.
	project, err := filepath.Abs(project)
	if err == nil {
		project, err = filepath.EvalSymlinks(project)
	}
	if err != nil {
		return BaselineUse{}, err
	}
	flows := clientpath.FlowsDir(project)
	u := &usage{reads: map[string][]read{}, unknown: map[string]bool{}, seen: map[[2]string]bool{}}
	pngs := []Baseline{}
	err = filepath.WalkDir(flows, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == flows && errors.Is(err, fs.ErrNotExist) {
				return fmt.Errorf("no flows directory %s", flows)
			}
			return err
		}
		inBaselines := slices.Contains(strings.Split(filepath.ToSlash(p), "/"), snapshot.BaselinesDirName)
		switch {
		case d.IsDir():
			return nil
		case inBaselines && strings.HasSuffix(d.Name(), ".png") && (d.Type().IsRegular() || d.Type()&fs.ModeSymlink != 0):
			rel, err := filepath.Rel(project, p)
			if err != nil {
				return err
			}
			var size int64
			if fi, err := d.Info(); err == nil {
				size = fi.Size()
			}
			pngs = append(pngs, Baseline{Path: filepath.ToSlash(rel), Bytes: size})
		case !inBaselines && strings.HasSuffix(d.Name(), ".yaml"):
			u.root(filepath.Dir(p), d.Name())
		}
		return nil
	})
	if err != nil {
		return BaselineUse{}, err
	}
	for i := range pngs {
		pngs[i].Used = u.uses(filepath.Join(project, filepath.FromSlash(pngs[i].Path)))
	}
	return BaselineUse{Baselines: pngs, Warnings: u.warnings}, nil
}

// root walks a flow file as the root of a run.
func (u *usage) root(dir, name string) {
	f, _ := Disk{}.Open(dir, name)
	stem := strings.TrimSuffix(name, ".yaml")
	u.walk(f, baselineDir(f.Canonical, stem), 0)
}

// walk records what the file f reads, in a run whose baselines are in
// bdir, and follows its fragments and nested flows.
func (u *usage) walk(f *flow.File, bdir string, depth int) {
	key := [2]string{f.Canonical, bdir}
	if u.seen[key] || depth > maxDepth {
		return
	}
	u.seen[key] = true
	if f.Err != nil {
		u.doubt(bdir, f.Path, f.Err)
		return
	}
	fl, err := flow.Parse(f.Canonical, f.Data)
	if err != nil {
		u.doubt(bdir, f.Path, err)
		return
	}
	for s := range fl.All() {
		switch d := s.Directive.(type) {
		case *flow.Snapshot:
			r := read{name: d.Name, full: d.FullPage}
			if d.CropOn != nil {
				r.crop, r.full = d.CropOn.CropHash(), false
			}
			u.reads[bdir] = append(u.reads[bdir], r)
		case *flow.Run:
			next, _ := Disk{}.Open(f.Dir(), d.File())
			u.walk(next, bdir, depth+1)
		}
	}
	for _, n := range fl.NestedFlows() {
		switch {
		case n.FlowPath != "" && clientpath.IsAbs(n.FlowPath):
			next, _ := Disk{}.Open(clientpath.Dir(n.FlowPath), clientpath.Base(n.FlowPath))
			u.walk(next, baselineDir(next.Canonical, strings.TrimSuffix(clientpath.Base(n.FlowPath), ".yaml")), depth+1)
		case n.Followable():
			next, _ := Disk{}.Open(n.FlowsDir(), n.FileName())
			u.walk(next, baselineDir(next.Canonical, n.Name), depth+1)
		}
	}
}

// maxDepth bounds the chain of files walked from a root, as a run
// bounds its nesting.
const maxDepth = 64

// doubt records a file whose reads cannot be told: its run's directory
// keeps every baseline.
func (u *usage) doubt(bdir, file string, err error) {
	if !u.unknown[bdir] {
		u.unknown[bdir] = true
		u.warnings = append(u.warnings, fmt.Sprintf("%s: %v; the baselines of %s are all counted as used", file, err, bdir))
	}
}

// chromiumKey is a baseline key of this runner: the name, the viewport,
// and the full-page or crop suffix.
var chromiumKey = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^(.+)__` + snapshot.Platform + `-[0-9]+x[0-9]+(-full|-crop-[0-9a-f]{8})?\.png$`)
})

// uses tells whether a snapshot step reads the baseline at path: one of
// its directory's reads names it, at any device size (the device is the
// run's, not the flow's). A key of another platform counts as read when
// its name is read there: another runner's rule keys it.
func (u *usage) uses(file string) bool {
	dir, key := filepath.Dir(file), filepath.Base(file)
	if u.unknown[dir] {
		return true
	}
	m := chromiumKey().FindStringSubmatch(key)
	for _, r := range u.reads[dir] {
		if m == nil {
			if strings.HasPrefix(key, r.name+"__") {
				return true
			}
			continue
		}
		if m[1] != r.name {
			continue
		}
		switch form := m[2]; {
		case r.crop != "" && form == "-crop-"+r.crop,
			r.crop == "" && r.full && form == "-full",
			r.crop == "" && !r.full && form == "":
			return true
		}
	}
	return false
}

// Prune deletes the baselines at paths (relative to project, forward
// slashes, as ProjectBaselines lists them) through os.Root, so no
// symbolic link or ".." leads out of the project, and only files under a
// __baselines__ directory: a symbolic link there is removed, never what
// it points to. It returns the paths it deleted and, per path it did not,
// why.
func Prune(project string, paths []string) (deleted []string, refused map[string]string, err error) {
	root, err := os.OpenRoot(project)
	if err != nil {
		return nil, nil, err
	}
	defer root.Close()
	refused = map[string]string{}
	for _, p := range paths {
		rel := filepath.FromSlash(p)
		switch fi, err := root.Lstat(rel); {
		case !filepath.IsLocal(rel) || !strings.HasSuffix(p, ".png") || !slices.Contains(strings.Split(path.Dir(p), "/"), snapshot.BaselinesDirName):
			refused[p] = "not a baseline under a " + snapshot.BaselinesDirName + " directory"
		case err != nil:
			refused[p] = err.Error()
		case fi.IsDir():
			refused[p] = "a directory"
		default:
			if err := root.Remove(rel); err != nil {
				refused[p] = err.Error()
				continue
			}
			deleted = append(deleted, p)
		}
	}
	return deleted, refused, nil
}
