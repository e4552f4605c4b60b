package recordtool

// One recording: the flow file a recorder call names, where its take
// lives (this machine's disk or the client's), and how a take is read,
// checked and saved.

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/toolserver/toolserver/fault"
	"github.com/toolserver/toolserver/flow"
	flowrun "github.com/toolserver/toolserver/flow/run"
	"github.com/toolserver/toolserver/internal/atomicfile"
	"github.com/toolserver/toolserver/internal/clientfs"
	"github.com/toolserver/toolserver/internal/clientpath"
	"github.com/toolserver/toolserver/tool"
	"github.com/toolserver/toolserver/wire"
)

// recording is one take in progress.
type recording struct {
	name string
	// root is project_root as the call spelled it; messages and the
	// client's file path use it.
	root string
	// file is the flow file the results name: the absolute path on this
	// machine in host mode, <root>/.argent/flows/<name>.yaml as the client
	// spells it in client mode.
	file string
	// client is true when the file lives on the client: the recording was
	// started over a link (x-argent-linked) or its project_root does not
	// exist here. The take then lives in memory and each result carries a
	// client-file directive (savedTo).
	client bool
	// flow is the take as last saved. In host mode the file is re-read
	// before each change, so a hand edit mid-recording counts.
	flow *flow.Flow
}

// target is the flow file a recorder call names.
type target struct {
	name, root string
	// hostFile is the path the file has on this machine when root is an
	// absolute path here; clientFile the path as the client spells it.
	hostFile, clientFile string
	key, rootKey         string
}

// recArgs are the arguments every recorder tool takes.
type recArgs struct {
	Name        string `json:"name"`
	ProjectRoot string `json:"project_root"`
}

// resolveTarget validates name and project_root with the messages of
// flow-execute (FLOW_NAME_INVALID, FLOW_PROJECT_ROOT_INVALID) and derives
// the flow file and its key.
func resolveTarget(a recArgs) (target, error) {
	if err := flowrun.CheckNameRoot(a.Name, a.ProjectRoot); err != nil {
		return target{}, err
	}
	tg := target{name: a.Name, root: a.ProjectRoot}
	// The client writes a directive only to an absolute path whose two
	// parent segments are .argent/flows (docs/argent-client.md, §5.3), so the
	// client's path is spelled with '/' whatever the root uses.
	tg.clientFile = clientpath.FlowFile(a.ProjectRoot, a.Name)
	if filepath.IsAbs(a.ProjectRoot) {
		tg.hostFile = filepath.Join(clientpath.LocalFlowsDir(a.ProjectRoot), a.Name+".yaml")
		tg.key = clientfs.RealPath(tg.hostFile)
		tg.rootKey = clientfs.RealPath(a.ProjectRoot)
	} else {
		// A Windows client's root on a POSIX server: only ever a key.
		tg.key, tg.rootKey = tg.clientFile, strings.TrimRight(a.ProjectRoot, `/\`)
	}
	return tg, nil
}

// load returns the take: from memory in client mode; re-read and parsed
// from the file in host mode, so a hand edit since the last step counts.
func (rc *recording) load() (*flow.Flow, error) {
	if rc.client {
		return rc.flow, nil
	}
	data, err := os.ReadFile(rc.file)
	if err != nil {
		return nil, &fault.Error{Kind: fault.Validation, Code: wire.CodeFlowFileInvalid, Err: err,
			Message: fmt.Sprintf("Cannot read the flow file %s of the recording %q (%v). It changed outside the recorder; restore it, or call flow-start-recording to start the take over (it truncates). Nothing was added.", rc.file, rc.name, err)}
	}
	fl, err := flow.Parse(rc.file, data)
	if err != nil {
		return nil, &fault.Error{Kind: fault.Validation, Code: parseCode(err), Err: err,
			Message: fmt.Sprintf("The flow file %s of the recording %q no longer parses (edited by hand?): %v. Fix it and call the tool again; nothing was added.", rc.file, rc.name, err)}
	}
	return fl, nil
}

// parseCode is the code of a flow the parser (or Marshal's parse-back)
// rejects: Argent's FLOW_E2E_HAS_PREREQUISITE for a leading launch in a
// flow with a prerequisite, FLOW_FILE_INVALID otherwise.
func parseCode(err error) string {
	for _, e := range flow.Errors(err) {
		if e.Problem == flow.ProblemPrerequisite {
			return "FLOW_E2E_HAS_PREREQUISITE"
		}
	}
	return wire.CodeFlowFileInvalid
}

// withStep returns a copy of fl with step appended, numbered as the
// parser numbers it.
func withStep(fl *flow.Flow, step *flow.Step) *flow.Flow {
	out := *fl
	step.Path = flow.StepPath{len(fl.Steps) + 1}
	out.Steps = append(slices.Clip(fl.Steps), step)
	return &out
}

// appendStep reads the recording again (it may have been edited while a
// tool ran), appends step and saves it; it returns the new take and the
// savedTo of the result.
func (rc *recording) appendStep(step *flow.Step) (*flow.Flow, any, error) {
	fl, err := rc.load()
	if err != nil {
		return nil, nil, err
	}
	next := withStep(fl, step)
	data, err := rc.encode(next)
	if err != nil {
		return nil, nil, err
	}
	savedTo, err := rc.save(next, data)
	if err != nil {
		return nil, nil, err
	}
	return next, savedTo, nil
}

// encode marshals a take; a step the parser would refuse fails here, before
// anything is written (Marshal parses its output back).
func (rc *recording) encode(fl *flow.Flow) ([]byte, error) {
	fl.Name = rc.file
	b, err := flow.Marshal(fl)
	if err != nil {
		return nil, &fault.Error{Kind: fault.Validation, Code: parseCode(err), Err: err,
			Message: fmt.Sprintf("The step would make %s invalid, so nothing was added: %v", rc.file, err)}
	}
	return b, nil
}

// save writes the take: atomically to the file in host mode, to memory in
// client mode. It returns savedTo: the path, or the client-file directive
// the client applies (docs/argent-client.md, §5.3).
func (rc *recording) save(fl *flow.Flow, data []byte) (any, error) {
	if !rc.client {
		if err := atomicfile.WriteFile(rc.file, data); err != nil {
			return nil, writeFailed(fmt.Sprintf("Failed to write flow file %s", rc.file), err)
		}
	}
	rc.flow = fl
	return rc.savedTo(data), nil
}

func (rc *recording) savedTo(data []byte) any {
	if rc.client {
		return map[string]any{wire.ClientFileMarker: true, "path": rc.file, "content": string(data)}
	}
	return rc.file
}

// writeFailed is Argent's FLOW_FILE_WRITE_FAILED: what failed, the errno
// name, and a hint.
func writeFailed(what string, err error) error {
	code, ok := clientfs.ErrnoCode(err)
	if !ok {
		code = "EIO"
	}
	hint := "check that the tool-server can write there"
	switch code {
	case "EACCES", "EPERM":
		hint = "the tool-server's user may not write there; fix the permissions or record under a project it can write"
	case "EROFS":
		hint = "the file system is read-only; mount the project writable"
	case "ENOSPC":
		hint = "the disk is full"
	case "ENOTDIR", "EEXIST":
		hint = "a file stands where a directory of the path should be"
	}
	return &fault.Error{Kind: fault.WriteFailed, Code: "FLOW_FILE_WRITE_FAILED", Err: err,
		Message: fmt.Sprintf("%s (%s) — %s", what, code, hint)}
}

// stepWord is Argent's "1 step" / "2 steps".
func stepWord(n int) string {
	if n == 1 {
		return "1 step"
	}
	return fmt.Sprintf("%d steps", n)
}

// placeRecording decides where a new recording keeps its file: on this
// machine (host mode) when the project is here and the client did not
// come over a link; else on the client. A linked recording keeps its file
// on the client even when the path exists here (docs/link-protocol.md, "The
// x-argent-linked header").
func placeRecording(tg target, linked bool) *recording {
	rc := &recording{name: tg.name, root: tg.root}
	if st, err := os.Stat(tg.root); tg.hostFile != "" && !linked && err == nil && st.IsDir() {
		rc.file = tg.hostFile
	} else {
		rc.client, rc.file = true, tg.clientFile
	}
	return rc
}

// linkReason says why the recorder applies the refusals of
// docs/link-protocol.md's "x-argent-linked header" section to this call, or ""
// when it applies none: a call over a link, or a recording that keeps its file
// on the client.
func linkReason(rc *recording, call *tool.Call) string {
	switch {
	case call.Linked:
		return "this call came over a link (x-argent-linked)"
	case rc.client:
		return fmt.Sprintf("the recording %q keeps its file on the client (its project_root %s is not on the tool-server's machine)", rc.name, rc.root)
	}
	return ""
}
