package recordtool

// The recorder's five tools: their declarations and the handlers of
// flow-start-recording, flow-add-echo, flow-add-script and
// flow-finish-recording (flow-add-step is record_step.go's).

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/toolserver/toolserver/fault"
	"github.com/toolserver/toolserver/flow"
	"github.com/toolserver/toolserver/internal/clientfs"
	"github.com/toolserver/toolserver/tool"
	"github.com/toolserver/toolserver/wire"
)

// ctxKey marks a context that runs inside a step being recorded.
type ctxKey struct{}

// refuseNested stops a recorder tool that a step being recorded calls (a
// nested flow with a tool: flow-add-step step): it would wait forever on
// the lock its own caller holds.
func refuseNested(ctx context.Context, name string) error {
	if ctx.Value(ctxKey{}) == nil {
		return nil
	}
	return &fault.Error{Kind: fault.Validation, Code: wire.CodeFlowFileInvalid,
		Message: fmt.Sprintf("%s cannot run inside a step that is being recorded: a flow that records flows cannot be recorded", name)}
}

// open resolves the recording a call names and takes its lock, for the
// tools that only append to it.
func (t *Tools) open(ctx context.Context, toolName string, a recArgs) (*slot, *recording, error) {
	tg, err := resolveTarget(a)
	if err != nil {
		return nil, nil, err
	}
	return t.session(ctx, toolName, tg)
}

// session finds the recording a call names and takes its lock; the caller
// must call release. It answers FLOW_NO_ACTIVE_RECORDING when there is
// none, and Argent's no-longer-active text (same code) when a restart, a
// finish or an eviction came first while it waited: the call was meant
// for the take that ended, not for a new one.
func (t *Tools) session(ctx context.Context, name string, tg target) (*slot, *recording, error) {
	if err := refuseNested(ctx, name); err != nil {
		return nil, nil, err
	}
	s, gen := t.Recordings.slotFor(tg.key, false)
	if s == nil || gen == 0 {
		return nil, nil, t.noRecording(tg)
	}
	if err := s.acquire(ctx); err != nil {
		return nil, nil, err
	}
	if why := t.Recordings.still(s, gen); why != "" || s.rc == nil {
		s.release()
		return nil, nil, &fault.Error{Kind: fault.Validation, Code: "FLOW_NO_ACTIVE_RECORDING",
			Message: fmt.Sprintf("Recording of %q in %s is no longer active — %s. Nothing was added to the flow file; call flow-start-recording to record again.", tg.name, tg.root, why)}
	}
	return s, s.rc, nil
}

// noRecording is Argent's FLOW_NO_ACTIVE_RECORDING.
func (t *Tools) noRecording(tg target) error {
	file := tg.hostFile
	if file == "" {
		file = tg.clientFile
	}
	names, others := t.Recordings.active(tg.rootKey)
	var list string
	if len(names) == 0 {
		list = "none in this project"
	} else {
		q := make([]string, len(names))
		for i, n := range names {
			q[i] = fmt.Sprintf("%q", n)
		}
		list = strings.Join(q, ", ")
	}
	if others > 0 {
		list += fmt.Sprintf(" (plus %d in other projects)", others)
	}
	return &fault.Error{Kind: fault.Validation, Code: "FLOW_NO_ACTIVE_RECORDING",
		Message: fmt.Sprintf("No active recording for flow %q in %s. If you have not started it yet, call flow-start-recording — but note it truncates, so if %s already holds a take you want (finished, or interrupted by a restart), copy it aside or record under a fresh name instead. Active recordings: %s.", tg.name, tg.root, file, list)}
}

func recorderProps(extra map[string]*tool.Schema) map[string]*tool.Schema {
	p := map[string]*tool.Schema{
		wire.ArgName:        tool.String("The flow's name: the recording writes <project_root>/.argent/flows/<name>.yaml. Letters, digits, _ and -."),
		wire.ArgProjectRoot: tool.String("Absolute path of the project (the directory that holds .argent/flows), as the calling agent sees it."),
	}
	for k, v := range extra {
		p[k] = v
	}
	return p
}

func (t *Tools) recorderTools() []*tool.Tool {
	return []*tool.Tool{
		{
			Name:        wire.ToolStartRecording,
			Description: "Start recording a flow: creates (or truncates) <project_root>/.argent/flows/<name>.yaml with no steps. Then call flow-add-step for each action, flow-add-echo for notes, and flow-finish-recording. A recording whose project is not on the tool-server's machine (or that is started over a link) keeps its file on the client: results carry savedTo for the client to write.",
			InputSchema: tool.Object(recorderProps(map[string]*tool.Schema{
				"executionPrerequisite": tool.String("For a fragment: one sentence naming the state its first step assumes (a flow that starts with a launch takes none)."),
			}), "name", wire.ArgProjectRoot),
			// The probe tells the client to send project_root as a file
			// input (Argent's registry entry), path only.
			FileInputs: []wire.FileInput{{Target: wire.ArgProjectRoot, Path: "${project_root}", Kind: "probe"}},
			Run:        t.startRecording,
		},
		{
			Name:        wire.ToolAddStep,
			Description: "Run one tool live and, when it succeeds, append it to a recording as a step: a gesture-tap on an element becomes tap: with the element's id or text (coordinates with a warning when it has neither), open-url with fresh: true becomes launch:, flow-execute of a flow beside the recording becomes run:, anything else tool: <command> with its args. The command snapshot records a snapshot: step without capturing: its args are the step's options (name, maxMismatch, cropOn, maxDiffPixels, threshold, fullPage, mask, maskColor, hide, ignore, ignoreRegions, style, stylePath), checked as a flow file's are.",
			InputSchema: tool.Object(recorderProps(map[string]*tool.Schema{
				"command": tool.String("The tool to run and record, e.g. gesture-tap, keyboard, open-url, await-ui-element, flow-execute; or snapshot, to record a snapshot: step with the options in args."),
				"args":    {AnyType: []string{"string", "object"}, Description: "The tool's arguments as the JSON text of an object (an object is accepted too), e.g. {\"device\":\"chromium-cdp-1280x800\",\"x\":0.5,\"y\":0.3}."},
				"delayMs": tool.Integer("Pause after the step on replay, in ms.", 0, 600000),
			}), "name", wire.ArgProjectRoot, "command"),
			// Exactly as docs/link-protocol.md shows: the client sends the
			// files the recorded step makes the tool-server read as members.
			FileInputs:  []wire.FileInput{{Target: wire.ArgProjectRoot, Path: "${project_root}", Kind: "probe", Collect: "step"}},
			LongRunning: true,
			Prepare:     t.prepareStepMembers,
			Run:         t.addStep,
		},
		{
			Name:        wire.ToolAddEcho,
			Description: "Append an echo: step (a message the report prints) to a recording.",
			InputSchema: tool.Object(recorderProps(map[string]*tool.Schema{
				"message": tool.String("The message."),
			}), "name", wire.ArgProjectRoot, "message"),
			Run: t.addEcho,
		},
		{
			Name:        wire.ToolAddScript,
			Description: "Append a script: { path } step to a recording without running it: a .mjs file beside the flow file (path relative to .argent/flows, or absolute) that a local run executes with node on the tool-server's host. Refused for a recording replayed over a link, which rejects script: steps.",
			InputSchema: tool.Object(recorderProps(map[string]*tool.Schema{
				"path":    tool.String("The script: relative to the flow file's directory (e.g. scripts/seed.mjs), or an absolute path."),
				"timeout": tool.Integer("The script's time limit in ms (default 60000).", 1, 3600000),
			}), "name", wire.ArgProjectRoot, "path"),
			Run: t.addScript,
		},
		{
			Name:        wire.ToolFinishRecording,
			Description: "Finish a recording: checks that the flow file parses, returns its steps, and ends the recording.",
			InputSchema: tool.Object(recorderProps(nil), "name", wire.ArgProjectRoot),
			Run:         t.finishRecording,
		},
	}
}

func (t *Tools) startRecording(ctx context.Context, call *tool.Call) (any, error) {
	if err := refuseNested(ctx, wire.ToolStartRecording); err != nil {
		return nil, err
	}
	a, err := tool.Decode[struct {
		recArgs
		ExecutionPrerequisite string `json:"executionPrerequisite"`
	}](call)
	if err != nil {
		return nil, err
	}
	tg, err := resolveTarget(a.recArgs)
	if err != nil {
		return nil, err
	}
	// A remote caller's recording never lives on this machine's disk.
	rc := placeRecording(tg, call.Linked || call.Remote)
	empty := &flow.Flow{ExecutionPrerequisite: strings.TrimSpace(a.ExecutionPrerequisite)}
	data, err := rc.encode(empty)
	if err != nil {
		return nil, err
	}
	if !rc.client {
		dir := filepath.Dir(rc.file)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, writeFailed("Failed to create the flows directory "+dir, err)
		}
		// The key of a file whose directories did not exist yet may
		// change once they do (a symlinked .argent), so take it again.
		tg.key = clientfs.RealPath(rc.file)
	}

	s, err := t.Recordings.claim(ctx, tg.key)
	if err != nil {
		return nil, err
	}
	defer s.release()
	prev := s.rc
	discarded := -1
	if prev != nil {
		if fl, err := prev.load(); err == nil {
			discarded = len(fl.Steps)
		}
	}
	savedTo, err := rc.save(empty, data)
	if err != nil {
		if prev == nil {
			t.Recordings.drop(s, "its start failed")
		}
		return nil, err
	}
	s.rc = rc
	t.Recordings.publish(s, rc, tg.rootKey)

	res := map[string]any{"message": fmt.Sprintf("Started recording %q flow", rc.name), "flowFile": string(data), "savedTo": savedTo}
	if prev != nil {
		restarted(res, rc, discarded)
	}
	return res, nil
}

// restarted turns the result of flow-start-recording into the one of a
// restart: the previous take, of discarded steps (-1 when unknown), is
// gone.
func restarted(res map[string]any, rc *recording, discarded int) {
	take := "the previous take"
	if discarded >= 0 {
		take = fmt.Sprintf("the previous take (%s)", stepWord(discarded))
		res["discardedSteps"] = discarded
	}
	reset := rc.file + " reset to an empty flow."
	if rc.client {
		reset = rc.file + " is reset to an empty flow once your client applies `savedTo` (a null `savedTo` means it did not)."
	}
	res["restarted"] = true
	res["message"] = fmt.Sprintf("Restarted recording %q — %s was discarded and %s", rc.name, take, reset)
}

func (t *Tools) addEcho(ctx context.Context, call *tool.Call) (any, error) {
	a, err := tool.Decode[struct {
		recArgs
		Message string `json:"message"`
	}](call)
	if err != nil {
		return nil, err
	}
	s, rc, err := t.open(ctx, wire.ToolAddEcho, a.recArgs)
	if err != nil {
		return nil, err
	}
	defer s.release()
	next, savedTo, err := rc.appendStep(&flow.Step{Directive: &flow.Echo{Message: a.Message}})
	if err != nil {
		return nil, err
	}
	return map[string]any{"message": fmt.Sprintf("Echo added to %q flow", rc.name), "stepCount": len(next.Steps), "savedTo": savedTo}, nil
}

// addScript records a script: step without running it. A script: step runs on
// the tool-server's host in a local run only, and a replay over a link rejects
// it before its first step (docs/link-protocol.md, "What the tool-server does
// with the members"), so a recording that keeps its file on the client, or a
// call that came over a link, is refused (docs/link-protocol.md, "The
// x-argent-linked header").
func (t *Tools) addScript(ctx context.Context, call *tool.Call) (any, error) {
	a, err := tool.Decode[struct {
		recArgs
		Path    string  `json:"path"`
		Timeout float64 `json:"timeout"`
	}](call)
	if err != nil {
		return nil, err
	}
	s, rc, err := t.open(ctx, wire.ToolAddScript, a.recArgs)
	if err != nil {
		return nil, err
	}
	defer s.release()
	if why := linkReason(rc, call); why != "" {
		return nil, &fault.Error{Kind: fault.Validation, Code: wire.CodeFlowFileInvalid,
			Message: fmt.Sprintf("flow-add-script refused: %s, and a replay over a link rejects script: steps (a script runs on the tool-server's host only in a local run). No script ran and nothing was recorded; record the script's effect with flow-add-step instead.", why)}
	}
	fl, err := rc.load()
	if err != nil {
		return nil, err
	}
	// The runner resolves the path beside the flow file's real location.
	dir := filepath.Dir(clientfs.RealPath(rc.file))
	p := a.Path
	if filepath.IsAbs(p) {
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return nil, fault.FieldError("path", "path %q cannot be written relative to the flow file's directory %s: %v", p, dir, err)
		}
		p = filepath.ToSlash(rel)
	}
	step := &flow.Script{Path: p, Timeout: millis(a.Timeout)}
	next := withStep(fl, &flow.Step{Directive: step})
	data, err := rc.encode(next)
	if err != nil {
		return nil, err
	}
	abs := filepath.Join(dir, filepath.FromSlash(p))
	if st, err := os.Stat(abs); err != nil || !st.Mode().IsRegular() {
		why := "it is not a regular file"
		if errors.Is(err, fs.ErrNotExist) {
			why = "no file is there"
		} else if err != nil {
			why = err.Error()
		}
		return nil, fault.FieldError("path", "script %s: %s (%s); a script: path is relative to the flow file's directory %s. Nothing was recorded.", p, why, abs, dir)
	}
	savedTo, err := rc.save(next, data)
	if err != nil {
		return nil, err
	}
	n := len(next.Steps)
	return map[string]any{
		"message":   fmt.Sprintf("Script added to %q flow", rc.name),
		"stepCount": n,
		"recorded":  fmt.Sprintf("%d. %s", n, summarize(next.Steps[n-1])),
		"savedTo":   savedTo,
	}, nil
}

func (t *Tools) finishRecording(ctx context.Context, call *tool.Call) (any, error) {
	a, err := tool.Decode[recArgs](call)
	if err != nil {
		return nil, err
	}
	tg, err := resolveTarget(a)
	if err != nil {
		return nil, err
	}
	s, rc, err := t.session(ctx, wire.ToolFinishRecording, tg)
	if err != nil {
		return nil, err
	}
	defer s.release()
	// Host mode re-reads the file: every step was already written
	// atomically, and a hand edit since then is part of the take. A file
	// that no longer parses fails here and the recording survives, so the
	// edit can be fixed and finish called again.
	fl, err := rc.load()
	if err != nil {
		return nil, err
	}
	data, err := rc.encode(fl)
	if err != nil {
		return nil, err
	}
	if !rc.client {
		// The file as it is on disk, not as re-marshalled: finishing
		// keeps a hand edit's comments and spelling.
		if b, err := os.ReadFile(rc.file); err == nil {
			data = b
		}
	}
	summary := make([]string, len(fl.Steps))
	for i, st := range fl.Steps {
		summary[i] = fmt.Sprintf("%d. %s", i+1, summarize(st))
	}
	s.rc = nil
	t.Recordings.drop(s, "flow-finish-recording finished it")
	return map[string]any{
		// "<n> steps" is never singularized (Argent).
		"message":               fmt.Sprintf("Finished recording %q flow (%d steps)", rc.name, len(fl.Steps)),
		"path":                  rc.file,
		"executionPrerequisite": fl.ExecutionPrerequisite,
		"steps":                 len(fl.Steps),
		"summary":               summary,
		"flowFile":              string(data),
		"savedTo":               rc.savedTo(data),
	}, nil
}
