package client

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"

	"github.com/toolserver/toolserver/flow"
	"github.com/toolserver/toolserver/internal/clientfs"
	"github.com/toolserver/toolserver/internal/clientpath"
	"github.com/toolserver/toolserver/wire"
)

// recordingFile is <project_root>/.argent/flows/<name>.yaml of a call
// with a valid name and an absolute project_root, "" otherwise.
func recordingFile(args map[string]any) string {
	// The recorder's tools name their recording as flow-execute names
	// its flow.
	a := wire.StepArgs(args)
	if !flow.ValidName(a.Name) || !filepath.IsAbs(a.ProjectRoot) {
		return ""
	}
	return clientpath.FlowFile(a.ProjectRoot, a.Name)
}

// recordedStep is the step a flow-add-step call runs and records: its
// command with args parsed from the JSON text of an object ({} without
// args); ok is false for anything else, which sends no members.
func recordedStep(args map[string]any) (command string, stepArgs map[string]any, ok bool) {
	command, ok = args["command"].(string)
	if !ok {
		return "", nil, false
	}
	raw, present := args["args"]
	if !present {
		return command, map[string]any{}, true
	}
	text, isStr := raw.(string)
	if !isStr {
		return "", nil, false
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(text), &m); err != nil || m == nil {
		return "", nil, false
	}
	return command, m, true
}

// stepMembers collects the members of the one step a flow-add-step call records
// (docs/link-protocol.md, "Members of a recorded step"): the file arguments of
// a tool: step; for a flow-execute, the recording file, the file with the
// step's flow name beside the real recording file, and the flow the step names
// with its members and the baselines of its run. A flow_path in the recording's
// directory counts as that file's name (the recorder rewrites it so), and that
// file is also sent by the recording's directory and its own file name; another
// flow_path sends the recording file alone. A call without a valid name, an
// absolute project_root, or args that are the JSON text of an object sends an
// empty list. The client policy applies with the recording file in place of the
// flow file.
func (st *callState) stepMembers(ctx context.Context) ([]wire.Member, error) {
	rec := recordingFile(st.args)
	command, args, ok := recordedStep(st.args)
	if rec == "" || !ok {
		return []wire.Member{}, nil
	}
	projectRoot := wire.StepArgs(st.args).ProjectRoot
	c := st.newCollector(clientfs.ClientRoots(rec, clientfs.RealPath(rec), projectRoot))
	if err := c.toolFiles(ctx, command, args); err != nil {
		return nil, err
	}
	if command == flow.ToolFlowExecute {
		recDir := filepath.Dir(rec)
		self, err := c.flowMember(ctx, recDir, filepath.Base(rec))
		if err != nil {
			return nil, err
		}
		n := flow.NestedOf(args)
		if n.FlowPath != "" && n.Name == "" {
			if stem, beside := besideRecording(n.FlowPath, recDir); beside {
				if _, err := c.flowMember(ctx, recDir, filepath.Base(n.FlowPath)); err != nil {
					return nil, err
				}
				// The recorder runs it as name + the recording's project_root.
				n.Name, n.FlowPath, n.ProjectRoot = stem, "", projectRoot
			}
		}
		if n.Followable() {
			if _, err := c.flowMember(ctx, filepath.Dir(self.canonical), n.FileName()); err != nil {
				return nil, err
			}
			// Only the step's own updateBaselines: true updates here.
			update := n.UpdateBaselines != nil && *n.UpdateBaselines
			run, err := c.nestedRun(ctx, n, 0, update, callPlatform(wire.StepArgs(args)))
			if err != nil {
				return nil, err
			}
			if run != nil {
				if err := c.walk(ctx, *run); err != nil {
					return nil, err
				}
			}
		}
	}
	if err := c.sendBaselines(ctx); err != nil {
		return nil, err
	}
	return c.members, nil
}

// besideRecording reports whether flowPath is a flow file in the
// recording's directory (as spelled, or the same directory on this
// machine), with its stem.
func besideRecording(flowPath, recDir string) (string, bool) {
	base := filepath.Base(flowPath)
	stem := strings.TrimSuffix(base, ".yaml")
	if !flow.ValidFileName(base) || !filepath.IsAbs(flowPath) {
		return "", false
	}
	dir := filepath.Dir(flowPath)
	if dir == filepath.Clean(recDir) {
		return stem, true
	}
	a, err1 := os.Stat(dir)
	b, err2 := os.Stat(recDir)
	return stem, err1 == nil && err2 == nil && os.SameFile(a, b)
}
