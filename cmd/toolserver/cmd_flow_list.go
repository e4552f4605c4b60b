package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/toolserver/toolserver/flow"
	"github.com/toolserver/toolserver/internal/clientpath"
	"github.com/toolserver/toolserver/internal/printable"
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

// flowRow is one flow of flow list.
type flowRow struct {
	Name                  string `json:"name"`
	Kind                  string `json:"kind"`
	Steps                 int    `json:"steps"`
	ExecutionPrerequisite string `json:"executionPrerequisite,omitempty"`
	Error                 string `json:"error,omitempty"`
}

// The kinds of flowRow.
const (
	kindFlow     = "flow"
	kindFragment = "fragment"
	kindInvalid  = "invalid"
)

// runFlowList lists the flows of a project.
func runFlowList(ctx context.Context, opts flowListOptions, args []string) error {
	format, err := opts.output.resolve()
	if err != nil {
		return err
	}
	dir := clientpath.LocalFlowsDir(opts.project)
	rows, err := listFlows(dir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return usageError("flow list: %s does not exist; record a flow or pass --project", dir)
		}
		return err
	}
	if format != "" {
		if rows == nil {
			rows = []flowRow{}
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

// listFlows reads and parses the flow files directly in dir, in name
// order.
func listFlows(dir string) ([]flowRow, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var rows []flowRow
	for _, e := range ents {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".yaml") {
			continue
		}
		r := flowRow{Name: strings.TrimSuffix(e.Name(), ".yaml")}
		p := filepath.Join(dir, e.Name())
		data, err := os.ReadFile(p)
		if err == nil {
			var fl *flow.Flow
			if fl, err = flow.Parse(p, data); err == nil {
				r.Kind, r.Steps, r.ExecutionPrerequisite = kindFragment, len(fl.Steps), fl.ExecutionPrerequisite
				if fl.IsEndToEnd() {
					r.Kind = kindFlow
				}
			}
		}
		if err != nil {
			r.Kind, r.Error = kindInvalid, firstLine(err.Error())
		}
		rows = append(rows, r)
	}
	return rows, nil
}
