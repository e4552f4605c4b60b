// Command toolserver is the visual-testing tool-server for headless Chromium:
// it serves Argent's tool-server protocol, runs YAML flows, and compares
// screenshots with baseline PNGs. Each command lives in a file of its own
// (cmd_<name>.go) whose cobra RunE only calls a runX(ctx, opts, args) that
// tests may call directly; app.go wires the commands together and exit.go
// maps errors to exit codes.
package main

import (
	"context"
	"io"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// run parses args, runs the command they name and returns the exit code.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	root := newRootCommand(streams{stdout: stdout, stderr: stderr})
	if args == nil {
		// cobra reads os.Args when given nil.
		args = []string{}
	}
	root.SetArgs(args)
	cmd, err := root.ExecuteContextC(ctx)
	return report(stderr, cmd, err)
}
