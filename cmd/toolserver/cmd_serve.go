package main

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"time"

	linkserver "github.com/toolserver/toolserver/link/server"

	"github.com/spf13/cobra"

	"github.com/toolserver/toolserver/control"
	"github.com/toolserver/toolserver/dashboard"
	"github.com/toolserver/toolserver/device/cdp"
	"github.com/toolserver/toolserver/internal/printable"
	"github.com/toolserver/toolserver/runs"
	"github.com/toolserver/toolserver/server"
	mcpserver "github.com/toolserver/toolserver/server/mcp"
)

// serveOptions are the flags of serve.
type serveOptions struct {
	streams
	addr        string
	maxDevices  int
	queue       int
	insecure    bool
	allowFiles  bool
	noHostFiles bool
	allowHosts  []string // nil when --allow-hosts is not given
	// stateDir holds the run store ("" keeps none); keepRuns bounds it.
	stateDir string
	keepRuns int
	// maxStreams caps the /v1 event streams open at once.
	maxStreams int
	// resumeInterrupted re-drives, at start, the runs a previous process
	// left running.
	resumeInterrupted bool
	dashboard         bool
	// uploadDir is --upload-dir, shared with other replicas;
	// drainTimeout bounds the calls in flight at SIGTERM.
	uploadDir    string
	drainTimeout time.Duration
	// authTokenEnv names the environment variable holding the token;
	// authTokenGiven is whether --auth-token named it, so that it must be
	// set.
	authTokenEnv   string
	authTokenGiven bool
	// store names a fleet's PostgreSQL (in place of stateDir, which
	// stateDirGiven says was given); runLease is a replica's hold on a
	// run it drives, maxAttempts how often a run is taken over.
	store         storeFlags
	stateDirGiven bool
	runLease      time.Duration
	maxAttempts   int
}

func newServeCommand(s streams) *cobra.Command {
	opts := serveOptions{streams: s}
	cmd := &cobra.Command{
		Use:   "serve [flags]",
		Short: "Run the HTTP tool-server",
		Long: `Serve Argent's tool-server protocol over HTTP: GET /tools, POST /tools/{name}
(JSON or an NDJSON stream), POST /upload, GET /artifacts/{id}, GET /healthz;
and the same tools to coding agents over MCP's streamable HTTP at /mcp.
With ARGENT_AUTH_TOKEN (or the variable --auth-token names) set every request
needs "Authorization: Bearer <token>".
A wildcard bind (0.0.0.0, ::) refuses to start without a token unless
--insecure is given. With --allow-hosts, pages come only from the hosts
listed (launch, open-url, redirects and every request of a page): on a
cloud machine, this keeps the metadata address 169.254.169.254 out of reach.
SIGINT or SIGTERM stop it gracefully.`,
		Example: `  ARGENT_AUTH_TOKEN=$(openssl rand -hex 16) toolserver serve --addr 127.0.0.1:3000
  ARGENT_AUTH_TOKEN=$TOKEN toolserver serve --addr 0.0.0.0:3000 --allow-hosts staging.example.com,*.cdn.example.com`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.authTokenGiven = cmd.Flags().Changed("auth-token")
			opts.stateDirGiven = cmd.Flags().Changed("state-dir")
			return runServe(cmd.Context(), opts, args)
		},
	}
	setExitStatus(cmd, exitStatusServe)
	f := cmd.Flags()
	f.StringVar(&opts.addr, "addr", "127.0.0.1:3000", "`host:port` to listen on")
	f.IntVar(&opts.maxDevices, "max-devices", 4, "how many devices may be booted at once")
	f.IntVar(&opts.queue, "queue", defaultQueue, "how many calls may wait for a device when all --max-devices are busy; past it a call gets 503 with Retry-After (0: no waiting)")
	f.StringVar(&opts.authTokenEnv, "auth-token", envAuthToken, "the environment variable `ENV` that holds the bearer token every request must carry (given, it must be set)")
	f.BoolVar(&opts.insecure, "insecure", false, "allow a wildcard bind without a token")
	f.BoolVar(&opts.allowFiles, "allow-file-urls", false, "let callers open file: URLs even with a wildcard bind (remote callers could then screenshot this machine's files)")
	f.BoolVar(&opts.noHostFiles, "no-host-files", false, "run a flow a client sends from its bytes, never from a file at the same path on this machine")
	f.StringVar(&opts.stateDir, "state-dir", defaultStateDir(s.getenv), "keep the run store (every flow run, its events and images) in `DIR`; empty keeps none")
	f.IntVar(&opts.keepRuns, "keep-runs", runs.DefaultKeep, "keep the newest `N` finished runs; older ones and their images are pruned")
	f.IntVar(&opts.maxStreams, "max-streams", server.DefaultMaxStreams, "keep at most `N` /v1 event streams open at once (runs' and the dashboard's); past it a stream gets 503 with Retry-After")
	f.BoolVar(&opts.dashboard, "dashboard", false, "serve the runs dashboard at /dashboard")
	f.StringVar(&opts.uploadDir, "upload-dir", "", "keep POST /upload archives in `DIR`, shared with the other replicas behind the same address (one volume), so an upload and the call that uses it may reach different ones (default: this process's own temp dir)")
	opts.store.register(f)
	f.DurationVar(&opts.runLease, "run-lease", runs.DefaultLease, "with --store: how long this replica's hold on a run it drives lasts unrenewed (renewed every third of it); a run whose lease lapsed is taken over by another replica")
	f.IntVar(&opts.maxAttempts, "max-attempts", control.DefaultMaxAttempts, "with --store: how many attempts a run gets in all, its first and its take-overs by another replica after its own was lost; past it the run fails")
	f.BoolVar(&opts.resumeInterrupted, "resume-interrupted", false, "with --state-dir or --store: at start, re-drive the runs a previous process left running (killed, crashed or stopped under them) from their recorded arguments, as POST /v1/runs/{id}/resume does")
	f.DurationVar(&opts.drainTimeout, "drain-timeout", 30*time.Second, "on SIGTERM, how long calls in flight get to finish (readiness turns false at once, new calls get 503)")
	_ = cmd.MarkFlagDirname("upload-dir")
	_ = cmd.MarkFlagDirname("state-dir")
	f.StringSliceVar(&opts.allowHosts, "allow-hosts", nil, "the only `hosts` pages may come from (launch, open-url, and every request of a page): names, *.example.com, IP addresses; comma-separated or repeated")
	return cmd
}

// runServe serves until ctx ends.
func runServe(ctx context.Context, opts serveOptions, args []string) error {
	stderr := opts.stderr
	token, err := opts.authToken()
	if err != nil {
		return err
	}
	if server.IsWildcard(opts.addr) && token == "" && !opts.insecure {
		return usageError("serve: refusing to listen on %s without a token: anyone who can reach this machine could drive its browser and read the files it serves. Set %s, or pass --insecure if the network is yours alone", opts.addr, opts.authTokenEnv)
	}
	if opts.queue < 0 {
		return usageError("serve: --queue %d: give 0 or more", opts.queue)
	}
	if opts.keepRuns < 1 {
		return usageError("serve: --keep-runs %d: keep at least one run", opts.keepRuns)
	}
	if opts.maxStreams < 1 {
		return usageError("serve: --max-streams %d: allow at least one stream", opts.maxStreams)
	}
	dsn, err := opts.store.resolve("serve", opts.getenv)
	if err != nil {
		return err
	}
	if dsn != "" {
		if opts.stateDirGiven && opts.stateDir != "" {
			return usageError("serve: give --state-dir (one process's run store) or --store (a fleet's), not both")
		}
		opts.stateDir = ""
		if opts.runLease < time.Second {
			return usageError("serve: --run-lease %s: give at least 1s", opts.runLease)
		}
		if opts.maxAttempts < 1 {
			return usageError("serve: --max-attempts %d: give at least 1", opts.maxAttempts)
		}
	}
	hasStore := dsn != "" || opts.stateDir != ""
	if opts.resumeInterrupted && !hasStore {
		return usageError("serve: --resume-interrupted re-drives the runs of a run store: give --state-dir or --store")
	}
	if opts.dashboard && !hasStore {
		return usageError("serve: --dashboard shows the run store: give --state-dir or --store")
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
	a, err := newApp(appOptions{maxDevices: opts.maxDevices, stderr: stderr, denyFileURLs: server.IsWildcard(opts.addr) && !opts.allowFiles, allowHosts: hosts, remote: server.IsWildcard(opts.addr), pool: opts.pool, uploadDir: opts.uploadDir, queue: &opts.queue})
	if err != nil {
		return err
	}
	defer a.Close()
	a.flowTools.NoHostFiles = opts.noHostFiles
	// The tunnels of flow run --expose: opened at GET /tunnels, used by
	// the flow-execute calls that name them. A server whose pages come
	// only from --allow-hosts opens none: its browser resolves no host
	// but those, the proxy of a tunnel's address included.
	var tunnels *linkserver.Tunnels
	if hosts == nil {
		tunnels = linkserver.NewTunnels(a.log)
		a.flowTools.Tunnels = tunnels
	}
	a.warnNoChromium(stderr)
	// MCP at /mcp, always on: the same tools behind the same token.
	mcfg := mcpserver.Config{Tools: a.tools, Artifacts: a.artifacts, TempDir: a.tmp, Version: version, Log: a.log}
	cfg := server.Config{
		Addr: opts.addr, Token: token, Tools: a.tools, Artifacts: a.artifacts, Uploads: a.uploads,
		Log: a.log, TempDir: a.tmp, Version: version, Commit: buildCommit(),
		Ready: a.pool.Err, DrainTimeout: opts.drainTimeout, MaxStreams: opts.maxStreams,
	}
	if tunnels != nil {
		cfg.Tunnels = tunnels
	}
	st, err := openRunStore(ctx, "serve", dsn, opts.stateDir, runs.Options{Keep: opts.keepRuns, Lease: opts.runLease})
	if err != nil {
		return err
	}
	var plane *control.Plane
	if st != nil {
		defer st.Close()
		plane = a.newRunService(st, true, opts.runLease, opts.maxAttempts)
		defer plane.Stop()
		cfg.Runs, cfg.Plane = st, plane
		mcfg.Runs = plane
	}
	if opts.dashboard {
		cfg.Dashboard = dashboard.Handler()
	}
	// MCP's run tools start runs on the same plane as POST /v1/runs, so
	// that the server's drain counts them alike.
	agents := mcpserver.New(mcfg)
	defer agents.Close()
	// An agent's open event stream would hold the graceful shutdown for
	// its 10 s: its session ends as the server starts to stop.
	stopAgents := context.AfterFunc(ctx, agents.Close)
	defer stopAgents()
	cfg.MCP = agents.Handler()
	srv := server.New(cfg)
	if err := srv.Listen(); err != nil {
		return err
	}
	a.sweepUploads(time.Minute)
	auth := "no token"
	if token != "" {
		auth = "bearer token required"
	}
	fmt.Fprintf(stderr, "toolserver %s listening on http://%s (%s)\n", version, srv.Addr(), auth)
	switch {
	case dsn != "":
		fmt.Fprintf(stderr, "toolserver: runs kept in %s (newest %d), shared by the fleet; a run lost with its replica is taken over after its lease (%s)\n", printable.String(runs.RedactDSN(dsn)), opts.keepRuns, opts.runLease)
	case cfg.Runs != nil:
		fmt.Fprintf(stderr, "toolserver: runs kept in %s (newest %d)\n", opts.stateDir, opts.keepRuns)
	}
	if opts.resumeInterrupted {
		ids, err := plane.ResumeInterrupted(ctx)
		for _, id := range ids {
			fmt.Fprintf(stderr, "toolserver: resumed run %s\n", id)
		}
		if err != nil {
			fmt.Fprintf(stderr, "toolserver: --resume-interrupted: %s\n", printable.String(err.Error()))
		}
	}
	if hosts != nil {
		fmt.Fprintf(stderr, "toolserver: pages only from %s; no tunnels (flow run --expose)\n", hosts)
	}
	err = srv.Serve(ctx)
	if errors.Is(err, context.Canceled) {
		err = nil
	}
	return err
}

// defaultStateDir is where serve keeps its run store by default:
// $XDG_STATE_HOME/toolserver, else ~/.local/state/toolserver.
func defaultStateDir(getenv func(string) string) string {
	if d := getenv("XDG_STATE_HOME"); d != "" {
		return filepath.Join(d, "toolserver")
	}
	if h := getenv("HOME"); h != "" {
		return filepath.Join(h, ".local", "state", "toolserver")
	}
	return ""
}

// maxEnvName caps the --auth-token name: no real variable name is longer.
const maxEnvName = 256

// authToken reads the token from the variable --auth-token names. A name
// no shell could set is a mistake, and so is naming a variable that is
// unset: either would start an open server where a closed one was meant.
func (o serveOptions) authToken() (string, error) {
	name := o.authTokenEnv
	if !validEnvName(name) {
		shown := name
		if len(shown) > maxEnvName {
			shown = shown[:maxEnvName] + "..."
		}
		return "", usageError("serve: --auth-token %q is not an environment variable name: want letters, digits and _ (at most %d), not starting with a digit", shown, maxEnvName)
	}
	token := o.getenv(name)
	if token == "" && o.authTokenGiven {
		return "", usageError("serve: --auth-token %s: $%s is unset or empty; set it to the token", name, name)
	}
	return token, nil
}

// validEnvName is whether name is a POSIX environment variable name.
func validEnvName(name string) bool {
	if name == "" || len(name) > maxEnvName || name[0] >= '0' && name[0] <= '9' {
		return false
	}
	for _, c := range []byte(name) {
		if c != '_' && (c < '0' || c > '9') && (c < 'a' || c > 'z') && (c < 'A' || c > 'Z') {
			return false
		}
	}
	return true
}
