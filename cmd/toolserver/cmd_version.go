package main

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"
)

// versionOptions are the flags of version (none of its own).
type versionOptions struct {
	streams
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
	return cmd
}

func runVersion(ctx context.Context, opts versionOptions, args []string) error {
	_, err := fmt.Fprintln(opts.stdout, versionLine())
	return err
}
