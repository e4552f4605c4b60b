package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/toolserver/toolserver/tool"
)

// runTools lists the tools, or prints one tool's entry with its schema.
func runTools(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("tools", flag.ContinueOnError)
	fs.SetOutput(stderr)
	asJSON := fs.Bool("json", false, "print the GET /tools JSON")
	linkFlag := fs.String("link", "", "list the tools of the tool-server at URL (default $"+envToolsURL+"; token from $"+envAuthToken+")")
	rest, err := parseInterspersed(fs, args)
	if err != nil {
		return withExit(exitUsage, err)
	}
	if len(rest) > 0 && (rest[0] != "describe" || len(rest) != 2) {
		return usageError("usage: toolserver tools [--json] [--link URL] | toolserver tools describe NAME [--link URL]")
	}
	if u := linkURL(*linkFlag); u != "" {
		return runLinkedTools(ctx, u, *asJSON, rest, stdout)
	}
	reg, closeFn, err := localRegistry(stderr)
	if err != nil {
		return err
	}
	defer closeFn()
	if len(rest) > 0 {
		t, ok := reg.Get(rest[1])
		if !ok {
			return usageError("unknown tool %q; toolserver tools lists them", rest[1])
		}
		return printJSON(stdout, t)
	}
	if *asJSON {
		return printJSON(stdout, map[string]any{"tools": reg.List()})
	}
	for _, t := range reg.List() {
		desc, _, _ := strings.Cut(t.Description, ". ")
		fmt.Fprintf(stdout, "%-24s %s\n", t.Name, desc)
	}
	return nil
}

// localRegistry builds the in-process tool set without booting anything.
func localRegistry(stderr io.Writer) (*tool.Registry, func(), error) {
	a, err := newApp(appOptions{stderr: stderr})
	if err != nil {
		return nil, nil, err
	}
	return a.tools, a.Close, nil
}

func printJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// runCall calls one tool, in-process or over a link with --link, and
// prints {"data": …} or the error.
func runCall(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("call", flag.ContinueOnError)
	fs.SetOutput(stderr)
	argsJSON := fs.String("args", "{}", "the tool's arguments as a JSON object")
	linkFlag := fs.String("link", "", "call the tool on the tool-server at URL, file inputs sent with the call (default $"+envToolsURL+"; token from $"+envAuthToken+")")
	if len(args) == 0 || strings.HasPrefix(args[0], "-") {
		return usageError("usage: toolserver call NAME [--args JSON] [--link URL]")
	}
	name := args[0]
	if err := fs.Parse(args[1:]); err != nil {
		return withExit(exitUsage, err)
	}
	if u := linkURL(*linkFlag); u != "" {
		return runLinkedCall(ctx, u, name, *argsJSON, stdout, stderr)
	}
	a, err := newApp(appOptions{stderr: stderr})
	if err != nil {
		return err
	}
	defer a.Close()
	res, err := a.tools.Invoke(ctx, name, []byte(*argsJSON), tool.Options{
		TempDir:  a.tmp,
		Progress: func(v any) { b, _ := json.Marshal(v); fmt.Fprintf(stderr, "progress: %s\n", b) },
	})
	if err != nil {
		te := tool.AsError(err)
		printJSON(stdout, map[string]any{"error": te.Error(), "error_code": te.Code, "error_kind": te.Kind})
		return silentExit(exitFailed)
	}
	// Artifacts live in this process's temp dir, removed on exit: copy them
	// next to the caller.
	return printJSON(stdout, map[string]any{"data": keepArtifacts(res, os.Getenv("ARGENT_ARTIFACTS_DIR"))})
}
