package main

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
	"github.com/toolserver/toolserver/wire"
)

// flowTarget is one flow file a run names.
type flowTarget struct {
	name string // the report's flow name
	path string
	// data, when set, is the flow's bytes, held in memory for a file
	// that need not exist at path (toolserver storybook's generated
	// flows): the run reads them as a file at path would read.
	data []byte
	// device, when set, runs this target on that device instead of the
	// run's --device.
	device string
}

// open reads the target's flow file: its bytes in memory, or the file.
func (t flowTarget) open() (*flow.File, error) {
	if t.data == nil {
		return flowrun.Disk{}.OpenFile(t.path)
	}
	return &flow.File{Path: t.path, Canonical: t.path, Spelling: wire.Spelling{State: wire.SpellListed}, Data: t.data}, nil
}

// deviceOr is the target's device, else the run's.
func (t flowTarget) deviceOr(run string) string { return cmp.Or(t.device, run) }

// resolveTargets turns the argument of flow run into flow files: a name
// in <project>/.argent/flows, a .yaml file, or a directory of flows (its
// subdirectories too with recursive). A directory run skips fragments:
// files that do not start with a launch step run only inside other flows.
func resolveTargets(project, arg string, recursive bool, note func(string)) ([]flowTarget, error) {
	for _, seg := range strings.Split(filepath.ToSlash(arg), "/") {
		if seg == ".." {
			return nil, usageError("flow run: %q has a \"..\" segment; give the flow's path without one (or run from its project with --project)", arg)
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
		return []flowTarget{{name: strings.TrimSuffix(filepath.Base(abs), ".yaml"), path: abs}}, nil
	case flow.ValidName(arg):
		return []flowTarget{{name: arg, path: filepath.Join(project, ".argent", "flows", arg+".yaml")}}, nil
	}
	return nil, usageError("flow run: %q is neither a flow name (letters, digits, _ and -), a .yaml file nor a directory", arg)
}

func dirTargets(dir string, recursive bool, note func(string)) ([]flowTarget, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	var out []flowTarget
	err = filepath.WalkDir(abs, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if p != abs && (!recursive || d.Name() == "__baselines__" || strings.HasPrefix(d.Name(), ".")) {
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
		out = append(out, flowTarget{name: strings.TrimSuffix(filepath.ToSlash(rel), ".yaml"), path: p})
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("flow run: read %s: %w", dir, err)
	}
	if len(out) == 0 {
		hint := ""
		if !recursive {
			hint = " (add -r to look in subdirectories)"
		}
		return nil, usageError("flow run: no runnable flows in %s%s", dir, hint)
	}
	slices.SortFunc(out, func(a, b flowTarget) int { return strings.Compare(a.path, b.path) })
	return out, nil
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return s
}
