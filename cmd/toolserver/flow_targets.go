package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/toolserver/toolserver/flow"
)

// runFlow dispatches toolserver flow run|list|schema.
func runFlow(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		return usageError("usage: toolserver flow run <name|file.yaml|dir> [flags] | flow list [--project DIR] | flow schema")
	}
	switch args[0] {
	case "run":
		return runFlowRun(ctx, args[1:], stdout, stderr)
	case "list":
		return runFlowList(ctx, args[1:], stdout, stderr)
	case "schema":
		return runFlowSchema(ctx, args[1:], stdout, stderr)
	}
	return usageError("flow: unknown subcommand %q (want run, list or schema)", args[0])
}

// flowTarget is one flow file a run names.
type flowTarget struct {
	name string // the report's flow name
	path string
}

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

// runFlowList lists the flows of a project.
func runFlowList(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	flags := flag.NewFlagSet("flow list", flag.ContinueOnError)
	flags.SetOutput(stderr)
	project := flags.String("project", ".", "the project directory")
	asJSON := flags.Bool("json", false, "print JSON")
	if err := flags.Parse(args); err != nil {
		return withExit(exitUsage, err)
	}
	dir := filepath.Join(*project, ".argent", "flows")
	ents, err := os.ReadDir(dir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return usageError("flow list: %s does not exist; record a flow or pass --project", dir)
		}
		return err
	}
	type row struct {
		Name                  string `json:"name"`
		Kind                  string `json:"kind"`
		Steps                 int    `json:"steps"`
		ExecutionPrerequisite string `json:"executionPrerequisite,omitempty"`
		Error                 string `json:"error,omitempty"`
	}
	var rows []row
	for _, e := range ents {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".yaml") {
			continue
		}
		r := row{Name: strings.TrimSuffix(e.Name(), ".yaml")}
		p := filepath.Join(dir, e.Name())
		data, err := os.ReadFile(p)
		if err == nil {
			var fl *flow.Flow
			if fl, err = flow.Parse(p, data); err == nil {
				r.Kind, r.Steps, r.ExecutionPrerequisite = "fragment", len(fl.Steps), fl.ExecutionPrerequisite
				if fl.IsEndToEnd() {
					r.Kind = "flow"
				}
			}
		}
		if err != nil {
			r.Kind, r.Error = "invalid", firstLine(err.Error())
		}
		rows = append(rows, r)
	}
	if *asJSON {
		return printJSON(stdout, rows)
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tKIND\tSTEPS\tNOTE")
	for _, r := range rows {
		note := r.ExecutionPrerequisite
		if r.Error != "" {
			note = r.Error
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\n", r.Name, r.Kind, r.Steps, note)
	}
	return tw.Flush()
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return s
}
