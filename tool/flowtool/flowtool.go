// Package flowtool owns the flow tools of the server: flow-execute and
// flow-read-prerequisite, which run and inspect flows through the flow
// runner on a device of the pool. The recorder tools, which write flows
// step by step, are tool/recordtool's.
package flowtool

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/toolserver/toolserver/device/cdp"
	"github.com/toolserver/toolserver/device/cdprun"
	"github.com/toolserver/toolserver/fault"
	"github.com/toolserver/toolserver/flow"
	flowrun "github.com/toolserver/toolserver/flow/run"
	"github.com/toolserver/toolserver/internal/clientpath"
	linkserver "github.com/toolserver/toolserver/link/server"
	"github.com/toolserver/toolserver/store"
	"github.com/toolserver/toolserver/tool"
	"github.com/toolserver/toolserver/tool/devicetool"
	"github.com/toolserver/toolserver/wire"
)

// DefaultDevice is the device a flow runs on when the call names none and
// no single device is booted.
const DefaultDevice = "chromium-cdp-1280x800"

// Tools is the flow tool set.
type Tools struct {
	Pool      *cdp.Pool
	Artifacts *store.Artifacts
	// Registry is where tool: steps find their tools.
	Registry *tool.Registry
	// Uploads is where members sent through POST /upload are taken from.
	Uploads linkserver.Uploads
	// TempDir holds the temp files of tool file arguments of linked runs.
	TempDir string
	// NoHostFiles makes a flow that arrives as bytes always run from those
	// bytes, never from a file at the same path on this machine (a server
	// whose paths may coincide with its clients' but hold other files).
	NoHostFiles bool
	// Tunnels are where a call's tunnel argument is looked up (flow run
	// --expose); nil refuses the argument.
	Tunnels *linkserver.Tunnels
}

// Register adds the flow tools to r.
func (t *Tools) Register(r *tool.Registry) {
	if t.Registry == nil {
		t.Registry = r
	}
	r.Add(t.execute())
	r.Add(t.readPrerequisite())
}

func flowSourceProps() map[string]*tool.Schema {
	return map[string]*tool.Schema{
		wire.ArgName:        tool.String("The flow's name: runs <project_root>/.argent/flows/<name>.yaml. Letters, digits, _ and -."),
		wire.ArgProjectRoot: tool.String("Absolute path of the project holding .argent/flows."),
		wire.ArgFlowPath:    tool.String("Absolute path of a flow file (instead of name)."),
		wire.ArgFlowFile:    tool.String("Internal: the flow file the client derives from project_root and name; leave it unset."),
	}
}

// source is where a call's flow comes from.
type source struct {
	name  string
	entry flowrun.Entry
}

// resolveSource finds the flow a call names: exactly one of name (with
// project_root) or flow_path.
func resolveSource(call *tool.Call, a wire.ExecuteArgs) (source, error) {
	invalid := func(code, field, format string, v ...any) error {
		return &fault.Error{Kind: fault.Validation, Code: code, Field: field, Message: fmt.Sprintf(format, v...)}
	}
	if (a.Name == "") == (a.FlowPath == "") {
		return source{}, invalid(wire.CodeFlowFileInvalid, wire.ArgFlowPath, "Pass exactly one flow source: name or flow_path.")
	}
	if call.Remote {
		field := wire.ArgName
		if a.FlowPath != "" {
			field = wire.ArgFlowPath
		}
		return source{}, invalid(wire.CodeFlowFileInvalid, field, "%s: this tool-server answers other machines, so it runs no flow file of its own for a caller: send the flow's bytes with the call (flow_path or flow_file with its content, as a linked or remote-routed client does)", field)
	}
	disk := flowrun.Disk{}
	if a.FlowPath != "" {
		p := a.FlowPath
		if f, ok := call.Files[wire.ArgFlowPath]; ok {
			p = f.Path
		}
		if !filepath.IsAbs(p) {
			return source{}, invalid(wire.CodeFlowFileInvalid, wire.ArgFlowPath, "Invalid flow_path %q: flow paths must be absolute — a relative path is resolved against the tool server's working directory, not the caller's. Pass the absolute path to the flow's YAML.", p)
		}
		if !strings.HasSuffix(p, ".yaml") {
			return source{}, invalid(wire.CodeFlowFileInvalid, wire.ArgFlowPath, "Invalid flow_path %q: flow files must use the .yaml extension.", p)
		}
		if err := nameTooLong(wire.ArgFlowPath, p); err != nil {
			return source{}, err
		}
		f, err := disk.OpenFile(p)
		if err != nil {
			return source{}, err
		}
		stem := strings.TrimSuffix(filepath.Base(p), ".yaml")
		return source{name: stem, entry: flowrun.Entry{File: f, Name: stem, StemFallback: stem}}, nil
	}
	if err := flowrun.CheckNameRoot(a.Name, a.ProjectRoot); err != nil {
		return source{}, err
	}
	flows := clientpath.LocalFlowsDir(a.ProjectRoot)
	if err := nameTooLong(wire.ArgProjectRoot, filepath.Join(flows, a.Name+".yaml")); err != nil {
		return source{}, err
	}
	f, err := disk.Open(flows, a.Name+".yaml")
	if err != nil {
		return source{}, err
	}
	return source{name: a.Name, entry: flowrun.Entry{File: f, Name: a.Name, StemFallback: a.Name}}, nil
}

// nameTooLong refuses a flow file whose path this machine's file system
// cannot even look up (ENAMETOOLONG: a component or the whole path over
// its limits). It is the caller's mistake, so a 4xx naming the argument,
// and its message quotes no path: a path the server resolved is not the
// caller's to read.
func nameTooLong(field, p string) error {
	if _, err := os.Lstat(p); !errors.Is(err, syscall.ENAMETOOLONG) {
		return nil
	}
	return &fault.Error{Kind: fault.Validation, Code: wire.CodeFlowFileInvalid, Field: field,
		Message: fmt.Sprintf("%s: the flow file's path is too long for this tool-server's file system (ENAMETOOLONG: a name in it, or the whole path, is over the file system's limit)", field)}
}

// prepareError maps a flow rejected before its first step to a tool error.
func prepareError(err error) error {
	var nameErr *flowrun.NameError
	var openErr *flow.OpenError
	switch {
	case errors.Is(err, flow.ErrInvalid):
		return &fault.Error{Kind: fault.Validation, Code: wire.CodeFlowFileInvalid, Message: err.Error(), Err: err}
	case errors.As(err, &nameErr):
		return &fault.Error{Kind: fault.Validation, Code: "FLOW_NAME_INVALID", Message: err.Error(), Err: err}
	case errors.As(err, &openErr):
		return &fault.Error{Kind: fault.NotFound, Code: "FLOW_NOT_FOUND", Message: err.Error(), Err: err}
	}
	return err
}

// needsDevice tells whether any step of the flow acts on a device; an
// echo- or wait-only flow runs without one.
func needsDevice(f *flow.Flow) bool {
	for s := range f.All() {
		switch s.Kind() {
		case flow.KindEcho, flow.KindWait, flow.KindScript:
		case flow.KindTool:
		default:
			return true
		}
	}
	return false
}

// resolveDevice picks the run's device: the one named, else the single
// booted one, else DefaultDevice; several booted ones need a name. The
// device stays in use until the call ends (devicetool.Acquire).
func (t *Tools) resolveDevice(ctx context.Context, call *tool.Call, id string) (flowrun.Device, error) {
	if id == "" {
		booted := t.Pool.List()
		switch len(booted) {
		case 0:
			id = DefaultDevice
		case 1:
			id = booted[0].ID
		default:
			ids := make([]string, len(booted))
			for i, b := range booted {
				ids[i] = b.ID
			}
			return nil, &fault.Error{Kind: fault.Validation, Code: "FLOW_DEVICE_RESOLUTION", Field: "device",
				Message: fmt.Sprintf("%d booted devices matched — pass device to disambiguate. Available devices: %s.", len(booted), strings.Join(ids, ", "))}
		}
	}
	d, err := devicetool.Acquire(ctx, t.Pool, call, id)
	if err != nil {
		return nil, err
	}
	return cdprun.Device{D: d}, nil
}

// caller lets tool: steps call the registry's tools.
func (t *Tools) caller() flowrun.ToolCaller {
	return func(ctx context.Context, name string, args map[string]any) (any, error) {
		return t.invokeStep(ctx, name, args)
	}
}

// Caller returns the tool caller of a local run's tool: steps.
func (t *Tools) Caller() flowrun.ToolCaller { return t.caller() }

// invokeStep calls a tool for a tool: step. The runner binds the run's
// device to every step; a tool whose schema has no device argument gets
// none, as Argent binds it only where the schema declares one.
func (t *Tools) invokeStep(ctx context.Context, name string, args map[string]any) (any, error) {
	if tl, ok := t.Registry.Get(name); ok {
		if _, declared := tl.InputSchema.Properties["device"]; !declared {
			delete(args, "device")
		}
	}
	b, err := jsonMarshal(args)
	if err != nil {
		return nil, err
	}
	res, err := t.Registry.Invoke(ctx, name, b, tool.Options{TempDir: t.TempDir})
	// A device tool on a browser that died is the machinery's failure,
	// as a step of the runner's own would be.
	return res, cdprun.Classify(err)
}

// artifactSink stores a run's artifacts in the server's artifact store.
type artifactSink struct{ s *store.Artifacts }

func (a artifactSink) Put(fl, name, mime string, data []byte) (flow.Artifact, error) {
	h, err := a.s.Put(fl+"-"+name, mime, data)
	if err != nil {
		return flow.Artifact{}, err
	}
	fh := flow.ArtifactHandle(h)
	return flow.Artifact{Handle: &fh}, nil
}
