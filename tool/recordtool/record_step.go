package recordtool

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/toolserver/toolserver/fault"
	"github.com/toolserver/toolserver/flow"
	flowrun "github.com/toolserver/toolserver/flow/run"
	"github.com/toolserver/toolserver/internal/clientfs"
	"github.com/toolserver/toolserver/internal/clientpath"
	"github.com/toolserver/toolserver/tool"
	"github.com/toolserver/toolserver/wire"
)

// deviceKeys are the arguments a recorded step leaves out: a replay binds
// the run's device itself (Argent's bindDeviceArgs).
var deviceKeys = []string{"udid", "device", "device_id"}

// flow-add-step records a step only when the live call succeeded. These are the
// codes of its refusals: FLOW_FILE_INVALID for a step a replay would reject
// (the replay check of docs/link-protocol.md uses the same code), and
// FLOW_STEP_FAILED for a call that returned but whose step a replay counts as
// failed (an unmet await-ui-element, a nested flow that did not pass).
const codeStepFailed = "FLOW_STEP_FAILED"

func (t *Tools) addStep(ctx context.Context, call *tool.Call) (any, error) {
	a, err := tool.Decode[struct {
		recArgs
		Command string          `json:"command"`
		Args    json.RawMessage `json:"args"`
		DelayMs float64         `json:"delayMs"`
	}](call)
	if err != nil {
		return nil, err
	}
	tg, err := resolveTarget(a.recArgs)
	if err != nil {
		return nil, err
	}
	args, err := stepArgs(a.Args)
	if err != nil {
		return nil, err
	}
	delay := millis(a.DelayMs)
	s, rc, err := t.session(ctx, wire.ToolAddStep, tg)
	if err != nil {
		return nil, err
	}
	defer s.release()
	// A recorded step never calls a recorder tool: a replay over a link
	// rejects a tool: step that records a flow, and a live call would wait
	// on its own lock.
	if wire.RecorderTool(a.Command) {
		return nil, &fault.Error{Kind: fault.Validation, Code: wire.CodeFlowFileInvalid, Field: "command",
			Message: fmt.Sprintf("flow-add-step cannot record %s: a flow that records flows cannot be replayed (a replay rejects a tool: step that records a flow). Nothing ran and nothing was recorded.", a.Command)}
	}
	if a.Command == commandSnapshot {
		return addSnapshot(rc, args, delay)
	}
	spec, ok := t.Registry.Get(a.Command)
	if !ok {
		return nil, &fault.Error{Kind: fault.NotFound, Code: "TOOL_NOT_FOUND", Field: "command",
			Message: fmt.Sprintf("unknown tool %q; GET /tools lists the tools. Nothing was recorded.", a.Command)}
	}
	fl, err := rc.load()
	if err != nil {
		return nil, err
	}
	plan, err := t.planStep(ctx, rc, call, spec, fl, args, delay)
	if err != nil {
		return nil, err
	}
	res, err := t.runLive(ctx, call, tg, a.Command, plan.args)
	if err != nil {
		return nil, err
	}
	if plan.nested {
		plan.step, plan.warning = nestedStep(rc, fl, plan.args, delay, plan.raw)
	}
	return record(rc, plan, res)
}

// stepPlan is what flow-add-step will record, decided before the live
// call: the step (nil for a flow-execute until its report is in), the raw
// tool: step it falls back to, a warning for the result, and the args the
// live call runs with.
type stepPlan struct {
	step, raw *flow.Step
	warning   string
	nested    bool // a flow-execute, whose form waits for its report
	args      map[string]any
}

// planStep plans the step before anything runs, so a step the recorder
// would refuse, or one the flow file cannot hold, never has a side effect.
func (t *Tools) planStep(ctx context.Context, rc *recording, call *tool.Call, spec *tool.Tool, fl *flow.Flow, args map[string]any, delay time.Duration) (stepPlan, error) {
	p := stepPlan{args: args}
	var err error
	switch {
	case spec.Name == flow.ToolFlowExecute:
		if p.args, err = planFlowExecute(rc, call, args); err != nil {
			return stepPlan{}, err
		}
		p.nested = true
	case spec.Name == "gesture-tap" && delay == 0:
		// The page is read before the tap changes it.
		p.step, p.warning = t.tapStep(ctx, args)
	case spec.Name == "open-url" && delay == 0:
		p.step = launchStep(args)
	}
	if !p.nested {
		if err := refuseFileInputs(rc, call, spec, args); err != nil {
			return stepPlan{}, err
		}
	}
	p.raw = toolStep(spec.Name, p.args, delay)
	if p.step == nil {
		p.step = p.raw
	}
	if _, err := rc.encode(withStep(fl, p.raw)); err != nil {
		return stepPlan{}, err
	}
	if _, err := rc.encode(withStep(fl, p.step)); err != nil {
		if !captured(p.step) {
			return stepPlan{}, err // a launch where the prerequisite forbids one
		}
		// A captured selector the flow cannot hold falls back to the raw
		// tool step, which the check above showed it can.
		p.step, p.warning = p.raw, fmt.Sprintf("kept the raw %s step: its captured selector cannot be written in a flow file (%v)", spec.Name, err)
	}
	return p, nil
}

// runLive makes the live call of the step. It reads the files the client
// sent with the step; the recorded step keeps the client's paths. A call
// that returned but whose step a replay counts as failed is an error.
func (t *Tools) runLive(ctx context.Context, call *tool.Call, tg target, command string, args map[string]any) (any, error) {
	liveArgs := make(map[string]any, len(args)+1)
	for k, v := range args {
		liveArgs[k] = v
	}
	if err := t.withStepMembers(call, command, liveArgs); err != nil {
		return nil, err
	}
	body, err := json.Marshal(liveArgs)
	if err != nil {
		return nil, err
	}
	// Mark the context: a recorder tool the live call reaches (a nested
	// flow with a tool: flow-add-step step) refuses instead of waiting
	// on the lock this call holds.
	res, err := t.Registry.Invoke(context.WithValue(ctx, ctxKey{}, tg.key), command, body, tool.Options{Linked: call.Linked, Progress: call.Progress, TempDir: t.TempDir})
	if err != nil {
		return nil, err
	}
	if err := stepFailed(command, res); err != nil {
		return nil, err
	}
	return res, nil
}

// record appends the planned step to the recording and saves it.
func record(rc *recording, p stepPlan, res any) (any, error) {
	next, savedTo, err := rc.appendStep(p.step)
	if err != nil {
		return nil, err
	}
	msg := fmt.Sprintf("Step added to %q flow", rc.name)
	if p.warning != "" {
		msg += " — " + p.warning
	}
	n := len(next.Steps)
	return map[string]any{
		"message":    msg,
		"toolResult": res,
		"stepCount":  n,
		"recorded":   fmt.Sprintf("%d. %s", n, summarize(next.Steps[n-1])),
		"savedTo":    savedTo,
	}, nil
}

// stepArgs decodes flow-add-step's args: the JSON text of an object, as
// Argent takes it, or (kinder to an agent that sends one) an object.
func stepArgs(raw json.RawMessage) (map[string]any, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return map[string]any{}, nil
	}
	if raw[0] == '"' {
		var text string
		if err := json.Unmarshal(raw, &text); err != nil {
			return nil, fault.FieldError("args", "args: %v", err)
		}
		raw = []byte(strings.TrimSpace(text))
		if len(raw) == 0 || string(raw) == "null" {
			return map[string]any{}, nil
		}
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil || m == nil {
		why := "it is not an object"
		if err != nil {
			why = err.Error()
		}
		return nil, fault.FieldError("args", "args must be the JSON text of an object, e.g. {\"x\":0.5,\"y\":0.3}: %s", why)
	}
	return m, nil
}

// captured reports whether step is a tap or long-press on a selector the
// recorder read from the page.
func captured(step *flow.Step) bool {
	switch d := step.Directive.(type) {
	case *flow.Tap:
		return d.On != nil
	case *flow.LongPress:
		return d.On != nil
	}
	return false
}

func millis(ms float64) time.Duration {
	if ms <= 0 {
		return 0
	}
	return time.Duration(ms * float64(time.Millisecond))
}

// toolStep is the generic form: tool: <command> with the args minus the
// device, and delayMs.
func toolStep(command string, args map[string]any, delay time.Duration) *flow.Step {
	clean := make(map[string]any, len(args))
	for k, v := range args {
		clean[k] = v
	}
	for _, k := range deviceKeys {
		delete(clean, k)
	}
	if command == flow.ToolFlowExecute {
		delete(clean, wire.ArgFlowFile) // internal: the client derives it
	}
	return &flow.Step{Directive: &flow.Tool{Name: command, Args: clean, Delay: delay}}
}

// launchStep records open-url with fresh: true as launch: <url>; both open
// the page in a fresh browser context and wait for the load, and a launch
// makes the recording an end-to-end flow. Any other open-url (it keeps the
// context's cookies and storage) stays a tool: step.
func launchStep(args map[string]any) *flow.Step {
	url, _ := args["url"].(string)
	if fresh, _ := args["fresh"].(bool); !fresh || url == "" {
		return nil
	}
	for k := range args {
		switch k {
		case "url", "fresh", "device", "udid":
		default:
			return nil
		}
	}
	return &flow.Step{Directive: &flow.Launch{URL: url}}
}

// refuseFileInputs applies the refusals of docs/link-protocol.md ("Tool files")
// for a tool: step's file inputs ("The x-argent-linked header"). A file
// argument is an input whose path is only that argument ("${<target>}"), of
// kind file, whose value is an absolute .png or .yaml path
// (docs/link-protocol.md, "Tool files"): the only files a client sends with a
// replay. Any other input the step sets — a directory, an app upload, an output
// directory, a path built from other arguments, a relative path, another
// extension — makes a replay over a link reject the step, so it is refused when
// the recording is replayed over a link. A client too old to send the header
// sends no files with the step either, so for its client-side recording a file
// argument is refused too.
func refuseFileInputs(rc *recording, call *tool.Call, spec *tool.Tool, args map[string]any) error {
	var bad, files []string
	for _, in := range wire.SetFileInputs(spec.FileInputs, args) {
		if in.Problem != "" {
			bad = append(bad, fmt.Sprintf("argument %s is %s", in.Target, in.Problem))
		} else {
			files = append(files, in.Target)
		}
	}
	if why := linkReason(rc, call); why != "" && len(bad) > 0 {
		return &fault.Error{Kind: fault.Validation, Code: wire.CodeFlowFileInvalid, Field: "args",
			Message: fmt.Sprintf("flow-add-step refused tool: %s: %s, and a replay over a link rejects it (%s; a client sends a tool only absolute .png and .yaml files that one argument names). The tool did not run and nothing was recorded.", spec.Name, why, strings.Join(bad, "; "))}
	}
	if olderClient(rc, call) && len(files) > 0 {
		return olderClientError(rc, fmt.Sprintf("tool: %s with a file argument (%s)", spec.Name, strings.Join(files, ", ")))
	}
	return nil
}

// olderClient tells a call from a client older than this tool-server (no
// x-argent-linked header, so no members with the step) on a recording
// whose file lives on the client: the client sent none of the files the
// step reads (docs/link-protocol.md, "The x-argent-linked header").
func olderClient(rc *recording, call *tool.Call) bool { return rc.client && !call.Linked }

func olderClientError(rc *recording, what string) error {
	return &fault.Error{Kind: fault.Validation, Code: wire.CodeFlowFileInvalid,
		Message: fmt.Sprintf("flow-add-step cannot record a %s: the recording %q keeps its file on the client (its project_root %s is not on the tool-server's machine), and this client sent no x-argent-linked header, so it is older than the tool-server and sends no files with a recorded step. Update the argent CLI or MCP adapter on the client (keep the client and the tool-server at the same version). Nothing ran and nothing was recorded.", what, rc.name, rc.root)}
}

// planFlowExecute checks a flow-execute before it runs. A flow_path has no
// file-input resolution through flow-add-step's opaque args, so one beside
// the recording is rewritten to name + project_root, as Argent does, and
// any other is refused: the replay of a nested flow_path is rejected over a
// link and works only on one machine.
func planFlowExecute(rc *recording, call *tool.Call, args map[string]any) (map[string]any, error) {
	name, _ := args[wire.ArgName].(string)
	fp, _ := args[wire.ArgFlowPath].(string)
	if fp != "" && name == "" {
		dir, base := clientpath.Split(fp)
		stem := strings.TrimSuffix(base, ".yaml")
		recDir, _ := clientpath.Split(rc.file)
		var detail string
		switch {
		case !strings.HasSuffix(base, ".yaml"):
			detail = "it is not a .yaml flow file"
		case !flow.ValidName(stem):
			detail = fmt.Sprintf("%q is not a valid flow name", stem)
		case !sameDir(dir, recDir):
			detail = fmt.Sprintf("it is not beside the recording (in %s)", recDir)
		}
		if detail != "" {
			return nil, &fault.Error{Kind: fault.Validation, Code: wire.CodeFlowFileInvalid, Field: "args",
				Message: fmt.Sprintf("Cannot record a flow-execute of flow_path %q: %s. flow_path carries no file-input resolution through flow-add-step's opaque args — record a flow of this project's .argent/flows by name (args name and project_root), or record it in its own project.", fp, detail)}
		}
		if olderClient(rc, call) {
			return nil, olderClientError(rc, fmt.Sprintf("flow-execute of the flow_path %q beside the recording", fp))
		}
		out := make(map[string]any, len(args)+1)
		for k, v := range args {
			out[k] = v
		}
		delete(out, wire.ArgFlowPath)
		out[wire.ArgName], out[wire.ArgProjectRoot] = stem, rc.root
		return out, nil
	}
	if name != "" && olderClient(rc, call) {
		return nil, olderClientError(rc, fmt.Sprintf("flow-execute of the flow %q", name))
	}
	return args, nil
}

// sameDir compares two directories: as spelled, or as the same directory
// on this machine.
func sameDir(a, b string) bool {
	if strings.TrimRight(a, `/\`) == strings.TrimRight(b, `/\`) {
		return true
	}
	sa, err1 := os.Stat(a)
	sb, err2 := os.Stat(b)
	return err1 == nil && err2 == nil && os.SameFile(sa, sb)
}

// stepFailed refuses a call that returned but whose step a replay counts as
// failed: an await-ui-element whose condition never held, and a nested flow
// that did not pass or did not run (docs/link-protocol.md: flow-add-step
// refuses a flow-execute step when the nested flow does not pass). The recorder
// applies this in host mode too: flow-add-step records a step only when it
// succeeded, and a recorded failure would fail every replay.
func stepFailed(command string, res any) error {
	failed := func(format string, a ...any) error {
		return &fault.Error{Kind: fault.Validation, Code: codeStepFailed, Message: fmt.Sprintf(format, a...)}
	}
	switch r := res.(type) {
	case *flow.Report:
		if r.OK {
			return nil
		}
		what := fmt.Sprintf("%d passed, %d failed, %d errored", r.Passed, r.Failed, r.Errored)
		for _, s := range r.Steps {
			if s.Status == flow.StatusFail || s.Status == flow.StatusError {
				kind := s.Tool
				if kind == "" {
					kind = s.Kind
				}
				reason := s.Reason
				if reason == "" {
					reason = "no reason given"
				}
				what += fmt.Sprintf(" (%s: %s)", kind, reason)
				break
			}
		}
		if r.Aborted {
			what = "it was aborted"
		}
		return failed("flow-add-step did not record the flow-execute: the nested flow %q did not pass — %s. A replay would fail at this step (and a replay over a link refuses it), so nothing was recorded; fix the flow and add the step again.", r.Flow, what)
	case map[string]any:
		if command == flow.ToolFlowExecute {
			if notice, _ := r["notice"].(string); notice != "" {
				pre, _ := r["executionPrerequisite"].(string)
				return failed("flow-add-step did not record the flow-execute: the nested flow %q did not run — its execution prerequisite was not acknowledged: %s. Bring the device to that state and pass prerequisiteAcknowledged: true in args; nothing was recorded.", r["flow"], pre)
			}
		}
		if command == "await-ui-element" && r["success"] == false {
			note, _ := r["note"].(string)
			return failed("flow-add-step did not record the await-ui-element: its condition was not met (%s), and a replay fails such a step. Nothing was recorded.", note)
		}
	}
	return nil
}

// nestedStep decides how a flow-execute that passed is recorded. A flow
// beside the recording becomes run: <name>.yaml, as Argent records a
// verified sibling: the path is relative, so the flow keeps working in
// another checkout (CI mounts the project elsewhere), where a recorded
// absolute project_root would not. run: inlines the flow's steps into this
// run, which differs from a nested run in three ways, and where one matters
// the raw tool: flow-execute step is kept with a warning instead: a snapshot
// in the flow (or its fragments) would look for its baselines under this
// flow's name; updateBaselines and delayMs have no run: spelling; and a
// leading run: reaching a launch is refused in a flow that declares an
// executionPrerequisite.
func nestedStep(rc *recording, fl *flow.Flow, args map[string]any, delay time.Duration, raw *flow.Step) (*flow.Step, string) {
	name, _ := args[wire.ArgName].(string)
	root, _ := args[wire.ArgProjectRoot].(string)
	keep := func(why string) (*flow.Step, string) {
		return raw, "kept the raw flow-execute step — " + why
	}
	if name == "" || root == "" {
		return raw, ""
	}
	for k := range args {
		if !wire.RunStandsFor(k) {
			return keep(fmt.Sprintf("run: has no spelling of its %s argument", k))
		}
	}
	if delay > 0 {
		return keep("run: takes no delayMs")
	}
	recDir := dirOfReal(rc.file)
	nestedFile := clientpath.FlowFile(root, name)
	a, err1 := os.Stat(nestedFile)
	b, err2 := os.Stat(recDir + "/" + name + ".yaml")
	if err1 != nil || err2 != nil || !os.SameFile(a, b) {
		return keep(fmt.Sprintf("%q is not a flow beside this recording, so it cannot be composed with run:", name))
	}
	snap, launches := reach(recDir, name+".yaml")
	switch {
	case snap:
		return keep(fmt.Sprintf("%q takes snapshots, and as a run: fragment it would look for their baselines under this flow's name", name))
	case launches && fl.ExecutionPrerequisite != "" && fl.Leading() == nil:
		return keep(fmt.Sprintf("%q launches its app, and a leading run: that reaches a launch is refused in a flow that declares an executionPrerequisite", name))
	}
	return &flow.Step{Directive: &flow.Run{Target: name + ".yaml"}}, ""
}

// dirOfReal is the real directory of a file, where its run: targets
// resolve.
func dirOfReal(file string) string {
	d, _ := clientpath.Split(clientfs.RealPath(file))
	return d
}

// reach walks the run: chain of a flow file on this machine, as the runner
// resolves it (beside each real file, at most wire.MaxDepth levels, each
// (directory, target) once), and tells whether any file of it has a
// snapshot: step and whether its leading steps reach a launch. A file that
// cannot be read or parsed counts as having snapshots, so the caller keeps
// the step as it ran.
func reach(dir, target string) (snapshots, launches bool) {
	seen := map[string]bool{}
	var walk func(dir, target string, depth int, leading bool) bool
	walk = func(dir, target string, depth int, leading bool) bool {
		if depth > wire.MaxDepth || seen[dir+"\x00"+target] {
			return false
		}
		seen[dir+"\x00"+target] = true
		f, err := flowrun.Disk{}.Open(dir, target)
		if err != nil || f.Err != nil {
			return true
		}
		fl, err := flow.Parse(f.Canonical, f.Data)
		if err != nil {
			return true
		}
		lead := fl.Leading()
		if leading && lead != nil && lead.Kind() == flow.KindLaunch {
			launches = true
		}
		for s := range fl.All() {
			switch d := s.Directive.(type) {
			case *flow.Snapshot:
				return true
			case *flow.Run:
				if walk(f.Dir(), d.File(), depth+1, leading && s == lead) {
					return true
				}
			}
		}
		return false
	}
	return walk(dir, target, 1, true), launches
}
