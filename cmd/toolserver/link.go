package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/toolserver/toolserver/fault"
	"github.com/toolserver/toolserver/flow"
	flowrun "github.com/toolserver/toolserver/flow/run"
	linkclient "github.com/toolserver/toolserver/link/client"
	"github.com/toolserver/toolserver/suite/linked"
	"github.com/toolserver/toolserver/tool/flowtool"
)

// The environment a linked command reads: the tool-server's URL (the
// variable Argent's own clients read) and its token.
const (
	envToolsURL  = "ARGENT_TOOLS_URL"
	envAuthToken = "ARGENT_AUTH_TOKEN"
)

// linkURL is the tool-server a command links to: --link, else
// ARGENT_TOOLS_URL; "" runs in-process.
func (s streams) linkURL(flagValue string) string {
	if flagValue != "" {
		return flagValue
	}
	return s.getenv(envToolsURL)
}

// linkClient is a client of the tool-server at u with the token of
// ARGENT_AUTH_TOKEN.
func (s streams) linkClient(u string) *linkclient.Client {
	return linkclient.NewClient(u, s.getenv(envAuthToken), nil)
}

// filesLogOn reports whether ARGENT_FLOW_FILES_LOG=1 asks for the
// [flow-files] lines.
func (s streams) filesLogOn() bool { return s.getenv(linkclient.FilesLogEnv) == "1" }

// newLinkedRun prepares a linked flow run of arg on the tool-server at u.
func newLinkedRun(u, arg string, f flowRunOptions, out *renderer) (*linked.Run, error) {
	return linked.New(f.linkClient(u), arg, linked.Options{
		Project:    f.project,
		Device:     f.device,
		Snapshot:   flowtool.DefaultsArg(f.snapshot),
		BaseURL:    f.baseURL,
		Strict:     f.strict,
		Update:     f.update,
		DryRun:     f.dryRun,
		Artifacts:  f.artifacts,
		FilesLog:   f.filesLogOn(),
		Expose:     f.exposed,
		ExposeOnly: f.exposeOnly,
	}, runPrinter{out})
}

// newSpread is the linked run of arg over the tool-servers at urls.
func newSpread(urls []string, arg string, f flowRunOptions, out *renderer) (runFlow, func(), error) {
	var all []*linked.Run
	for _, u := range urls {
		lr, err := newLinkedRun(u, arg, f, out)
		if err != nil {
			return nil, nil, err
		}
		all = append(all, lr)
	}
	s := linked.NewSpread(urls, all)
	return func(ctx context.Context, t flowTarget, _ int, out *renderer) (*flow.Report, int, []flowrun.Plan, error) {
		return s.Flow(ctx, t, runPrinter{out})
	}, s.Close, nil
}

// runLinkedCall calls one tool of a tool-server over a link and prints
// {"data": …} or the error, as runCall does in-process.
func runLinkedCall(ctx context.Context, u, name, argsJSON, format string, s streams) error {
	dec := json.NewDecoder(strings.NewReader(argsJSON))
	dec.UseNumber()
	var args map[string]any
	if err := dec.Decode(&args); err != nil || args == nil {
		return usageError("call: --args must be a JSON object")
	}
	warn := func(line string) { fmt.Fprintln(s.stderr, printableLines(line)) }
	opts := linkclient.CallOptions{Progress: func(d json.RawMessage) { fmt.Fprintf(s.stderr, "progress: %s\n", escapeJSONControls(d)) }}
	if s.filesLogOn() {
		opts.FilesLog = warn
	}
	res, err := s.linkClient(u).Call(ctx, name, args, opts)
	if err != nil {
		var ce *linkclient.CallError
		if errors.As(err, &ce) && !fault.IsInfrastructure(err) {
			printData(s.stdout, format, map[string]any{"error": ce.Message, "error_code": ce.Code, "error_kind": ce.Kind})
			return failed(nil)
		}
		return err
	}
	if err := printData(s.stdout, format, map[string]any{"data": res}); err != nil {
		return err
	}
	var rep struct {
		BaselineWrites []flow.BaselineWrite `json:"baselineWrites"`
	}
	if json.Unmarshal(res, &rep) == nil && linked.WarnRefusals(rep.BaselineWrites, warn) > 0 {
		return failed(nil)
	}
	return nil
}
