package server

import (
	"fmt"
	"strings"

	"github.com/toolserver/toolserver/fault"
	"github.com/toolserver/toolserver/flow"
	"github.com/toolserver/toolserver/wire"
)

// ToolInfo returns the file inputs a tool declares, and false for a tool
// the server does not have.
type ToolInfo func(name string) ([]wire.FileInput, bool)

// fileArgProblem tells why a tool: step's file input is not a file
// argument a client can send, or "" when every input it sets is one
// (docs/link-protocol.md, "Tool files" and pre-validation).
func fileArgProblem(args map[string]any, inputs []wire.FileInput) string {
	for _, in := range wire.SetFileInputs(inputs, args) {
		if in.Problem != "" {
			return fmt.Sprintf("argument %s is %s", in.Target, in.Problem)
		}
	}
	return ""
}

// Prevalidate checks, before the first step, the flow and every member it
// can reach to the depth limit, and rejects with FLOW_FILE_INVALID and one
// line per offending step: script: steps, tool: steps that record a flow,
// flow-execute steps that do not name their flow with name and an absolute
// project_root without "..", tool: steps whose file input is not a file
// argument, refused flow members, and a launch: with a relative path.
func Prevalidate(root *flow.Flow, rootFile *flow.File, src *Source, tools ToolInfo) error {
	pv := &prevalidation{src: src, tools: tools, seen: map[string]bool{}}
	pv.queue = []reached{{root, rootFile, 0}}
	for len(pv.queue) > 0 {
		it := pv.queue[0]
		pv.queue = pv.queue[1:]
		for s := range it.fl.All() {
			pv.check(it, s)
		}
	}
	if len(pv.lines) == 0 {
		return nil
	}
	return &fault.Error{Kind: fault.Validation, Code: wire.CodeFlowFileInvalid,
		Message: "This flow cannot run over a link; the tool-server rejected it before the first step:\n" + strings.Join(pv.lines, "\n")}
}

// prevalidation is one Prevalidate: the flows still to check, breadth
// first, and the lines of the steps that failed.
type prevalidation struct {
	src   *Source
	tools ToolInfo
	seen  map[string]bool
	queue []reached
	lines []string
}

// reached is a flow Prevalidate reached, at its level of the run: chain.
type reached struct {
	fl    *flow.Flow
	file  *flow.File
	level int
}

// check checks one step of a reached flow and queues the flow members it
// runs.
func (pv *prevalidation) check(it reached, s *flow.Step) {
	switch d := s.Directive.(type) {
	case *flow.Script:
		pv.bad(it.file, s, "")
	case *flow.Launch:
		// A path from the root resolves against the run's base URL
		// (checked before the run, flow/run.CheckBaseURL).
		// A relative path is the client's to serve, through the call's
		// tunnel.
		if t, ok := d.ChromiumTarget(); ok && !flow.IsLaunchURL(t) && !strings.HasPrefix(t, "/") && !pv.src.ClientFiles {
			pv.bad(it.file, s, "a relative launch path resolves on the tool-server's machine; launch a URL, or run flow run with --expose so that the client serves its files")
		}
	case *flow.Run:
		pv.reach(it.file, s, wire.Key(it.file.Dir(), d.File()), it.level+1)
	case *flow.Tool:
		switch {
		case wire.RecorderTool(d.Name):
			pv.bad(it.file, s, "")
		case d.Name == flow.ToolFlowExecute:
			for _, n := range it.fl.NestedFlows() {
				if n.Step != s {
					continue
				}
				if !n.Followable() {
					pv.bad(it.file, s, "")
				} else {
					pv.reach(it.file, s, wire.Key(n.FlowsDir(), n.FileName()), it.level+1)
				}
			}
		default:
			if inputs, ok := pv.tools(d.Name); ok {
				if why := fileArgProblem(d.Args, inputs); why != "" {
					pv.bad(it.file, s, why)
				}
			}
		}
	}
}

// bad adds the line of a step that stops the run.
func (pv *prevalidation) bad(f *flow.File, s *flow.Step, why string) {
	l := fmt.Sprintf("step %s in %s: %s", s.Path, f.Canonical, flow.FormatStep(s))
	if why != "" {
		l += " (" + why + ")"
	}
	pv.lines = append(pv.lines, l)
}

// reach queues the flow member with key, when it can be read.
func (pv *prevalidation) reach(from *flow.File, s *flow.Step, key string, level int) {
	if pv.seen[key] || level > wire.MaxDepth {
		return
	}
	pv.seen[key] = true
	r := pv.src.m.Get(key)
	if r == nil || r.Role != wire.RoleFlow {
		return // a missing member fails its step at run time
	}
	if r.State == wire.StateRefused {
		pv.bad(from, s, wire.RefusedByClient+": "+r.Error)
		return
	}
	if !r.HasData {
		return
	}
	fl, err := flow.Parse(r.Canonical, r.Data)
	if err != nil {
		return // reported by the step that runs it
	}
	pv.queue = append(pv.queue, reached{fl, &flow.File{Path: r.Path, Canonical: r.Canonical, Spelling: *r.Spelling, Data: r.Data}, level})
}
