package recordtool

import (
	"context"
	"encoding/base64"

	"github.com/toolserver/toolserver/flow"
	"github.com/toolserver/toolserver/internal/clientpath"
	linkserver "github.com/toolserver/toolserver/link/server"
	"github.com/toolserver/toolserver/tool"
	"github.com/toolserver/toolserver/wire"
)

const stepMembersKey = "link.step"

// prepareStepMembers reads the members a linked client sends with
// flow-add-step's project_root (docs/link-protocol.md, "Members of a recorded
// step"), before the arguments are checked.
func (t *Tools) prepareStepMembers(ctx context.Context, call *tool.Call) error {
	raw, ok := call.Args[wire.ArgProjectRoot]
	if !ok {
		return nil
	}
	in, withMembers, ok := linkserver.ParseInput(raw)
	if !ok || !withMembers {
		return nil
	}
	m, err := linkserver.Receive(ctx, in.Members, t.Uploads)
	if err != nil {
		return err
	}
	call.Values[stepMembersKey] = m
	return nil
}

// withStepMembers points the live call of a recorded step at the files the
// client sent: a flow-execute by name gets its flow and members as a
// flow_file input, a tool's file arguments become file inputs holding the
// members' bytes.
func (t *Tools) withStepMembers(call *tool.Call, command string, args map[string]any) error {
	m, _ := call.Values[stepMembersKey].(*linkserver.Members)
	if m == nil {
		return nil
	}
	if command == flow.ToolFlowExecute {
		name, _ := args[wire.ArgName].(string)
		root, _ := args[wire.ArgProjectRoot].(string)
		if name == "" || root == "" {
			return nil
		}
		dir := clientpath.FlowsDir(root)
		in := wire.FileInputObject{ArgentFileInput: true, Path: dir + "/" + name + ".yaml", Members: m.Wire()}
		if r := m.FlowFile(wire.Key(dir, name+".yaml")); r != nil {
			in.Canonical, in.Spelling = r.Canonical, r.Spelling
			if r.HasData {
				c := base64.StdEncoding.EncodeToString(r.Data)
				in.Content = &c
			}
		}
		args[wire.ArgFlowFile] = in
		return nil
	}
	inputs, _ := t.fileInputs(command)
	return linkserver.NewSource(m).ToolArgs(command, inputs, args, ". Nothing was recorded.")
}
