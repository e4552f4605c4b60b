package flowtool

import (
	"context"
	"encoding/json"

	"github.com/toolserver/toolserver/device/cdp"
	"github.com/toolserver/toolserver/device/cdprun"
	"github.com/toolserver/toolserver/fault"
	"github.com/toolserver/toolserver/flow"
	flowrun "github.com/toolserver/toolserver/flow/run"
	linkserver "github.com/toolserver/toolserver/link/server"
	"github.com/toolserver/toolserver/tool"
	"github.com/toolserver/toolserver/tool/devicetool"
	"github.com/toolserver/toolserver/wire"
)

func jsonMarshal(v any) ([]byte, error) { return json.Marshal(v) }

// decodeArgs decodes a call's arguments, once per handler, after the
// registry unwrapped their file inputs and checked them against the
// schema.
func decodeArgs(call *tool.Call) (wire.ExecuteArgs, error) {
	var a wire.ExecuteArgs
	if err := a.Decode(call.Args); err != nil {
		return a, &fault.Error{Kind: fault.Validation, Message: "arguments: " + err.Error()}
	}
	return a, nil
}

// runSource is where one call's flow and its files come from.
type runSource struct {
	name   string
	entry  flowrun.Entry
	source flowrun.Source
	linked bool
	tools  flowrun.ToolCaller
	// check runs on the parsed flow before the prerequisite handshake:
	// pre-validation of a linked run, the older-client refusals.
	check  func(*flow.Flow) error
	writes func() []flow.BaselineWrite
}

// callSource decides how a call's flow is read: from the members a linked
// client sent; from the bytes alone when a client that sends no members
// is on another machine; else from this machine's disk.
func (t *Tools) callSource(call *tool.Call, a wire.ExecuteArgs) (runSource, error) {
	lc, _ := call.Values[linkedKey].(*linkedCall)
	switch {
	case lc != nil && lc.members != nil:
		entry, err := linkedEntry(lc, a.Name)
		if err != nil {
			return runSource{}, err
		}
		src := linkserver.NewSource(lc.members)
		return runSource{
			name: entry.Name, entry: entry, source: src, linked: true,
			tools:  t.linkedCaller(src),
			check:  func(fl *flow.Flow) error { return linkserver.Prevalidate(fl, entry.File, src, t.toolInfo) },
			writes: src.BaselineWrites,
		}, nil
	case lc != nil && lc.in.Content != nil && (t.NoHostFiles || call.Remote || !hostCopy(lc.in)):
		entry, err := linkedEntry(lc, a.Name)
		if err != nil {
			return runSource{}, err
		}
		src := linkserver.NewSource(nil)
		return runSource{
			name: entry.Name, entry: entry, source: src, linked: true,
			tools: t.linkedCaller(src),
			check: func(fl *flow.Flow) error { return linkserver.OlderClient(fl, entry.File.Canonical, t.toolInfo) },
		}, nil
	}
	src, err := resolveSource(call, a)
	if err != nil {
		return runSource{}, err
	}
	return runSource{name: src.name, entry: src.entry, source: flowrun.Disk{}}, nil
}

// PrerequisiteNotice is what flow-execute answers, without running, for a
// flow with an execution prerequisite the call did not acknowledge.
const PrerequisiteNotice = "This flow has an execution prerequisite that must be fulfilled before it can run. Verify the prerequisite is met and call flow-execute again with prerequisiteAcknowledged set to true."

func (t *Tools) execute() *tool.Tool {
	props := flowSourceProps()
	props[wire.ArgDevice] = tool.String("Device id, e.g. chromium-cdp-1280x800. Default: the single booted device, else chromium-cdp-1280x800.")
	props[wire.ArgPlatform] = tool.Enum("Platform of the run; only chromium runs here.", "ios", "android", "chromium", "vega")
	props[wire.ArgUpdateBaselines] = tool.Bool("Adopt the current screens as the snapshot baselines instead of comparing.")
	props[wire.ArgUpdateOnly] = tool.Enum("Compare, and adopt only the current screens that failed their comparison or have no baseline (changed), or only those with no baseline (missing). Our extension; it overrides updateBaselines.", "changed", "missing")
	props[wire.ArgPrerequisiteAcknowledged] = tool.Bool("Confirm the flow's executionPrerequisite holds.")
	props[wire.ArgSnapshotDefaults] = snapshotDefaultsSchema()
	props[wire.ArgBaseURL] = tool.String("What a launch: /path resolves against (http or https, at most 2048 bytes). Our extension; flow run --base-url sends it.")
	props[wire.ArgTunnel] = tool.String("The id of the tunnel (GET /tunnels) through which the run's browser reaches the client's exposed localhost targets and files. Our extension; flow run --expose sends it.")
	props[wire.ArgStrict] = tool.Bool("Strict mode (Playwright's): a step whose selector matches several elements fails instead of acting on the first with a warning, and equals/contains compare case. Nested flows run strictly too.")
	return &tool.Tool{
		Name:        flow.ToolFlowExecute,
		Description: "Run a saved flow (.argent/flows/<name>.yaml) on a Chromium device and return its report: each step's status, reasons, snapshot comparisons. Streams one progress event per finished step.",
		InputSchema: tool.Object(props, wire.ArgProjectRoot),
		FileInputs:  wire.ExecuteFileInputs(),
		LongRunning: true,
		Prepare:     t.prepareLinked,
		Run:         t.runExecute,
		Check:       t.checkExecute,
	}
}

// checkPlatform refuses a platform other than chromium.
func checkPlatform(p string) error {
	if p != "" && p != "chromium" {
		return &fault.Error{Kind: fault.Validation, Code: "FLOW_DEVICE_RESOLUTION", Field: wire.ArgPlatform, Message: "this tool-server runs chromium devices only (platform " + p + ")"}
	}
	return nil
}

// checkExecute reads and checks a call's flow as runExecute does before
// it runs it, running nothing: POST /v1/runs refuses here what the run
// would fail on at once (a flow that does not exist or does not parse,
// a member missing, another platform).
func (t *Tools) checkExecute(ctx context.Context, call *tool.Call) error {
	// A value the schema lets through and the decoder refuses (1.0 for
	// an integer of snapshotDefaults) fails the run, as it always has, not
	// the check.
	a, _ := decodeArgs(call)
	if err := checkPlatform(a.Platform); err != nil {
		return err
	}
	if a.Tunnel != "" {
		// A run started this way outlives the call, and a resume would
		// name a tunnel long closed.
		return &fault.Error{Kind: fault.Validation, Field: wire.ArgTunnel, Message: "tunnel: a run of POST /v1/runs outlives its client's tunnel; flow run --expose calls flow-execute itself (POST /tools/flow-execute)"}
	}
	if a.Device != "" {
		if _, _, err := cdp.ParseID(a.Device); err != nil {
			return devicetool.DeviceError(err)
		}
	}
	src, err := t.callSource(call, a)
	if err != nil {
		return err
	}
	p, err := flowrun.Prepare(src.entry)
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
	a, err := decodeArgs(call)
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
			return nil, &fault.Error{Kind: fault.Validation, Field: wire.ArgBaseURL, Message: "baseURL: " + err.Error()}
		}
	}
	if err := checkPlatform(a.Platform); err != nil {
		return nil, err
	}
	src, err := t.callSource(call, a)
	if err != nil {
		return nil, err
	}
	if src.name != "" {
		call.Progress(tool.FlowNamed{Name: src.name})
	}
	if ms, ok := src.source.(*linkserver.Source); ok && ct != nil {
		ms.ClientFiles = true
	}
	p, err := flowrun.Prepare(src.entry)
	if err != nil {
		return nil, prepareError(err)
	}
	fl := p.Flow
	if err := flowrun.CheckBaseURL(fl, src.name, a.BaseURL, src.linked); err != nil {
		return nil, &fault.Error{Kind: fault.Validation, Field: wire.ArgBaseURL, Message: err.Error()}
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
	opts := flowrun.Options{
		Source:          src.source,
		Tools:           src.tools,
		Linked:          src.linked,
		UpdateBaselines: a.UpdateBaselines != nil && *a.UpdateBaselines,
		Update:          flowrun.Update(a.UpdateOnly),
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
			dev = linkedDevice{Device: dev.(cdprun.Device), ct: ct, remote: true}
		}
		opts.Device = dev
		call.Progress(tool.DeviceHeld{Device: dev.ID()})
	}
	rep, _, err := flowrun.Run(ctx, opts, p)
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
		InputSchema: tool.Object(flowSourceProps(), wire.ArgProjectRoot),
		FileInputs:  wire.ExecuteFileInputs(),
		Prepare:     t.prepareLinked,
		Run: func(ctx context.Context, call *tool.Call) (any, error) {
			a, err := decodeArgs(call)
			if err != nil {
				return nil, err
			}
			src, err := t.callSource(call, a)
			if err != nil {
				return nil, err
			}
			p, err := flowrun.Prepare(src.entry)
			if err != nil {
				return nil, prepareError(err)
			}
			return map[string]any{"flow": src.name, "executionPrerequisite": p.Flow.ExecutionPrerequisite}, nil
		},
	}
}
