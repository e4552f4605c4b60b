package link

import (
	"fmt"
	"strings"

	"github.com/toolserver/toolserver/fault"
	"github.com/toolserver/toolserver/flow"
	"github.com/toolserver/toolserver/tool"
)

// The sentences the seed adds when a client that sends no members meets a
// tool-server that reads them ("Older clients and tool-servers").
const (
	OlderRun      = "This tool-server runs run: steps for a client that sends their fragments with the call. Update the argent CLI or MCP adapter on the client."
	OlderSnapshot = "This tool-server runs snapshot: steps for a client that sends their baselines with the call. Update the argent CLI or MCP adapter on the client."
	OlderNested   = "This tool-server runs tool: flow-execute steps that name a flow with name, for a client that sends those flows with the call. Update the argent CLI or MCP adapter on the client."
	OlderToolFile = "This tool-server runs tool: steps with file arguments for a client that sends them with the call. Update the argent CLI or MCP adapter on the client."
)

// OlderClient rejects, before the first step, a flow that arrived without
// members (from a client older than this tool-server, on another machine)
// when it needs files only members carry: run: fragments, snapshot
// baselines, nested named flows, tool file arguments. canonical names the
// flow file in the lines.
func OlderClient(fl *flow.Flow, canonical string, tools ToolInfo) error {
	var lines []string
	need := map[string]bool{}
	for s := range fl.All() {
		why := ""
		switch d := s.Directive.(type) {
		case *flow.Run:
			why = OlderRun
		case *flow.Snapshot:
			why = OlderSnapshot
		case *flow.Tool:
			if d.Name == flow.ToolFlowExecute {
				if _, named := d.Args["name"]; named {
					why = OlderNested
				}
			} else if inputs, ok := tools(d.Name); ok && hasFileArg(d.Args, inputs) {
				why = OlderToolFile
			}
		}
		if why != "" {
			lines = append(lines, fmt.Sprintf("step %s in %s: %s", s.Path, canonical, flow.FormatStep(s)))
			need[why] = true
		}
	}
	if len(lines) == 0 {
		return nil
	}
	for _, sentence := range []string{OlderRun, OlderSnapshot, OlderNested, OlderToolFile} {
		if need[sentence] {
			lines = append(lines, sentence)
		}
	}
	return &tool.Error{Kind: fault.Validation, Code: "FLOW_FILE_INVALID", Message: strings.Join(lines, "\n")}
}

// hasFileArg reports whether the step sets a file argument of the tool.
func hasFileArg(args map[string]any, inputs []tool.FileInput) bool {
	for _, in := range SetFileInputs(inputs, args) {
		if in.Problem == "" {
			return true
		}
	}
	return false
}
