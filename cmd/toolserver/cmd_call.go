package main

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/toolserver/toolserver/fault"
	"github.com/toolserver/toolserver/store"
	"github.com/toolserver/toolserver/tool"
)

// callOptions are the flags of call.
type callOptions struct {
	streams
	args   string
	link   string
	dryRun bool
	output outputFlags
}

func newCallCommand(s streams) *cobra.Command {
	opts := callOptions{streams: s}
	cmd := &cobra.Command{
		Use:   "call NAME [flags]",
		Short: "Call one tool, in-process or on a tool-server",
		Long: `Call one tool with --args and print {"data": …} or {"error": …, "error_code",
"error_kind"}. In-process, the artifacts of the result are copied to
./toolserver-artifacts (or $ARGENT_ARTIFACTS_DIR). With --link the tool runs
on the tool-server at URL and its file arguments are sent with the call;
progress goes to stderr.`,
		Example: `  toolserver call screenshot --args '{"device":"chromium-cdp-1280x800"}'
  toolserver call list-devices --link http://host:3000`,
		Args:              exactArgs(1, "a tool name"),
		ValidArgsFunction: completeToolNames,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runCall(cmd.Context(), opts, args)
		},
	}
	setExitStatus(cmd, exitStatusCall)
	f := cmd.Flags()
	f.StringVar(&opts.args, "args", "{}", "the tool's arguments as a JSON object")
	f.BoolVar(&opts.dryRun, "dry-run", false, "run nothing: check the arguments as the call would (the tool's schema and file inputs; for flow-execute, the flow read and parsed) and print {\"data\": {\"dry_run\": true, \"valid\": true}} or the error (in-process only)")
	f.StringVar(&opts.link, "link", "", "call the tool on the tool-server at `URL`, file inputs sent with the call (default $"+envToolsURL+"; token from $"+envAuthToken+")")
	opts.output.register(cmd, f)
	return cmd
}

// runCall calls one tool, in-process or over a link, and prints
// {"data": …} or the error.
func runCall(ctx context.Context, opts callOptions, args []string) error {
	format, err := opts.output.resolveOr(formatJSON)
	if err != nil {
		return err
	}
	name := args[0]
	if u := opts.linkURL(opts.link); u != "" {
		if opts.dryRun {
			return usageError("call: --dry-run checks a call in-process; it cannot with --link (a tool-server runs what it is sent)")
		}
		return runLinkedCall(ctx, u, name, opts.args, format, opts.streams)
	}
	a, err := newApp(appOptions{stderr: opts.stderr, pool: opts.pool})
	if err != nil {
		return err
	}
	defer a.Close()
	if opts.dryRun {
		if err := a.tools.Check(ctx, name, []byte(opts.args), tool.Options{TempDir: a.tmp}); err != nil {
			return callFailed(opts.streams, format, err)
		}
		return printData(opts.stdout, format, map[string]any{"data": map[string]bool{"dry_run": true, "valid": true}})
	}
	res, err := a.tools.Invoke(ctx, name, []byte(opts.args), tool.Options{
		TempDir: a.tmp,
		Progress: func(v any) {
			b, _ := json.Marshal(v)
			fmt.Fprintf(opts.stderr, "progress: %s\n", escapeJSONControls(b))
		},
	})
	if err != nil {
		return callFailed(opts.streams, format, err)
	}
	// Artifacts live in this process's temp dir, removed on exit: copy them
	// next to the caller.
	// The artifacts land in $ARGENT_ARTIFACTS_DIR, else ./toolserver-artifacts.
	dir := cmp.Or(opts.getenv("ARGENT_ARTIFACTS_DIR"), "toolserver-artifacts")
	return printData(opts.stdout, format, map[string]any{"data": store.KeepArtifacts(res, dir)})
}

// callFailed prints a tool's error as the call's answer: exit 1.
func callFailed(s streams, format string, err error) error {
	te := fault.AsError(err)
	printData(s.stdout, format, map[string]any{"error": te.Error(), "error_code": te.Code, "error_kind": te.Kind})
	return failed(nil)
}
