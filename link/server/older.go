package server

import (
	"fmt"
	"strings"

	"github.com/toolserver/toolserver/fault"
	"github.com/toolserver/toolserver/flow"
	"github.com/toolserver/toolserver/wire"
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
			why = wire.OlderRun
		case *flow.Snapshot:
			why = wire.OlderSnapshot
		case *flow.Tool:
			if d.Name == flow.ToolFlowExecute {
				if _, named := d.Args[wire.ArgName]; named {
					why = wire.OlderNested
				}
			} else if inputs, ok := tools(d.Name); ok && hasFileArg(d.Args, inputs) {
				why = wire.OlderToolFile
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
	for _, sentence := range []string{wire.OlderRun, wire.OlderSnapshot, wire.OlderNested, wire.OlderToolFile} {
		if need[sentence] {
			lines = append(lines, sentence)
		}
	}
	return &fault.Error{Kind: fault.Validation, Code: wire.CodeFlowFileInvalid, Message: strings.Join(lines, "\n")}
}

// hasFileArg reports whether the step sets a file argument of the tool.
func hasFileArg(args map[string]any, inputs []wire.FileInput) bool {
	for _, in := range wire.SetFileInputs(inputs, args) {
		if in.Problem == "" {
			return true
		}
	}
	return false
}
