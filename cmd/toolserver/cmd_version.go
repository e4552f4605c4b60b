package main

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"
)

// versionOptions are the flags of version.
type versionOptions struct {
	streams
	output outputFlags
}

func newVersionCommand(s streams) *cobra.Command {
	opts := versionOptions{streams: s}
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print the version and commit",
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runVersion(cmd.Context(), opts, args)
		},
	}
	setExitStatus(cmd, exitStatusPlain)
	opts.output.register(cmd, cmd.Flags())
	return cmd
}

// versionInfo is version's data for -o json|yaml: the parts of the line.
type versionInfo struct {
	Version string `json:"version"`
	Commit  string `json:"commit"`
	Go      string `json:"go"`
}

func runVersion(ctx context.Context, opts versionOptions, args []string) error {
	format, err := opts.output.resolve()
	if err != nil {
		return err
	}
	if format == "" {
		_, err := fmt.Fprintln(opts.stdout, versionLine())
		return err
	}
	return printData(opts.stdout, format, currentVersion())
}
