package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/toolserver/toolserver/internal/clientpath"
	"github.com/toolserver/toolserver/internal/printable"
	"github.com/toolserver/toolserver/suite"
)

// flowListOptions are the flags of flow list.
type flowListOptions struct {
	streams
	project string
	output  outputFlags
}

func newFlowListCommand(s streams) *cobra.Command {
	opts := flowListOptions{streams: s}
	cmd := &cobra.Command{
		Use:   "list [flags]",
		Short: "List the flows of a project",
		Long: `List <project>/.argent/flows/*.yaml with their kind: flow (it starts with
launch: and runs on its own), fragment (run by the flows that run: it) or
invalid (with the first line of the parse error).`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runFlowList(cmd.Context(), opts, args)
		},
	}
	setExitStatus(cmd, exitStatusPlain)
	f := cmd.Flags()
	f.StringVar(&opts.project, "project", ".", "the project `DIR`")
	opts.output.register(cmd, f)
	_ = cmd.MarkFlagDirname("project")
	return cmd
}

// runFlowList lists the flows of a project.
func runFlowList(ctx context.Context, opts flowListOptions, args []string) error {
	format, err := opts.output.resolve()
	if err != nil {
		return err
	}
	dir := clientpath.LocalFlowsDir(opts.project)
	rows, err := suite.List(dir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return usageError("flow list: %s does not exist; record a flow or pass --project", dir)
		}
		return err
	}
	if format != "" {
		if rows == nil {
			rows = []suite.Listed{}
		}
		return printData(opts.stdout, format, rows)
	}
	tw := tabwriter.NewWriter(opts.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tKIND\tSTEPS\tNOTE")
	for _, r := range rows {
		note := r.ExecutionPrerequisite
		if r.Error != "" {
			note = r.Error
		}
		// A file's name and its first error line are the file's: escaped.
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\n", printable.String(r.Name), r.Kind, r.Steps, printable.String(note))
	}
	return tw.Flush()
}
