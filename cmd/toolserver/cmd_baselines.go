package main

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"text/tabwriter"

	"github.com/spf13/cobra"

	flowrun "github.com/toolserver/toolserver/flow/run"
	"github.com/toolserver/toolserver/internal/printable"
)

// newBaselinesCommand is the baselines group: list and prune.
func newBaselinesCommand(s streams) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "baselines",
		Short: "List the project's baselines; prune those no flow reads",
	}
	asGroup(cmd)
	cmd.AddCommand(newBaselinesListCommand(s), newBaselinesPruneCommand(s))
	return cmd
}

// baselinesOptions are the flags of baselines list and prune.
type baselinesOptions struct {
	streams
	project        string
	unused, dryRun bool
	output         outputFlags
}

// register adds the flags both commands take: --project and -o.
func (o *baselinesOptions) register(cmd *cobra.Command) {
	cmd.Flags().StringVar(&o.project, "project", ".", "the project `DIR`")
	o.output.register(cmd, cmd.Flags())
	_ = cmd.MarkFlagDirname("project")
}

const baselinesLong = `A baseline is unused when no snapshot: step would read it: every .yaml
under <project>/.argent/flows is taken as a run, with its run: fragments and
nested flow-execute flows followed as the runner follows them, and a
baseline of __baselines__/<flow>/ is read when a snapshot of that run has its
name and form (viewport, fullPage, or the cropOn selector's hash), at any
device size. A key of another platform (<name>__ios-…) counts as read when
its name is. A flow file that does not parse keeps every baseline of its
run, with a warning. Symbolic links are not followed into directories.`

func newBaselinesListCommand(s streams) *cobra.Command {
	opts := baselinesOptions{streams: s}
	cmd := &cobra.Command{
		Use:   "list [--unused] [--project DIR] [-o json|yaml]",
		Short: "List the baselines under the flows' __baselines__ directories",
		Long:  "List the .png files under the __baselines__ directories of <project>/.argent/flows, each used or unused.\n\n" + baselinesLong,
		Example: `  toolserver baselines list
  toolserver baselines list --unused -o json`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runBaselinesList(cmd.Context(), opts)
		},
	}
	setExitStatus(cmd, exitStatusPlain)
	opts.register(cmd)
	cmd.Flags().BoolVar(&opts.unused, "unused", false, "list only the baselines no snapshot step reads")
	return cmd
}

func newBaselinesPruneCommand(s streams) *cobra.Command {
	opts := baselinesOptions{streams: s}
	cmd := &cobra.Command{
		Use:   "prune [--dry-run] [--project DIR] [-o json|yaml]",
		Short: "Delete the baselines no flow reads",
		Long:  "Delete the unused baselines that baselines list --unused lists; --dry-run lists them and deletes nothing. It deletes only files under a __baselines__ directory of the project, through os.Root (no symbolic link or .. leads out; a link is removed, never what it points to).\n\n" + baselinesLong,
		Example: `  toolserver baselines prune --dry-run
  toolserver baselines prune`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runBaselinesPrune(cmd.Context(), opts)
		},
	}
	setExitStatus(cmd, exitStatusPrune)
	opts.register(cmd)
	cmd.Flags().BoolVar(&opts.dryRun, "dry-run", false, "delete nothing; list what would be deleted")
	return cmd
}

// projectBaselines reads the baselines of opts.project and prints the
// warnings of what could not be told on stderr.
func projectBaselines(opts baselinesOptions, format string) (flowrun.BaselineUse, error) {
	use, err := flowrun.ProjectBaselines(opts.project)
	if err != nil {
		return use, usageError("baselines: %s", printable.String(err.Error()))
	}
	if format == "" {
		for _, w := range use.Warnings {
			fmt.Fprintln(opts.stderr, "warning: "+printable.String(w))
		}
	}
	return use, nil
}

func runBaselinesList(_ context.Context, opts baselinesOptions) error {
	format, err := opts.output.resolve()
	if err != nil {
		return err
	}
	use, err := projectBaselines(opts, format)
	if err != nil {
		return err
	}
	if opts.unused {
		kept := use.Baselines[:0]
		for _, b := range use.Baselines {
			if !b.Used {
				kept = append(kept, b)
			}
		}
		use.Baselines = kept
	}
	if format != "" {
		return printData(opts.stdout, format, use)
	}
	tw := tabwriter.NewWriter(opts.stdout, 0, 4, 2, ' ', 0)
	for _, b := range use.Baselines {
		state := "used"
		if !b.Used {
			state = "unused"
		}
		fmt.Fprintf(tw, "%s\t%d bytes\t%s\n", state, b.Bytes, printable.String(b.Path))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(use.Baselines) == 0 && opts.unused {
		fmt.Fprintln(opts.stdout, "No unused baseline: every baseline is read by a snapshot step")
	}
	return nil
}

// pruned is what baselines prune prints with -o json|yaml.
type pruned struct {
	DryRun   bool              `json:"dryRun,omitempty"`
	Deleted  []string          `json:"deleted"`
	Refused  map[string]string `json:"refused,omitempty"`
	Warnings []string          `json:"warnings,omitempty"`
}

func runBaselinesPrune(_ context.Context, opts baselinesOptions) error {
	format, err := opts.output.resolve()
	if err != nil {
		return err
	}
	use, err := projectBaselines(opts, format)
	if err != nil {
		return err
	}
	unused := use.Unused()
	out := pruned{DryRun: opts.dryRun, Deleted: unused, Warnings: use.Warnings}
	if !opts.dryRun {
		out.Deleted, out.Refused, err = flowrun.Prune(opts.project, unused)
		if err != nil {
			return usageError("baselines prune: %s", printable.String(err.Error()))
		}
	}
	if out.Deleted == nil {
		out.Deleted = []string{}
	}
	if format != "" {
		if err := printData(opts.stdout, format, out); err != nil {
			return err
		}
	} else {
		printPruned(opts, out, len(unused))
	}
	if len(out.Refused) > 0 {
		return failed(fmt.Errorf("baselines prune: %d of %d %s not deleted", len(out.Refused), len(unused), plural(len(unused), "baseline", "baselines")))
	}
	return nil
}

// printPruned prints what prune deleted, or would, and what it refused.
func printPruned(opts baselinesOptions, out pruned, unused int) {
	verb := "✓ deleted"
	if opts.dryRun {
		verb = "· would delete"
	}
	for _, p := range out.Deleted {
		fmt.Fprintln(opts.stdout, verb+" "+printable.String(p))
	}
	for _, p := range slices.Sorted(maps.Keys(out.Refused)) {
		fmt.Fprintln(opts.stdout, printable.String("✗ refused "+p+": "+out.Refused[p]))
	}
	switch {
	case unused == 0:
		fmt.Fprintln(opts.stdout, "Nothing to prune: every baseline is read by a snapshot step")
	case opts.dryRun:
		fmt.Fprintf(opts.stdout, "Dry run: %d %s would be deleted; nothing was deleted\n", unused, plural(unused, "baseline", "baselines"))
	}
}
