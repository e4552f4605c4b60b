package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/toolserver/toolserver/fault"
	"github.com/toolserver/toolserver/flow"
	flowrun "github.com/toolserver/toolserver/flow/run"
	"github.com/toolserver/toolserver/internal/atomicfile"
	linkclient "github.com/toolserver/toolserver/link/client"
	"github.com/toolserver/toolserver/tool/flowtool"
	"github.com/toolserver/toolserver/wire"
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

// linkedRun runs flows on a tool-server over a link: the flow and its
// members go with the call, progress renders as it streams, and the
// baselines of the result land in this project.
type linkedRun struct {
	client  *linkclient.Client
	flags   flowRunOptions
	project string // absolute
	byName  bool   // the argument named a flow, not a file or directory
	out     *renderer
	tunnel  *linkTunnel // --expose: nil without
}

// waiting says the run waits for its device on the tool-server: a line on
// stderr, or a waiting object with -o json|yaml.
func (lr *linkedRun) waiting(message string) {
	if lr.out.asJSON {
		lr.out.json(map[string]any{"event": "waiting", "message": message})
		return
	}
	fmt.Fprintln(lr.out.stderr, "toolserver: "+printableLines(message))
}

// warn prints a line on stderr, or a warning object with -o json|yaml.
// The line may hold the tool-server's words: it is escaped.
func (lr *linkedRun) warn(line string) {
	if lr.out.asJSON {
		lr.out.json(map[string]any{"event": "warning", "message": line})
		return
	}
	fmt.Fprintln(lr.out.stderr, printableLines(line))
}

// args are flow-execute's arguments for one target: the flow by name
// (with project_root) or by its absolute path.
func (lr *linkedRun) args(t flowTarget) map[string]any {
	a := wire.ExecuteArgs{
		ProjectRoot:              lr.project,
		Device:                   t.DeviceOr(lr.flags.device),
		PrerequisiteAcknowledged: true,
		SnapshotDefaults:         flowtool.DefaultsArg(lr.flags.snapshot),
		// Our extension: sent only when set, as strict is.
		BaseURL: lr.flags.baseURL,
		// Sent only when set: a tool-server without strict mode refuses
		// the unknown argument rather than running the flow leniently.
		Strict: lr.flags.strict,
	}
	switch u := lr.flags.update; u {
	case flowrun.UpdateAll:
		all := true
		a.UpdateBaselines = &all
	case flowrun.UpdateNone:
	default:
		// Our extension (docs/link.md, "Our extensions"): alone, so a
		// tool-server that does not know it refuses the argument or
		// compares, and never adopts every capture.
		a.UpdateOnly = string(u)
	}
	if lr.byName {
		a.Name = t.Name
	} else {
		a.FlowPath = t.Path
	}
	return a.Map()
}

// run runs one flow over the link and returns its report, how many of
// its baselines were not written and, in a dry run, the baselines it
// would have written. A flow the tool-server rejected is an error; a
// failure of the link or the server matches fault.ErrInfrastructure (the
// link client classifies its errors).
func (lr *linkedRun) run(ctx context.Context, t flowTarget) (*flow.Report, int, []flowrun.Plan, error) {
	opts := linkclient.CallOptions{Progress: func(data json.RawMessage) {
		var s flow.StepReport
		if err := json.Unmarshal(data, &s); err == nil {
			lr.out.progress(s)
		}
	}, DryRun: lr.flags.dryRun, Waiting: lr.waiting}
	if t.Data != nil {
		opts.Flow = &linkclient.FlowBytes{Path: t.Path, Data: t.Data}
	}
	if lr.flags.filesLogOn() {
		opts.FilesLog = lr.warn
	}
	lr.out.start(t.Name, t.DeviceOr(lr.flags.device))
	tun, err := lr.useTunnel(ctx)
	if err != nil {
		return nil, 0, nil, err
	}
	// Our extension: the tunnel is named only with --expose.
	opts.Tunnel = tun
	res, err := lr.client.Call(ctx, flow.ToolFlowExecute, lr.args(t), opts)
	if err != nil {
		return nil, 0, nil, err
	}
	var rep flow.Report
	if err := json.Unmarshal(res, &rep); err != nil {
		return nil, 0, nil, fault.Infrastructure(fmt.Errorf("%s: the result is not a flow report: %w", t.Name, err))
	}
	if rep.Steps == nil {
		// No report: the tool-server answered something else (a notice).
		return nil, 0, nil, fmt.Errorf("%s: the tool-server did not run the flow: %s", t.Name, bytes.TrimSpace(res))
	}
	if lr.flags.artifacts != "" {
		lr.keepArtifacts(ctx, t, &rep)
	}
	if t.Data != nil {
		// A flow held in memory is named by its target (a story id), not
		// by the stem of the path it stands at, which the server names it
		// by.
		rep.Flow = t.Name
	}
	var plans []flowrun.Plan
	if lr.flags.dryRun {
		flowrun.MarkDryRun(&rep)
		plans = flowrun.PlansOf(rep.BaselineWrites)
	}
	return &rep, lr.baselineRefusals(&rep), plans, nil
}

// keepArtifacts downloads the images of failed snapshots to
// DIR/<flow>/<key>-<role>.png, as a local run writes them, and puts the
// local paths in the report. Names from the tool-server are used only
// when they are plain flow and file names.
func (lr *linkedRun) keepArtifacts(ctx context.Context, t flowTarget, rep *flow.Report) {
	for i := range rep.Steps {
		s := &rep.Steps[i]
		for _, role := range []string{"baseline", "current", "diff"} {
			h := s.Artifacts[role].Handle
			if h == nil || h.ID == "" {
				continue
			}
			id, filename := h.ID, h.Filename
			name := filepath.Base(filename)
			if s.SnapshotKey != "" {
				name = strings.TrimSuffix(s.SnapshotKey, ".png") + "-" + role + ".png"
			}
			if !filepath.IsLocal(name) || filepath.Base(name) != name {
				continue
			}
			// The store names an artifact <run>-<key>-<role>.png; a nested
			// run's images go under its own name, as locally.
			dir := t.Name
			if run := strings.TrimSuffix(filename, "-"+name); run != filename && run != rep.Flow && flow.ValidName(run) {
				dir = run
			}
			dst := filepath.Join(lr.flags.artifacts, filepath.FromSlash(dir), name)
			data, err := lr.client.Artifact(ctx, id)
			if err == nil {
				err = os.MkdirAll(filepath.Dir(dst), 0o755)
			}
			if err == nil {
				err = atomicfile.WriteFile(dst, data)
			}
			if err != nil {
				lr.warn(fmt.Sprintf("--artifacts: %s of step %d: %v", role, s.Index+1, err))
				continue
			}
			s.Artifacts[role] = flow.Artifact{Path: dst}
			if !lr.out.asJSON {
				fmt.Fprintf(lr.out.stdout, "       step %d %s: %s\n", s.Index+1, role, dst)
			}
		}
	}
}

// baselineRefusals prints the reason of each baseline of the report the
// client did not write, and counts them.
func (lr *linkedRun) baselineRefusals(rep *flow.Report) int {
	return printRefusals(rep.BaselineWrites, lr.warn)
}

// printRefusals prints "✗ baseline not written: <path>: <reason>" for each
// {"path", "error"} entry of a baselineWrites list; the paths written and
// a dry run's plans are not refusals.
func printRefusals(writes []flow.BaselineWrite, warn func(string)) int {
	n := 0
	for _, w := range writes {
		if w.Error == "" {
			continue
		}
		warn(fmt.Sprintf("✗ baseline not written: %s: %s", w.Path, w.Error))
		n++
	}
	return n
}

// newLinkedRun prepares a linked flow run of arg.
func newLinkedRun(u, arg string, f flowRunOptions, out *renderer) (*linkedRun, error) {
	project, err := filepath.Abs(f.project)
	if err != nil {
		return nil, err
	}
	_, serr := os.Stat(arg)
	byName := serr != nil && !strings.HasSuffix(arg, ".yaml") && flow.ValidName(arg)
	lr := &linkedRun{client: f.linkClient(u), flags: f, project: project, byName: byName, out: out}
	lr.tunnel = newLinkTunnel(f, lr.warn)
	return lr, nil
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
	if json.Unmarshal(res, &rep) == nil && printRefusals(rep.BaselineWrites, warn) > 0 {
		return failed(nil)
	}
	return nil
}
