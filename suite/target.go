package suite

import (
	"cmp"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/toolserver/toolserver/flow"
	flowrun "github.com/toolserver/toolserver/flow/run"
	"github.com/toolserver/toolserver/internal/clientpath"
	"github.com/toolserver/toolserver/snapshot"
	"github.com/toolserver/toolserver/wire"
)

// Target is one flow file a run names.
type Target struct {
	// Name is the report's flow name.
	Name string
	Path string
	// Data, when set, is the flow's bytes, held in memory for a file that
	// need not exist at Path (toolserver storybook's generated flows): the
	// run reads them as a file at Path would read.
	Data []byte
	// Device, when set, runs this target on that device instead of the
	// run's.
	Device string
}

// Open reads the target's flow file: its bytes in memory, or the file.
func (t Target) Open() (*flow.File, error) {
	if t.Data == nil {
		return flowrun.Disk{}.OpenFile(t.Path)
	}
	return &flow.File{Path: t.Path, Canonical: t.Path, Spelling: wire.Spelling{State: wire.SpellListed}, Data: t.Data}, nil
}

// DeviceOr is the target's device, else the run's.
func (t Target) DeviceOr(run string) string { return cmp.Or(t.Device, run) }

// A TargetError is an argument that names no flow to run: a bad command
// line, not a failure.
type TargetError struct{ msg string }

func (e *TargetError) Error() string { return e.msg }

func targetError(format string, a ...any) error {
	return &TargetError{msg: fmt.Sprintf(format, a...)}
}

// Resolve turns the argument of a run into flow files: a name in
// <project>/.argent/flows, a .yaml file, or a directory of flows (its
// subdirectories too with recursive). A directory run skips fragments,
// files that do not start with a launch step: they run only inside other
// flows; note is told each one skipped. An argument that names no flow is
// a *TargetError.
func Resolve(project, arg string, recursive bool, note func(string)) ([]Target, error) {
	for _, seg := range strings.Split(filepath.ToSlash(arg), "/") {
		if seg == ".." {
			return nil, targetError("%q has a \"..\" segment; give the flow's path without one (or run from its project with --project)", arg)
		}
	}
	st, err := os.Stat(arg)
	switch {
	case err == nil && st.IsDir():
		return dirTargets(arg, recursive, note)
	case strings.HasSuffix(arg, ".yaml") || err == nil:
		abs, aerr := filepath.Abs(arg)
		if aerr != nil {
			return nil, aerr
		}
		return []Target{{Name: strings.TrimSuffix(filepath.Base(abs), ".yaml"), Path: abs}}, nil
	case flow.ValidName(arg):
		return []Target{{Name: arg, Path: filepath.Join(clientpath.LocalFlowsDir(project), arg+".yaml")}}, nil
	}
	return nil, targetError("%q is neither a flow name (letters, digits, _ and -), a .yaml file nor a directory", arg)
}

func dirTargets(dir string, recursive bool, note func(string)) ([]Target, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	var out []Target
	err = filepath.WalkDir(abs, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if p != abs && (!recursive || d.Name() == snapshot.BaselinesDirName || strings.HasPrefix(d.Name(), ".")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(d.Name(), ".yaml") {
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if fl, perr := flow.Parse(p, data); perr == nil && !fl.IsEndToEnd() {
			rel, _ := filepath.Rel(abs, p)
			note(fmt.Sprintf("skipping %s: a fragment (it does not start with launch:), run by the flows that use it", rel))
			return nil
		}
		rel, _ := filepath.Rel(abs, p)
		out = append(out, Target{Name: strings.TrimSuffix(filepath.ToSlash(rel), ".yaml"), Path: p})
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", dir, err)
	}
	if len(out) == 0 {
		hint := ""
		if !recursive {
			hint = " (add -r to look in subdirectories)"
		}
		return nil, targetError("no runnable flows in %s%s", dir, hint)
	}
	slices.SortFunc(out, func(a, b Target) int { return strings.Compare(a.Path, b.Path) })
	return out, nil
}
