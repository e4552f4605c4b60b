package main

import (
	"context"
	"errors"
	"fmt"
	"io"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/spf13/cobra"

	"github.com/toolserver/toolserver/runs"
	mcpserver "github.com/toolserver/toolserver/server/mcp"
)

// mcpOptions are the flags of mcp.
type mcpOptions struct {
	streams
	maxDevices int
	// stateDir, when set, keeps the session's runs and turns on the run
	// tools (list_runs, get_run, get_run_events, start_run, abandon_run,
	// resume_run).
	stateDir string
	keepRuns int
	// store names a fleet's run store instead.
	store storeFlags
}

func newMCPCommand(s streams) *cobra.Command {
	opts := mcpOptions{streams: s}
	cmd := &cobra.Command{
		Use:   "mcp [flags]",
		Short: "Serve the tools to a coding agent over MCP on stdin/stdout",
		Long: `Serve the tools over the Model Context Protocol on stdin and stdout, for a
coding agent that starts toolserver itself: every tool of "toolserver tools"
(open-url, screenshot, describe, the gestures, flow-execute, screenshot-diff,
…) with its schema, screenshots as image content, a flow's steps as
progress notifications. The devices run in this process. Logs go to stderr;
stdout carries the protocol alone. It ends when stdin closes, or on SIGINT
or SIGTERM. "toolserver serve" serves the same at /mcp over HTTP.

With --state-dir the session keeps its runs there and adds the run tools,
which answer as serve's /v1 control plane does: list_runs, get_run,
get_run_events, start_run (a run in the background), abandon_run and
resume_run. A run start_run started that is still going when the session
ends stays running with no driver; resume_run re-drives it later.`,
		Example: `  # An agent's configuration (mcpServers):
  #   "toolserver": {"command": "toolserver", "args": ["mcp"]}
  toolserver mcp --max-devices 2`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runMCP(cmd.Context(), opts, args)
		},
	}
	setExitStatus(cmd, exitStatusMCP)
	cmd.Flags().IntVar(&opts.maxDevices, "max-devices", 4, "how many devices may be booted at once")
	cmd.Flags().StringVar(&opts.stateDir, "state-dir", "", "keep the runs of the session in `DIR` and serve the run tools over it (list_runs, get_run, get_run_events, start_run, abandon_run, resume_run; a directory serve has open is refused)")
	cmd.Flags().IntVar(&opts.keepRuns, "keep-runs", runs.DefaultKeep, "with --state-dir or --store: keep the newest `N` finished runs")
	opts.store.register(cmd.Flags())
	_ = cmd.MarkFlagDirname("state-dir")
	return cmd
}

// runMCP serves one MCP session on stdin/stdout with the in-process
// tools until stdin closes or ctx ends.
func runMCP(ctx context.Context, opts mcpOptions, args []string) error {
	if opts.stdin == nil {
		return errors.New("mcp: no stdin to read")
	}
	a, err := newApp(appOptions{maxDevices: opts.maxDevices, stderr: opts.stderr, pool: opts.pool})
	if err != nil {
		return err
	}
	defer a.Close()
	a.warnNoChromium(opts.stderr)
	cfg := mcpserver.Config{Tools: a.tools, Artifacts: a.artifacts, TempDir: a.tmp, Version: version, Log: a.log}
	dsn, err := opts.store.resolve("mcp", opts.getenv)
	if err != nil {
		return err
	}
	if dsn != "" && opts.stateDir != "" {
		return usageError("mcp: give --state-dir or --store, not both")
	}
	st, err := openRunStore(ctx, "mcp", dsn, opts.stateDir, runs.Options{Keep: opts.keepRuns})
	if err != nil {
		return err
	}
	if st != nil {
		defer st.Close()
		// A run start_run started that is still going when the session
		// ends stays running with no driver, for a resume; the plane
		// stops before the store and the devices close.
		plane := a.newRunService(st, false, 0, 0)
		defer plane.Stop()
		cfg.Runs = plane
	}
	srv := mcpserver.New(cfg)
	// The session closes its reader when it ends: a pipe's pending read
	// then returns, so no goroutine is left reading it.
	in, ok := opts.stdin.(io.ReadCloser)
	if !ok {
		in = io.NopCloser(opts.stdin)
	}
	err = srv.Run(ctx, &sdk.IOTransport{Reader: in, Writer: nopWriteCloser{opts.stdout}})
	if err == nil || errors.Is(err, io.EOF) {
		return nil // stdin closed: the client is done
	}
	return fmt.Errorf("mcp: the session failed: %w", err)
}

// nopWriteCloser is stdout for the transport, which closes its writer at
// the end of the session: the process's stdout stays open.
type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }
