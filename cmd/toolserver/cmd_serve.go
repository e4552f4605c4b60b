package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/toolserver/toolserver/device/cdp"
	"github.com/toolserver/toolserver/server"
	mcpserver "github.com/toolserver/toolserver/server/mcp"
)

// serveOptions are the flags of serve.
type serveOptions struct {
	streams
	addr        string
	maxDevices  int
	insecure    bool
	allowFiles  bool
	noHostFiles bool
	allowHosts  []string // nil when --allow-hosts is not given
}

func newServeCommand(s streams) *cobra.Command {
	opts := serveOptions{streams: s}
	cmd := &cobra.Command{
		Use:   "serve [flags]",
		Short: "Run the HTTP tool-server",
		Long: `Serve Argent's tool-server protocol over HTTP: GET /tools, POST /tools/{name}
(JSON or an NDJSON stream), POST /upload, GET /artifacts/{id}, GET /healthz;
and the same tools to coding agents over MCP's streamable HTTP at /mcp.
With ARGENT_AUTH_TOKEN set every request needs "Authorization: Bearer <token>".
A wildcard bind (0.0.0.0, ::) refuses to start without a token unless
--insecure is given. With --allow-hosts, pages come only from the hosts
listed (launch, open-url, redirects and every request of a page): on a
cloud machine, this keeps the metadata address 169.254.169.254 out of reach.
SIGINT or SIGTERM stop it gracefully.`,
		Example: `  ARGENT_AUTH_TOKEN=$(openssl rand -hex 16) toolserver serve --addr 127.0.0.1:3000
  ARGENT_AUTH_TOKEN=$TOKEN toolserver serve --addr 0.0.0.0:3000 --allow-hosts staging.example.com,*.cdn.example.com`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runServe(cmd.Context(), opts, args)
		},
	}
	setExitStatus(cmd, exitStatusServe)
	f := cmd.Flags()
	f.StringVar(&opts.addr, "addr", "127.0.0.1:3000", "`host:port` to listen on")
	f.IntVar(&opts.maxDevices, "max-devices", 4, "how many devices may be booted at once")
	f.BoolVar(&opts.insecure, "insecure", false, "allow a wildcard bind without ARGENT_AUTH_TOKEN")
	f.BoolVar(&opts.allowFiles, "allow-file-urls", false, "let callers open file: URLs even with a wildcard bind (remote callers could then screenshot this machine's files)")
	f.BoolVar(&opts.noHostFiles, "no-host-files", false, "run a flow a client sends from its bytes, never from a file at the same path on this machine")
	f.StringSliceVar(&opts.allowHosts, "allow-hosts", nil, "the only `hosts` pages may come from (launch, open-url, and every request of a page): names, *.example.com, IP addresses; comma-separated or repeated")
	return cmd
}

// runServe serves until ctx ends.
func runServe(ctx context.Context, opts serveOptions, args []string) error {
	stderr := opts.stderr
	token := opts.getenv(envAuthToken)
	if server.IsWildcard(opts.addr) && token == "" && !opts.insecure {
		return usageError("serve: refusing to listen on %s without a token: anyone who can reach this machine could drive its browser and read the files it serves. Set ARGENT_AUTH_TOKEN, or pass --insecure if the network is yours alone", opts.addr)
	}
	var hosts *cdp.HostList
	if opts.allowHosts != nil {
		h, err := cdp.ParseHostList(opts.allowHosts)
		if err != nil {
			return usageError("serve: --allow-hosts: %v", err)
		}
		hosts = h
	}
	// A server that answers other machines never opens its own files for
	// them, unless told to.
	a, err := newApp(appOptions{maxDevices: opts.maxDevices, stderr: stderr, denyFileURLs: server.IsWildcard(opts.addr) && !opts.allowFiles, allowHosts: hosts, remote: server.IsWildcard(opts.addr), pool: opts.pool})
	if err != nil {
		return err
	}
	defer a.Close()
	a.flowTools.NoHostFiles = opts.noHostFiles
	if a.pool.Err() != nil {
		fmt.Fprintln(stderr, "toolserver: warning: no Chromium found; device tools will fail until CHROMIUM_PATH points at one (apt-get install chromium fonts-liberation)")
	}
	// MCP at /mcp, always on: the same tools behind the same token.
	agents := mcpserver.New(mcpserver.Config{Tools: a.tools, Artifacts: a.artifacts, TempDir: a.tmp, Version: version, Log: a.log, Runs: opts.runs})
	defer agents.Close()
	// An agent's open event stream would hold the graceful shutdown for
	// its 10 s: its session ends as the server starts to stop.
	stopAgents := context.AfterFunc(ctx, agents.Close)
	defer stopAgents()
	srv := server.New(server.Config{
		Addr: opts.addr, Token: token, Tools: a.tools, Artifacts: a.artifacts, Uploads: a.uploads,
		Log: a.log, TempDir: a.tmp, Version: version, MCP: agents.Handler(),
	})
	if err := srv.Listen(); err != nil {
		return err
	}
	a.sweepUploads(time.Minute)
	auth := "no token"
	if token != "" {
		auth = "bearer token required"
	}
	fmt.Fprintf(stderr, "toolserver %s listening on http://%s (%s)\n", version, srv.Addr(), auth)
	if hosts != nil {
		fmt.Fprintf(stderr, "toolserver: pages only from %s\n", hosts)
	}
	err = srv.Serve(ctx)
	if errors.Is(err, context.Canceled) {
		err = nil
	}
	return err
}
