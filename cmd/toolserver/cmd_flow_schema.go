package main

import (
	"context"
	"encoding/json"

	"github.com/spf13/cobra"

	"github.com/toolserver/toolserver/flow"
)

// flowSchemaOptions are the flags of flow schema.
type flowSchemaOptions struct {
	streams
	// config prints the schema of the project config file instead.
	config bool
	output outputFlags
}

func newFlowSchemaCommand(s streams) *cobra.Command {
	opts := flowSchemaOptions{streams: s}
	cmd := &cobra.Command{
		Use:   "schema",
		Short: "Print the JSON Schema of a flow file, for editors",
		Long: `Print the JSON Schema (draft 2020-12) of a flow file, for editors. With
--config, print the schema of the project config file
<project>/` + flow.ConfigFile + ` instead: the project's snapshot limits
(maxMismatch, maxDiffPixels, threshold) for the snapshots that set none.`,
		Example: `  toolserver flow schema > flow.schema.json
  toolserver flow schema --config > toolserver.schema.json
  # then, in .vscode/settings.json (the YAML language server):
  #   "yaml.schemas": {"./flow.schema.json": ".argent/flows/**/*.yaml",
  #                    "./toolserver.schema.json": ".argent/toolserver.yaml"}
  # or, in one flow file: # yaml-language-server: $schema=../../flow.schema.json`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runFlowSchema(cmd.Context(), opts, args)
		},
	}
	setExitStatus(cmd, exitStatusPlain)
	cmd.Flags().BoolVar(&opts.config, "config", false, "print the schema of "+flow.ConfigFile+" instead")
	opts.output.register(cmd, cmd.Flags())
	return cmd
}

// runFlowSchema prints the JSON Schema of a flow file, or of the project
// config file: as it is (JSON) by default and with -o json, or the same
// document as YAML, for editors that read their schemas in YAML.
func runFlowSchema(ctx context.Context, opts flowSchemaOptions, args []string) error {
	format, err := opts.output.resolve()
	if err != nil {
		return err
	}
	schema := flow.Schema()
	if opts.config {
		schema = flow.ConfigSchema()
	}
	if format == formatYAML {
		return printData(opts.stdout, format, json.RawMessage(schema))
	}
	_, err = opts.stdout.Write(schema)
	return err
}
