package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/toolserver/toolserver/internal/printable"
)

// toolsOptions are the flags of tools and tools describe.
type toolsOptions struct {
	streams
	link   string
	output outputFlags
}

func newToolsCommand(s streams) *cobra.Command {
	opts := toolsOptions{streams: s}
	cmd := &cobra.Command{
		Use:   "tools [flags]",
		Short: "List the tools, in-process or of a tool-server",
		Long: `List the tools this binary offers, or with --link those of the tool-server
at URL: one line per tool with the first sentence of its description, or
the GET /tools document with -o json|yaml.`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runTools(cmd.Context(), opts, args)
		},
	}
	setExitStatus(cmd, exitStatusPlain)
	pf := cmd.PersistentFlags()
	pf.StringVar(&opts.link, "link", "", "the tool-server at `URL` (default $"+envToolsURL+"; token from $"+envAuthToken+")")
	opts.output.register(cmd, pf)

	describe := &cobra.Command{
		Use:   "describe NAME [flags]",
		Short: "Print one tool's entry with its input schema",
		Long: `Print one tool's entry of GET /tools: its description, input schema, file
inputs and whether it runs long. JSON unless -o yaml.`,
		Args:              exactArgs(1, "a tool name"),
		ValidArgsFunction: completeToolNames,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runToolsDescribe(cmd.Context(), opts, args)
		},
	}
	setExitStatus(describe, exitStatusPlain)
	cmd.AddCommand(describe)
	return cmd
}

// runTools lists the tools.
func runTools(ctx context.Context, opts toolsOptions, args []string) error {
	format, err := opts.output.resolve()
	if err != nil {
		return err
	}
	if u := opts.linkURL(opts.link); u != "" {
		tools, err := opts.linkClient(u).Tools(ctx)
		if err != nil {
			return err
		}
		if format != "" {
			return printData(opts.stdout, format, map[string]any{"tools": tools})
		}
		for _, t := range tools {
			printToolLine(opts.stdout, t.Name, t.Description)
		}
		return nil
	}
	reg := toolCatalog()
	if format != "" {
		return printData(opts.stdout, format, map[string]any{"tools": reg.List()})
	}
	for _, t := range reg.List() {
		printToolLine(opts.stdout, t.Name, t.Description)
	}
	return nil
}

// printToolLine prints a tool's name and the first sentence of its
// description, escaped: a linked tool-server's list is its own words.
func printToolLine(w io.Writer, name, description string) {
	desc, _, _ := strings.Cut(description, ". ")
	fmt.Fprintf(w, "%-24s %s\n", printable.String(name), printable.String(desc))
}

// runToolsDescribe prints one tool's entry.
func runToolsDescribe(ctx context.Context, opts toolsOptions, args []string) error {
	format, err := opts.output.resolveOr(formatJSON)
	if err != nil {
		return err
	}
	name := args[0]
	if u := opts.linkURL(opts.link); u != "" {
		tools, err := opts.linkClient(u).Tools(ctx)
		if err != nil {
			return err
		}
		for _, t := range tools {
			if t.Name == name {
				return printData(opts.stdout, format, t)
			}
		}
		return usageError("unknown tool %q; toolserver tools --link %s lists them", name, u)
	}
	t, ok := toolCatalog().Get(name)
	if !ok {
		return usageError("unknown tool %q; toolserver tools lists them", name)
	}
	return printData(opts.stdout, format, t)
}
