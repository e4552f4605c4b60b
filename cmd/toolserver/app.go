package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/toolserver/toolserver/control"
	"github.com/toolserver/toolserver/device/cdp"
	"github.com/toolserver/toolserver/runs"
	"github.com/toolserver/toolserver/store"
	"github.com/toolserver/toolserver/tool"
	"github.com/toolserver/toolserver/tool/devicetool"
	"github.com/toolserver/toolserver/tool/flowtool"
	"github.com/toolserver/toolserver/tool/recordtool"
	"github.com/toolserver/toolserver/tool/snapshottool"
	"github.com/toolserver/toolserver/tool/storybooktool"
)

// Build stamps, set with -ldflags "-X main.version=… -X main.commit=…".
var (
	version = "dev"
	commit  = "unknown"
)

// streams are what a command gets from the process that runs it besides
// its arguments: where it writes (its data on stdout, progress, warnings
// and errors on stderr), the environment it reads, and the device pool of
// its in-process runs.
type streams struct {
	stdout, stderr io.Writer
	// stdin is what `toolserver mcp` reads its client's messages from
	// (os.Stdin in main); no other command reads it.
	stdin io.Reader
	// getenv reads an environment variable ("" when unset): os.Getenv in
	// main, a test's own variables in a test, so tests that set different
	// variables run in parallel.
	getenv func(string) string
	// pool, when set, is the device pool in-process commands use instead
	// of a pool of their own, and leave open (tests share one browser this
	// way); nil in main.
	pool *cdp.Pool
}

// annotationExitStatus is the annotation holding a command's EXIT STATUS
// section, which printHelp prints last.
const annotationExitStatus = "toolserver_exit_status"

// printHelp is cobra's help with an EXIT STATUS section at the end, as a
// manual page ends with it. It is a function, not a help template: a
// template links text/template's executor, whose reflection makes the
// linker keep every exported method (3 MB more binary to load on every
// start, a snapshot diff's included).
func printHelp(c *cobra.Command, args []string) {
	w := c.OutOrStdout()
	text := c.Long
	if text == "" {
		text = c.Short
	}
	if text = strings.TrimRight(text, " \t\n"); text != "" {
		fmt.Fprintf(w, "%s\n\n", text)
	}
	if c.Runnable() || c.HasSubCommands() {
		fmt.Fprint(w, c.UsageString())
	}
	if es := c.Annotations[annotationExitStatus]; es != "" {
		// Indented here, not when the tree is built: every process
		// builds the tree, few print a help.
		fmt.Fprintf(w, "\nEXIT STATUS:\n  %s\n", strings.ReplaceAll(es, "\n", "\n  "))
	}
}

// newRootCommand builds the command tree. Building it is cheap: no
// command touches Chromium, the tool registry or the disk before it runs,
// so `snapshot diff` pays only for parsing its flags.
func newRootCommand(s streams) *cobra.Command {
	root := &cobra.Command{
		Use:   "toolserver",
		Short: "Visual testing on headless Chromium: flows, snapshots and Argent's tool-server protocol",
		Long: `toolserver drives headless Chromium devices named by their viewport
(chromium-cdp-1280x800), runs YAML flows on them, compares screenshots with
baseline PNGs, and speaks Argent's tool-server protocol.`,
		Version:       fmt.Sprintf("%s (commit %s, %s)", version, commit, runtime.Version()),
		SilenceErrors: true, // report prints errors once, with the exit code
		SilenceUsage:  true,
	}
	asGroup(root)
	root.SetOut(s.stdout)
	root.SetErr(s.stderr)
	root.SetHelpFunc(printHelp)
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return usageError("%v", err)
	})

	flowCmd := &cobra.Command{
		Use:   "flow",
		Short: "Run, list and describe YAML flows",
	}
	asGroup(flowCmd)
	flowCmd.AddCommand(newFlowRunCommand(s), newFlowListCommand(s), newFlowSchemaCommand(s))

	snapshotCmd := &cobra.Command{
		Use:   "snapshot",
		Short: "Compare screenshots",
	}
	asGroup(snapshotCmd)
	snapshotCmd.AddCommand(newSnapshotDiffCommand(s))

	root.AddCommand(
		newInitCommand(s),
		newServeCommand(s),
		flowCmd,
		snapshotCmd,
		newStorybookCommand(s),
		newToolsCommand(s),
		newCallCommand(s),
		newApproveCommand(s),
		newBaselinesCommand(s),
		newReportCommand(s),
		newRunsCommand(s),
		newVersionCommand(s),
		newHealthcheckCommand(s),
		newMCPCommand(s),
		newCompletionCommand(s, root),
	)
	return root
}

// setExitStatus gives cmd the EXIT STATUS section of its help.
func setExitStatus(cmd *cobra.Command, text string) {
	if cmd.Annotations == nil {
		cmd.Annotations = map[string]string{}
	}
	cmd.Annotations[annotationExitStatus] = text
}

// asGroup makes cmd a command that only holds others: without one it
// prints its help on stderr and exits 2, and an unknown one is a usage
// error that suggests the nearest name (not cobra's help and exit 0).
func asGroup(cmd *cobra.Command) {
	cmd.SuggestionsMinimumDistance = 2
	cmd.DisableFlagsInUseLine = true
	setExitStatus(cmd, exitStatusGroup)
	cmd.Args = func(c *cobra.Command, args []string) error {
		if len(args) == 0 {
			return nil
		}
		msg := fmt.Sprintf("unknown command %q for %q", args[0], c.CommandPath())
		if sug := c.SuggestionsFor(args[0]); len(sug) > 0 {
			msg += fmt.Sprintf(" (did you mean %s?)", strings.Join(sug, " or "))
		}
		return usageError("%s; its commands: %s", msg, strings.Join(subcommandPaths(c), ", "))
	}
	cmd.RunE = func(c *cobra.Command, args []string) error {
		c.SetOut(c.ErrOrStderr())
		if err := c.Help(); err != nil {
			return err
		}
		return badInput(errors.New("missing command"))
	}
}

// subcommandPaths lists the full paths of c's commands, for messages.
func subcommandPaths(c *cobra.Command) []string {
	var out []string
	for _, sub := range c.Commands() {
		if sub.IsAvailableCommand() {
			out = append(out, sub.CommandPath())
		}
	}
	return out
}

// commandName is c's path without the binary's name, as messages that
// already start with "toolserver:" name a command.
func commandName(c *cobra.Command) string {
	if !c.HasParent() {
		return c.Name()
	}
	return strings.TrimPrefix(c.CommandPath(), c.Root().Name()+" ")
}

// exactArgs accepts n positional arguments, named in the message.
func exactArgs(n int, what string) cobra.PositionalArgs {
	return func(c *cobra.Command, args []string) error {
		if len(args) != n {
			return usageError("%s: want %s, got %d %s", commandName(c), what, len(args), plural(len(args), "argument", "arguments"))
		}
		return nil
	}
}

// noArgs refuses positional arguments.
func noArgs(c *cobra.Command, args []string) error {
	if len(args) > 0 {
		return usageError("%s takes no arguments, got %q", commandName(c), args)
	}
	return nil
}

func versionLine() string {
	v := currentVersion()
	return fmt.Sprintf("toolserver %s (commit %s, %s)", v.Version, v.Commit, v.Go)
}

// currentVersion is this binary's version, commit ("unknown" for a build
// with none) and Go toolchain.
func currentVersion() versionInfo {
	c := buildCommit()
	if c == "" {
		c = "unknown"
	}
	return versionInfo{Version: version, Commit: c, Go: runtime.Version()}
}

// buildCommit is the commit the binary was built from: the -ldflags
// stamp, else the Go toolchain's VCS stamp (with -dirty for a tree with
// changes), else "" (a build with none).
func buildCommit() string {
	if commit != "" && commit != "unknown" {
		return commit
	}
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return ""
	}
	var rev string
	dirty := false
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	if rev != "" && dirty {
		rev += "-dirty"
	}
	return rev
}

// app wires the parts a server or an in-process call needs.
type app struct {
	pool      *cdp.Pool
	tools     *tool.Registry
	artifacts *store.Artifacts
	uploads   *store.Uploads
	tmp       string
	log       *slog.Logger
	flowTools *flowtool.Tools
	// borrowed: pool is appOptions.pool, which Close leaves open.
	borrowed bool

	// stopSweep ends the upload sweeper; sweeper is its goroutine, which
	// Close waits for before it removes the uploads' directory.
	stopSweep context.CancelFunc
	sweeper   sync.WaitGroup
}

type appOptions struct {
	maxDevices   int
	stderr       io.Writer
	denyFileURLs bool
	allowHosts   *cdp.HostList // nil: every host
	// remote is a wildcard bind: tools read and write no file of this
	// machine for a caller (tool.Registry.Remote).
	remote bool
	// pool is a pool to use instead of a new one (streams.pool); its own
	// options stand, maxDevices and denyFileURLs are not applied to it.
	pool *cdp.Pool
	// uploadDir, when set, is a directory the uploads share with other
	// tool-servers (serve --upload-dir) instead of one in the app's temp.
	uploadDir string
	// queue is serve's --queue: the pool then stops idle devices to make
	// room and queues the calls that find every device busy
	// (cdp.Options.Evict). Nil for the in-process commands, whose full
	// pool refuses at once.
	queue *int
}

// defaultQueue is serve's --queue: a waiting call costs a goroutine and
// an open connection, so 16 (four turns of the default 4 devices) is
// cheap; a client further back does better to try another tool-server or
// come back later, as the 503's Retry-After tells it.
const defaultQueue = 16

func newApp(o appOptions) (*app, error) {
	tmp, err := os.MkdirTemp("", "toolserver-")
	if err != nil {
		return nil, fmt.Errorf("temp dir: %w", err)
	}
	a := &app{tmp: tmp, tools: tool.NewRegistry(), log: slog.New(slog.NewTextHandler(o.stderr, nil))}
	a.tools.Remote = o.remote
	a.artifacts, err = store.NewArtifacts(filepath.Join(tmp, "artifacts"), 500, 1<<30)
	if err != nil {
		a.Close()
		return nil, err
	}
	ucfg := store.UploadConfig{
		Dir:        filepath.Join(tmp, "uploads"),
		MaxUpload:  store.MaxUploadBytes,
		MaxPending: 512 << 20,
		TTL:        10 * time.Minute,
	}
	if o.uploadDir != "" {
		ucfg.Dir, ucfg.Shared = o.uploadDir, true
	}
	a.uploads, err = store.NewUploads(ucfg)
	if err != nil {
		a.Close()
		return nil, err
	}
	if o.pool != nil {
		a.pool, a.borrowed = o.pool, true
	} else {
		po := cdp.Options{MaxDevices: o.maxDevices, Log: o.stderr, DenyFileURLs: o.denyFileURLs, AllowHosts: o.allowHosts}
		if o.queue != nil {
			po.Evict, po.Queue = true, *o.queue
		}
		a.pool = cdp.NewPool(po)
	}
	registerTools(a)
	return a, nil
}

// registerTools adds every tool family to a's registry.
func registerTools(a *app) {
	(&devicetool.Tools{Pool: a.pool, Artifacts: a.artifacts}).Register(a.tools)
	a.flowTools = &flowtool.Tools{Pool: a.pool, Artifacts: a.artifacts, Registry: a.tools, Uploads: a.uploads, TempDir: a.tmp}
	a.flowTools.Register(a.tools)
	(&recordtool.Tools{Pool: a.pool, Registry: a.tools, Uploads: a.uploads, TempDir: a.tmp}).Register(a.tools)
	(&snapshottool.Tools{Pool: a.pool, Artifacts: a.artifacts}).Register(a.tools)
	(&storybooktool.Tools{Pool: a.pool}).Register(a.tools)
}

// toolCatalog is the in-process tool set with nothing behind it: names,
// descriptions and schemas, for listings and shell completion, which must
// neither look for Chromium nor make a temp dir.
func toolCatalog() *tool.Registry {
	a := &app{tools: tool.NewRegistry()}
	registerTools(a)
	return a.tools
}

// sweepUploads removes expired uploads every interval until Close.
func (a *app) sweepUploads(interval time.Duration) {
	ctx, stop := context.WithCancel(context.Background())
	a.stopSweep = stop
	a.sweeper.Go(func() { a.uploads.Run(ctx, interval) })
}

// Close stops the upload sweeper and the browsers (not those of a
// borrowed pool), waits for them, and removes the temp files.
func (a *app) Close() {
	if a.stopSweep != nil {
		a.stopSweep()
		a.sweeper.Wait()
	}
	if a.pool != nil && !a.borrowed {
		a.pool.Close()
	}
	os.RemoveAll(a.tmp)
}

// newRunService is the one control plane of a process that drives runs
// (serve, mcp), over st and the app's tools: it records their
// flow-execute calls, drives the runs it starts, and is the runs.Service
// the /v1 surface and MCP's run tools take. takeOver, for serve over a
// fleet's store, takes over the runs the other replicas lost. Its Stop
// is the process's one stop sequence of its runs.
func (a *app) newRunService(st *runs.Store, takeOver bool, lease time.Duration, maxAttempts int) *control.Plane {
	return control.New(control.Config{Runs: st, Tools: a.tools, TempDir: a.tmp, Log: a.log, TakeOver: takeOver, Lease: lease, MaxAttempts: maxAttempts})
}

// warnNoChromium says on w, for the commands that serve tools, that no
// Chromium was found and how to get one: they still start, and every
// device tool answers the reason.
func (a *app) warnNoChromium(w io.Writer) {
	if a.pool.Err() != nil {
		fmt.Fprintln(w, "toolserver: warning: no Chromium found; device tools will fail until CHROMIUM_PATH points at one ("+cdp.InstallHint+")")
	}
}
