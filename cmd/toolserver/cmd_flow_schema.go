package main

import (
	"context"
	"flag"
	"io"

	"github.com/toolserver/toolserver/flow"
)

// runFlowSchema prints the JSON Schema of a flow file, for editors:
// `toolserver flow schema > flow.schema.json`.
func runFlowSchema(ctx context.Context, args []string, stdout io.Writer, stderr io.Writer) error {
	fs := flag.NewFlagSet("flow schema", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { io.WriteString(stderr, "usage: toolserver flow schema\n") }
	if err := fs.Parse(args); err != nil {
		if err == flag.ErrHelp {
			return err
		}
		return withExit(exitUsage, err)
	}
	if fs.NArg() > 0 {
		return usageError("flow schema takes no arguments, got %q", fs.Args())
	}
	_, err := stdout.Write(flow.Schema())
	return err
}
