package flowtool

import (
	"context"
	"encoding/json"

	"github.com/toolserver/toolserver/device/cdp"
	"github.com/toolserver/toolserver/fault"
	"github.com/toolserver/toolserver/flow"
	"github.com/toolserver/toolserver/flow/run"
	"github.com/toolserver/toolserver/link/server"
	"github.com/toolserver/toolserver/link/tunnel"
	"github.com/toolserver/toolserver/tool"
	"github.com/toolserver/toolserver/tool/devicetool"
)

func jsonMarshal(v any) ([]byte, error) { return json.Marshal(v) }

// runSource is where one call's flow and its files come from.
type runSource struct {
	name   string
	entry  run.Entry
	source run.Source
	linked bool
	tools  run.ToolCaller
	// check runs on the parsed flow before the prerequisite handshake:
	// pre-validation of a linked run, the older-client refusals.
	check  func(*flow.Flow) error
	writes func() []flow.BaselineWrite
}

// callSource decides how a call's flow is read: from the members a linked
// client sent; from the bytes alone when a client that sends no members
// is on another machine; else from this machine's disk.
func (t *Tools) callSource(call *tool.Call) (runSource, error) {
	name, _ := tool.Decode[struct {
		Name string `json:"name"`
	}](call)
	lc, _ := call.Values[linkedKey].(*linkedCall)
	switch {
	case lc != nil && lc.members != nil:
		entry, err := linkedEntry(lc, name.Name)
		if err != nil {
			return runSource{}, err
		}
		src := server.NewSource(lc.members)
		return runSource{
			name: entry.Name, entry: entry, source: src, linked: true,
			tools:  t.linkedCaller(src),
			check:  func(fl *flow.Flow) error { return server.Prevalidate(fl, entry.File, src, t.toolInfo) },
			writes: src.BaselineWrites,
		}, nil
	case lc != nil && lc.in.Content != nil && (t.NoHostFiles || call.Remote || !hostCopy(lc.in)):
		entry, err := linkedEntry(lc, name.Name)
		if err != nil {
			return runSource{}, err
		}
		src := server.NewSource(nil)
		return runSource{
			name: entry.Name, entry: entry, source: src, linked: true,
			tools: t.linkedCaller(src),
			check: func(fl *flow.Flow) error { return server.OlderClient(fl, entry.File.Canonical, t.toolInfo) },
		}, nil
	}
	src, err := resolveSource(call)
	if err != nil {
		return runSource{}, err
	}
	return runSource{name: src.name, entry: src.entry, source: flow.Disk{}}, nil
}

// PrerequisiteNotice is what flow-execute answers, without running, for a
// flow with an execution prerequisite the call did not acknowledge.
const PrerequisiteNotice = "This flow has an execution prerequisite that must be fulfilled before it can run. Verify the prerequisite is met and call flow-execute again with prerequisiteAcknowledged set to true."

func (t *Tools) execute() *tool.Tool {
	props := flowSourceProps()
	props["device"] = tool.String("Device id, e.g. chromium-cdp-1280x800. Default: the single booted device, else chromium-cdp-1280x800.")
	props["platform"] = tool.Enum("Platform of the run; only chromium runs here.", "ios", "android", "chromium", "vega")
	props["updateBaselines"] = tool.Bool("Adopt the current screens as the snapshot baselines instead of comparing.")
	props["updateOnly"] = tool.Enum("Compare, and adopt only the current screens that failed their comparison or have no baseline (changed), or only those with no baseline (missing). Our extension; it overrides updateBaselines.", "changed", "missing")
	props["prerequisiteAcknowledged"] = tool.Bool("Confirm the flow's executionPrerequisite holds.")
	props["snapshotDefaults"] = snapshotDefaultsSchema()
	props["baseURL"] = tool.String("What a launch: /path resolves against (http or https, at most 2048 bytes). Our extension; flow run --base-url sends it.")
	props["tunnel"] = tool.String("The id of the tunnel (GET /tunnels) through which the run's browser reaches the client's exposed localhost targets and files. Our extension; flow run --expose sends it.")
	props["strict"] = tool.Bool("Strict mode (Playwright's): a step whose selector matches several elements fails instead of acting on the first with a warning, and equals/contains compare case. Nested flows run strictly too.")
	return &tool.Tool{
		Name:        flow.ToolFlowExecute,
		Description: "Run a saved flow (.argent/flows/<name>.yaml) on a Chromium device and return its report: each step's status, reasons, snapshot comparisons. Streams one progress event per finished step.",
		InputSchema: tool.Object(props, "project_root"),
		FileInputs:  flowFileInputs(),
		LongRunning: true,
		Prepare:     t.prepareLinked,
		Run:         t.runExecute,
		Check:       t.checkExecute,
	}
}

// checkPlatform refuses a platform other than chromium.
func checkPlatform(p string) error {
	if p != "" && p != "chromium" {
		return &fault.Error{Kind: fault.Validation, Code: "FLOW_DEVICE_RESOLUTION", Field: "platform", Message: "this tool-server runs chromium devices only (platform " + p + ")"}
	}
	return nil
}

// checkExecute reads and checks a call's flow as runExecute does before
// it runs it, running nothing: POST /v1/runs refuses here what the run
// would fail on at once (a flow that does not exist or does not parse,
// a member missing, another platform).
func (t *Tools) checkExecute(ctx context.Context, call *tool.Call) error {
	a, err := tool.Decode[struct {
		Platform string `json:"platform"`
		Device   string `json:"device"`
		Tunnel   string `json:"tunnel"`
	}](call)
	if err != nil {
		return err
	}
	if err := checkPlatform(a.Platform); err != nil {
		return err
	}
	if a.Tunnel != "" {
		// A run started this way outlives the call, and a resume would
		// name a tunnel long closed.
		return &fault.Error{Kind: fault.Validation, Field: tunnel.Arg, Message: "tunnel: a run of POST /v1/runs outlives its client's tunnel; flow run --expose calls flow-execute itself (POST /tools/flow-execute)"}
	}
	if a.Device != "" {
		if _, _, err := cdp.ParseID(a.Device); err != nil {
			return devicetool.DeviceError(err)
		}
	}
	src, err := t.callSource(call)
	if err != nil {
		return err
	}
	p, err := run.Prepare(src.entry)
	if err != nil {
		return prepareError(err)
	}
	if src.check != nil {
		return src.check(p.Flow)
	}
	return nil
}

// runExecute runs a call's flow and answers its report. It says what the
// call's run records as it learns it: the flow's name and the device
// (tool.FlowNamed, tool.DeviceHeld) and each step (its progress); the
// control plane, which wraps the tool, records them.
func (t *Tools) runExecute(ctx context.Context, call *tool.Call) (any, error) {
	a, err := tool.Decode[struct {
		Device                   string `json:"device"`
		Platform                 string `json:"platform"`
		UpdateBaselines          bool   `json:"updateBaselines"`
		UpdateOnly               string `json:"updateOnly"`
		PrerequisiteAcknowledged bool   `json:"prerequisiteAcknowledged"`
		ProjectRoot              string `json:"project_root"`

		SnapshotDefaults *SnapshotDefaultsArg `json:"snapshotDefaults"`
		Strict           bool                 `json:"strict"`
		BaseURL          string               `json:"baseURL"`
		Tunnel           string               `json:"tunnel"`
	}](call)
	if err != nil {
		return nil, err
	}
	ctx, ct, unbind, err := t.bindTunnel(ctx, a.Tunnel)
	if err != nil {
		return nil, err
	}
	if unbind != nil {
		defer unbind()
	}
	if a.BaseURL != "" {
		if err := flow.CheckBaseURL(a.BaseURL); err != nil {
			return nil, &fault.Error{Kind: fault.Validation, Field: "baseURL", Message: "baseURL: " + err.Error()}
		}
	}
	if err := checkPlatform(a.Platform); err != nil {
		return nil, err
	}
	src, err := t.callSource(call)
	if err != nil {
		return nil, err
	}
	if src.name != "" {
		call.Progress(tool.FlowNamed{Name: src.name})
	}
	if ms, ok := src.source.(*server.Source); ok && ct != nil {
		ms.ClientFiles = true
	}
	p, err := run.Prepare(src.entry)
	if err != nil {
		return nil, prepareError(err)
	}
	fl := p.Flow
	if err := run.CheckBaseURL(fl, src.name, a.BaseURL, src.linked); err != nil {
		return nil, &fault.Error{Kind: fault.Validation, Field: "baseURL", Message: err.Error()}
	}
	if src.check != nil {
		if err := src.check(fl); err != nil {
			return nil, err
		}
	}
	limits, err := snapshotDefaults(a.SnapshotDefaults, src.linked, a.ProjectRoot)
	if err != nil {
		return nil, err
	}
	if fl.ExecutionPrerequisite != "" && !a.PrerequisiteAcknowledged {
		return map[string]any{"flow": src.name, "notice": PrerequisiteNotice, "executionPrerequisite": fl.ExecutionPrerequisite}, nil
	}
	opts := run.Options{
		Source:          src.source,
		Tools:           src.tools,
		Linked:          src.linked,
		UpdateBaselines: a.UpdateBaselines,
		Update:          run.Update(a.UpdateOnly),
		Strict:          a.Strict,
		BaseURL:         a.BaseURL,
		Progress:        func(s flow.StepReport) { call.Progress(s) },
		Snapshot:        limits,
	}
	if ct != nil {
		opts.ClientFileURL = fileURL
	}
	if opts.Tools == nil {
		opts.Tools = t.caller()
	}
	if t.Artifacts != nil {
		opts.Artifacts = artifactSink{t.Artifacts}
	}
	if needsDevice(fl) || a.Device != "" {
		dev, err := t.resolveDevice(ctx, call, a.Device)
		if err != nil {
			return nil, err
		}
		// The run holds its device to the end: another run's launch:
		// must not replace its page (a second one waits its turn).
		if ctx, err = call.HoldDevice(ctx, dev.ID()); err != nil {
			return nil, err
		}
		if src.linked {
			dev = linkedDevice{Device: dev.(Device), ct: ct, remote: true}
		}
		opts.Device = dev
		call.Progress(tool.DeviceHeld{Device: dev.ID()})
	}
	rep, _, err := run.Run(ctx, opts, p)
	if err != nil {
		return nil, prepareError(err)
	}
	if src.writes != nil {
		rep.BaselineWrites = src.writes()
	}
	return rep, nil
}

func (t *Tools) readPrerequisite() *tool.Tool {
	return &tool.Tool{
		Name:        "flow-read-prerequisite",
		Description: "Read a saved flow's executionPrerequisite (the state its first step assumes) without running it.",
		InputSchema: tool.Object(flowSourceProps(), "project_root"),
		FileInputs:  flowFileInputs(),
		Prepare:     t.prepareLinked,
		Run: func(ctx context.Context, call *tool.Call) (any, error) {
			src, err := t.callSource(call)
			if err != nil {
				return nil, err
			}
			p, err := run.Prepare(src.entry)
			if err != nil {
				return nil, prepareError(err)
			}
			return map[string]any{"flow": src.name, "executionPrerequisite": p.Flow.ExecutionPrerequisite}, nil
		},
	}
}
