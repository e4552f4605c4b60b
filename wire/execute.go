package wire

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/toolserver/toolserver/internal/clientpath"
)

// The names of flow-execute's arguments. This file is the only one that
// spells them (internal/layout's test holds it so): every other package
// names them through these constants or reads them through ExecuteArgs.
const (
	ArgName                     = "name"
	ArgProjectRoot              = "project_root"
	ArgFlowPath                 = "flow_path"
	ArgFlowFile                 = "flow_file"
	ArgDevice                   = "device"
	ArgPlatform                 = "platform"
	ArgUpdateBaselines          = "updateBaselines"
	ArgUpdateOnly               = "updateOnly"
	ArgPrerequisiteAcknowledged = "prerequisiteAcknowledged"
	ArgSnapshotDefaults         = "snapshotDefaults"
	ArgBaseURL                  = "baseURL"
	ArgTunnel                   = "tunnel"
	ArgStrict                   = "strict"
)

// The caps of flow-execute's arguments that a run records or its errors
// quote (docs/control-plane.md, "Starting a run: fire and return").
const (
	// MaxNameBytes caps a flow name: it is also a file name (with .yaml)
	// and a directory of __baselines__, and starts the artifacts' names.
	MaxNameBytes = 128
	// MaxDeviceBytes caps a device id (chromium-cdp-4096x4096#99 is 25).
	MaxDeviceBytes = 64
	// MaxPathBytes caps project_root, flow_path and the path of a flow
	// file input: Linux's PATH_MAX.
	MaxPathBytes = 4096
)

// ExecuteArgs are flow-execute's arguments: the run request itself. A
// client builds them and sends their Map; the tool decodes them once per
// call (Decode), the plane and the tool's Prepare hook read the call as
// the client sent it, file inputs and all (ReadExecute), and the readers
// of a tool: step read its arguments (StepArgs).
//
// The flow is named by Name under ProjectRoot, or by FlowPath; FlowFile is
// the file input the client derives from the first two (flowFileInputs).
type ExecuteArgs struct {
	Name        string `json:"name,omitempty"`
	ProjectRoot string `json:"project_root,omitempty"`
	FlowPath    string `json:"flow_path,omitempty"`
	FlowFile    string `json:"flow_file,omitempty"`
	// Device is the device id; "" is the tool-server's default. flow run
	// sends it always, empty too.
	Device   string `json:"device"`
	Platform string `json:"platform,omitempty"`
	// UpdateBaselines is nil when the call says nothing: a nested run
	// then updates as the run that starts it does.
	UpdateBaselines *bool `json:"updateBaselines,omitempty"`
	// UpdateOnly is "changed" or "missing" (our extension); it overrides
	// UpdateBaselines.
	UpdateOnly               string            `json:"updateOnly,omitempty"`
	PrerequisiteAcknowledged bool              `json:"prerequisiteAcknowledged,omitempty"`
	SnapshotDefaults         *SnapshotDefaults `json:"snapshotDefaults,omitempty"`
	BaseURL                  string            `json:"baseURL,omitempty"`
	Tunnel                   string            `json:"tunnel,omitempty"`
	Strict                   bool              `json:"strict,omitempty"`

	// inputs are the capped arguments the call sent as file-input objects
	// (ReadExecute), by argument.
	inputs map[string]FileInputObject
}

// SnapshotDefaults is flow-execute's optional snapshotDefaults argument,
// this project's addition to Argent's tool: the project's snapshot limits
// (its .argent/toolserver.yaml under the flags of flow run) as a client
// resolved them, with where each came from. Its fields marshal in this
// order, as flow run has always sent them.
type SnapshotDefaults struct {
	MaxMismatch   *float64 `json:"maxMismatch,omitempty"`
	MaxDiffPixels *int     `json:"maxDiffPixels,omitempty"`
	Threshold     *float64 `json:"threshold,omitempty"`
	Metric        *string  `json:"metric,omitempty"`
	WindowSize    *int     `json:"windowSize,omitempty"`
	// StopOnFailure is the project's stopOnFailure: true makes a failed
	// snapshot stop the flow.
	StopOnFailure *bool             `json:"stopOnFailure,omitempty"`
	Sources       map[string]string `json:"sources,omitempty"`
}

// ExecuteArgNames returns the names of the arguments flow-execute
// declares, in the order of ExecuteArgs: its schema declares exactly
// these.
func ExecuteArgNames() []string {
	var a ExecuteArgs
	fs := a.fields()
	names := make([]string, len(fs))
	for i, f := range fs {
		names[i] = f.name
	}
	return names
}

// ExecuteFileInputs are flow-execute's file inputs exactly as
// docs/link-protocol.md lists them ("collect in GET /tools").
func ExecuteFileInputs() []FileInput {
	return []FileInput{
		{Target: ArgFlowPath, Path: "${" + ArgFlowPath + "}", Kind: "file", Optional: true, UnwrapWhenSet: ArgName, Collect: CollectFlow},
		{Target: ArgFlowFile, Path: "${" + ArgProjectRoot + "}/.argent/flows/${" + ArgName + "}.yaml", Kind: "file", SkipWhenSet: ArgFlowPath, Collect: CollectFlow},
	}
}

// Decode decodes a call's arguments, file inputs already unwrapped to
// paths, as encoding/json decodes them into a struct: an argument of the
// wrong type is an error (the first in the order of the keys), and the
// others are decoded all the same. The error reads as encoding/json's of
// an unnamed struct, so a call refused here reads as it always has.
func (a *ExecuteArgs) Decode(args map[string]json.RawMessage) error {
	b, err := json.Marshal(args)
	if err != nil {
		return err
	}
	err = json.Unmarshal(b, a)
	if te, ok := errors.AsType[*json.UnmarshalTypeError](err); ok {
		te.Struct = ""
	}
	return err
}

// ReadExecute reads flow-execute's arguments as the client sent them,
// before the registry unwraps their file inputs or checks their types: an
// argument of another type is left zero (the schema refuses it later),
// and a capped argument sent as a file-input object counts by its path
// for Check and FlowName, its object kept for FlowInput.
func ReadExecute(args map[string]json.RawMessage) ExecuteArgs {
	var a ExecuteArgs
	for _, f := range a.fields() {
		raw, ok := args[f.name]
		if !ok {
			continue
		}
		if isCapped(f.name) {
			if in, ok := fileInput(raw); ok {
				if a.inputs == nil {
					a.inputs = map[string]FileInputObject{}
				}
				a.inputs[f.name] = in
				continue
			}
		}
		// A value of another type leaves the field zero.
		_ = json.Unmarshal(raw, f.ptr)
	}
	return a
}

// StepArgs reads the arguments of a tool: step (or a recorded step) that
// calls flow-execute, as YAML decoded them: an argument of another type is
// left zero, and snapshotDefaults is read only as the value a client put
// in its own map.
func StepArgs(args map[string]any) ExecuteArgs {
	var a ExecuteArgs
	for _, f := range a.fields() {
		v, ok := args[f.name]
		if !ok {
			continue
		}
		switch p := f.ptr.(type) {
		case *string:
			*p, _ = v.(string)
		case *bool:
			*p, _ = v.(bool)
		case **bool:
			if b, ok := v.(bool); ok {
				*p = &b
			}
		case **SnapshotDefaults:
			*p, _ = v.(*SnapshotDefaults)
		}
	}
	return a
}

// Map is the arguments as a client hands them to the link client (and
// as a tool: step carries them): device always, an argument the call
// leaves unset never. Marshalled, its keys sort, so the bytes of a call
// are those flow run has always sent.
func (a ExecuteArgs) Map() map[string]any {
	m := map[string]any{}
	for _, f := range a.fields() {
		switch p := f.ptr.(type) {
		case *string:
			if *p != "" || f.name == ArgDevice {
				m[f.name] = *p
			}
		case *bool:
			if *p {
				m[f.name] = true
			}
		case **bool:
			if *p != nil {
				m[f.name] = **p
			}
		case **SnapshotDefaults:
			if *p != nil {
				m[f.name] = *p
			}
		}
	}
	return m
}

// field is one argument of ExecuteArgs: its name and where it decodes.
type field struct {
	name string
	ptr  any
}

// fields are a's arguments, in the order of its fields.
func (a *ExecuteArgs) fields() []field {
	return []field{
		{ArgName, &a.Name},
		{ArgProjectRoot, &a.ProjectRoot},
		{ArgFlowPath, &a.FlowPath},
		{ArgFlowFile, &a.FlowFile},
		{ArgDevice, &a.Device},
		{ArgPlatform, &a.Platform},
		{ArgUpdateBaselines, &a.UpdateBaselines},
		{ArgUpdateOnly, &a.UpdateOnly},
		{ArgPrerequisiteAcknowledged, &a.PrerequisiteAcknowledged},
		{ArgSnapshotDefaults, &a.SnapshotDefaults},
		{ArgBaseURL, &a.BaseURL},
		{ArgTunnel, &a.Tunnel},
		{ArgStrict, &a.Strict},
	}
}

// ArgError is an argument of flow-execute over its cap: Field names it,
// Message says by how much. The tool reports it as a validation error of
// that field.
type ArgError struct {
	Field   string
	Message string
}

func (e *ArgError) Error() string { return e.Message }

// capped are the arguments under a cap, with what a refusal calls them.
var capped = []struct {
	arg  string
	max  int
	what string
}{
	{ArgName, MaxNameBytes, "a flow name"},
	{ArgDevice, MaxDeviceBytes, "a device id"},
	{ArgProjectRoot, MaxPathBytes, "a path"},
	{ArgFlowPath, MaxPathBytes, "a path"},
	{ArgFlowFile, MaxPathBytes, "a path"},
}

// isCapped reports whether arg is under a cap (capped), so that a
// file-input object may stand for it.
func isCapped(arg string) bool {
	for _, c := range capped {
		if c.arg == arg {
			return true
		}
	}
	return false
}

// Check refuses an argument over its cap with an *ArgError naming it, its
// length and the cap. A path sent as a file input is the input's path.
func (a ExecuteArgs) Check() error {
	for _, c := range capped {
		s, input := a.stringArg(c.arg)
		if len(s) <= c.max {
			continue
		}
		name := c.arg
		if input {
			name += "'s path"
		}
		return &ArgError{Field: c.arg, Message: fmt.Sprintf("%s is %d bytes; %s has at most %d", name, len(s), c.what, c.max)}
	}
	return nil
}

// stringArg is the capped argument k: its string, or the path of the
// file input sent for it; input tells the second.
func (a ExecuteArgs) stringArg(k string) (s string, input bool) {
	for _, f := range a.fields() {
		if f.name != k {
			continue
		}
		if s := *f.ptr.(*string); s != "" {
			return s, false
		}
	}
	in, ok := a.inputs[k]
	return in.Path, ok
}

// fileInput decodes raw as a file-input object; ok is false when it is
// not one.
func fileInput(raw json.RawMessage) (in FileInputObject, ok bool) {
	if len(raw) == 0 || raw[0] != '{' {
		return in, false
	}
	if err := UnmarshalFileInput(raw, &in); err != nil || !in.ArgentFileInput {
		return FileInputObject{}, false
	}
	return in, true
}

// FlowInput is the flow file input of the arguments as ReadExecute read
// them: the first of flow_path and flow_file sent as a file-input object.
// Its Members are nil unless the client sent a members field (an empty
// list too): a linked client's call (docs/link-protocol.md, "The flow
// file input").
func (a ExecuteArgs) FlowInput() (target string, in FileInputObject, ok bool) {
	for _, target := range []string{ArgFlowPath, ArgFlowFile} {
		if in, ok := a.inputs[target]; ok {
			return target, in, true
		}
	}
	return "", FileInputObject{}, false
}

// SentMembers reports whether the flow file input carries members: the
// call is linked.
func (a ExecuteArgs) SentMembers() bool {
	_, in, _ := a.FlowInput()
	return in.Members != nil
}

// FlowName names the flow of the arguments for a run's record before the
// call is read: its name, or the base name of its file.
func (a ExecuteArgs) FlowName() string {
	if a.Name != "" {
		return a.Name
	}
	for _, k := range []string{ArgFlowPath, ArgFlowFile} {
		if p, _ := a.stringArg(k); p != "" {
			return strings.TrimSuffix(clientpath.Base(p), ".yaml")
		}
	}
	return ""
}

// Update reports whether the call adopts screens as baselines: every one
// (updateBaselines) or some (updateOnly); narrow is the second.
func (a ExecuteArgs) Update() (update, narrow bool) {
	narrow = a.UpdateOnly != ""
	return narrow || a.UpdateBaselines != nil && *a.UpdateBaselines, narrow
}

// RunStandsFor reports whether a run: directive can stand for a nested
// flow-execute's argument arg, so the recorder may inline the step: the
// flow's name and project, the device (also by the aliases udid and
// device_id Argent's recorder writes), the platform, the acknowledged
// prerequisite and the flow file input the client derives.
func RunStandsFor(arg string) bool {
	switch arg {
	case ArgName, ArgProjectRoot, ArgDevice, "udid", "device_id", ArgPlatform, ArgPrerequisiteAcknowledged, ArgFlowFile:
		return true
	}
	return false
}
