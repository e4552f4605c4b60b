// Command toolserver is the visual-testing tool-server for headless Chromium:
// it serves Argent's tool-server protocol, runs YAML flows, and compares
// screenshots with baseline PNGs. Each command lives in a file of its own
// (cmd_<name>.go) whose cobra RunE only calls a runX(ctx, opts, args) that
// tests may call directly; app.go wires the commands together and exit.go
// maps errors to exit codes.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], streams{stdout: os.Stdout, stderr: os.Stderr, stdin: os.Stdin, getenv: os.Getenv})
	stop()
	os.Exit(code)
}

// run parses args, runs the command they name with the process s
// describes, and returns the exit code.
func run(ctx context.Context, args []string, s streams) int {
	root := newRootCommand(s)
	if args == nil {
		// cobra reads os.Args when given nil.
		args = []string{}
	}
	root.SetArgs(args)
	cmd, err := root.ExecuteContextC(ctx)
	return exitReport(s.stderr, cmd, err)
}
