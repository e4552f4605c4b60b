// Command toolserver is the visual-testing tool-server for headless Chromium:
// it serves Argent's tool-server protocol, runs YAML flows, and compares
// screenshots with baseline PNGs. Each subcommand lives in a file of its own
// with a thin runX(ctx, args, stdout, stderr) that tests call directly.
package main

import (
	"context"
	"fmt"
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

// command is one subcommand of the binary.
type command struct {
	name  string
	usage string
	run   func(ctx context.Context, args []string, stdout, stderr io.Writer) error
}

func commands() []command {
	return []command{
		{"serve", "serve [--addr 127.0.0.1:3000] [--max-devices 4] [--insecure] [--allow-file-urls] [--no-host-files]   run the HTTP tool-server", runServe},
		{"flow", "flow run <name|file.yaml|dir> [flags] [--link URL] | flow list | flow schema   run and list flows", runFlow},
		{"snapshot", "snapshot diff A.png B.png [--threshold 0.1] [--include-aa] [--diff OUT.png] [--json]", runSnapshot},
		{"tools", "tools [--link URL] [describe NAME]   list the tools or print one tool's schema", runTools},
		{"call", "call NAME [--args JSON] [--link URL]   call one tool, in-process or on a tool-server", runCall},
		{"version", "version   print the version and commit", runVersion},
		{"healthcheck", "healthcheck [--addr 127.0.0.1:3000]   exit 0 when a running server answers /healthz", runHealthcheck},
	}
}

// run dispatches to a subcommand and maps its error to an exit code.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		printUsage(stderr)
		if len(args) == 0 {
			return exitUsage
		}
		return exitOK
	}
	for _, c := range commands() {
		if c.name == args[0] {
			return report(stderr, c.run(ctx, args[1:], stdout, stderr))
		}
	}
	fmt.Fprintf(stderr, "toolserver: unknown command %q\n", args[0])
	printUsage(stderr)
	return exitUsage
}

func printUsage(w io.Writer) {
	fmt.Fprintln(w, "usage: toolserver <command> [flags]")
	for _, c := range commands() {
		fmt.Fprintln(w, "  toolserver "+c.usage)
	}
}
