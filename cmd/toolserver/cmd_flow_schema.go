package main

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/toolserver/toolserver/flow"
)

// flowSchemaOptions are the flags of flow schema (none of its own).
type flowSchemaOptions struct {
	streams
}

func newFlowSchemaCommand(s streams) *cobra.Command {
	opts := flowSchemaOptions{streams: s}
	cmd := &cobra.Command{
		Use:   "schema",
		Short: "Print the JSON Schema of a flow file, for editors",
		Example: `  toolserver flow schema > flow.schema.json
  # in a flow file, for the YAML language server:
  # yaml-language-server: $schema=./flow.schema.json`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runFlowSchema(cmd.Context(), opts, args)
		},
	}
	setExitStatus(cmd, exitStatusPlain)
	return cmd
}

// runFlowSchema prints the JSON Schema of a flow file.
func runFlowSchema(ctx context.Context, opts flowSchemaOptions, args []string) error {
	_, err := opts.stdout.Write(flow.Schema())
	return err
}
