// Package flowargs owns what a run records of flow-execute's arguments:
// the caps of those it records or its errors quote, refused before
// anything is read, and what the run starts with (its flow's name, and
// whether the call is linked), read from the arguments before the call
// runs. flowtool checks them on every call; the server checks them for
// POST /v1/runs before the run exists. It is a package of its own so
// that the HTTP surface does not import the tool (and, through it, the
// link's server end, whose tests import the surface).
package flowargs

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/toolserver/toolserver/fault"
	"github.com/toolserver/toolserver/internal/clientpath"
	"github.com/toolserver/toolserver/runs"
	"github.com/toolserver/toolserver/wire"
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

// capped are the arguments under a cap, with what a refusal calls them.
var capped = []struct {
	arg  string
	max  int
	what string
}{
	{"name", MaxNameBytes, "a flow name"},
	{"device", MaxDeviceBytes, "a device id"},
	{"project_root", MaxPathBytes, "a path"},
	{"flow_path", MaxPathBytes, "a path"},
	{"flow_file", MaxPathBytes, "a path"},
}

// Check refuses an argument over its cap, naming it, its length and the
// cap. A path sent as a file input is the input's path. An argument of
// another type is the schema's to refuse.
func Check(args map[string]json.RawMessage) error {
	for _, c := range capped {
		s, input := stringArg(args[c.arg])
		if len(s) <= c.max {
			continue
		}
		name := c.arg
		if input {
			name += "'s path"
		}
		return &fault.Error{Kind: fault.Validation, Field: c.arg,
			Message: fmt.Sprintf("%s is %d bytes; %s has at most %d", name, len(s), c.what, c.max)}
	}
	return nil
}

// stringArg is an argument that is a string, or the path of a file input;
// input tells the second.
func stringArg(raw json.RawMessage) (s string, input bool) {
	if json.Unmarshal(raw, &s) == nil {
		return s, false
	}
	in, ok := fileInput(raw)
	return in.Path, ok
}

// fileInput decodes raw as a file-input object; ok is false when it is
// not one.
func fileInput(raw json.RawMessage) (in wire.FileInputObject, ok bool) {
	if len(raw) == 0 || raw[0] != '{' {
		return in, false
	}
	if err := wire.UnmarshalFileInput(raw, &in); err != nil || !in.ArgentFileInput {
		return wire.FileInputObject{}, false
	}
	return in, true
}

// FlowInput is the flow file input of a call's arguments before they are
// unwrapped: the first of flow_path and flow_file that is a file-input
// object. Its Members are nil unless the client sent a members field (an
// empty list too): a linked client's call (docs/link-protocol.md, "The
// flow file input").
func FlowInput(args map[string]json.RawMessage) (target string, in wire.FileInputObject, ok bool) {
	for _, target := range []string{"flow_path", "flow_file"} {
		if raw, present := args[target]; present {
			if in, ok := fileInput(raw); ok {
				return target, in, true
			}
		}
	}
	return "", wire.FileInputObject{}, false
}

// Begin is what a run of flow-execute's arguments (members included, as
// POST /v1/runs takes them) starts with: its flow, and linked when the
// flow file input carries members. The device is the run's to record
// once it has one. An argument over its cap is refused.
func Begin(args map[string]json.RawMessage) (runs.Begin, error) {
	if err := Check(args); err != nil {
		return runs.Begin{}, err
	}
	_, in, _ := FlowInput(args)
	return runs.Begin{Flow: FlowName(args), Linked: in.Members != nil}, nil
}

// FlowName names the flow of flow-execute's arguments for a run's record
// before the call is read: its name, or the base name of its file.
func FlowName(args map[string]json.RawMessage) string {
	var name string
	if json.Unmarshal(args["name"], &name) == nil && name != "" {
		return name
	}
	for _, k := range []string{"flow_path", "flow_file"} {
		if p, _ := stringArg(args[k]); p != "" {
			return strings.TrimSuffix(clientpath.Base(p), ".yaml")
		}
	}
	return ""
}
