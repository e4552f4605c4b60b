package recordtool

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/toolserver/toolserver/fault"
	"github.com/toolserver/toolserver/flow"
	flowrun "github.com/toolserver/toolserver/flow/run"
	"github.com/toolserver/toolserver/internal/atomicfile"
	"github.com/toolserver/toolserver/internal/clientfs"
	"github.com/toolserver/toolserver/internal/clientpath"
	"github.com/toolserver/toolserver/tool"
	"github.com/toolserver/toolserver/wire"
)

// MaxRecordings bounds the recordings a server keeps at once (Argent's LRU
// cap); starting one more evicts the least recently used.
const MaxRecordings = 32

// Recordings holds the recordings in progress, one per flow file, keyed by
// the real path of <project_root>/.argent/flows/<name>.yaml so that two
// spellings of one project share one recording (Argent's session map).
type Recordings struct {
	mu    sync.Mutex
	slots map[string]*slot
	clock uint64 // ticks on every use, for the LRU order
}

// NewRecordings returns a Recordings with no recordings in progress.
func NewRecordings() *Recordings { return &Recordings{slots: map[string]*slot{}} }

// slot is the place of one flow file in the recorder. Its lock serializes
// start, the appends and finish of that file; a call does its work only
// while it holds the lock of the slot that is still current for its key,
// so a restart, a finish or an eviction that came first is always seen.
type slot struct {
	key  string
	lock chan struct{} // a one-token mutex that a waiting call can give up on
	// rc is the recording; nil before the first start succeeds and after
	// finish. Guarded by lock.
	rc *recording
	// used is the LRU stamp; info what the "Active recordings" list of
	// FLOW_NO_ACTIVE_RECORDING shows; gen counts the takes started (0
	// while the first start is under way); ended says why the slot left
	// the recorder. All guarded by Recordings.mu.
	used  uint64
	info  recInfo
	gen   uint64
	ended string
}

// recInfo is what the recorder's bookkeeping needs without the slot lock.
type recInfo struct {
	name, rootKey string
}

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

// acquire takes the slot's lock, or gives up when ctx ends.
func (s *slot) acquire(ctx context.Context) error {
	select {
	case s.lock <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (s *slot) release() { <-s.lock }

// current reports whether s is still the slot of its key (not finished
// away or evicted), and stamps it as used.
func (r *Recordings) current(s *slot) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.slots[s.key] != s {
		return false
	}
	r.clock++
	s.used = r.clock
	return true
}

// still tells why the take gen of s is over — finished, evicted, or
// restarted by another flow-start-recording while the caller waited for
// the lock — or "" when it is still the current take, which it then
// stamps as used.
func (r *Recordings) still(s *slot, gen uint64) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	switch {
	case s.ended != "":
		return s.ended
	case s.gen != gen:
		return "another flow-start-recording restarted it"
	}
	r.clock++
	s.used = r.clock
	return ""
}

// slotFor returns the slot of key and its take, creating the slot when
// create is set.
func (r *Recordings) slotFor(key string, create bool) (*slot, uint64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := r.slots[key]
	if s == nil && create {
		s = &slot{key: key, lock: make(chan struct{}, 1)}
		r.slots[key] = s
	}
	if s == nil {
		return nil, 0
	}
	return s, s.gen
}

// publish records rc's identity for the bookkeeping and evicts the least
// recently used recordings beyond MaxRecordings.
func (r *Recordings) publish(s *slot, rc *recording, rootKey string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	s.info = recInfo{name: rc.name, rootKey: rootKey}
	s.gen++
	r.clock++
	s.used = r.clock
	for len(r.slots) > MaxRecordings {
		var lru *slot
		for _, o := range r.slots {
			// A slot without a name is a start still under way: it is
			// about to be the most recent, not the least.
			if o != s && o.info.name != "" && (lru == nil || o.used < lru.used) {
				lru = o
			}
		}
		if lru == nil {
			return
		}
		lru.ended = fmt.Sprintf("it was evicted: more than %d recordings were in progress and it was the least recently used", MaxRecordings)
		delete(r.slots, lru.key)
	}
}

// drop removes s from the recorder if it is still current; why is what a
// call that waited on its lock is told.
func (r *Recordings) drop(s *slot, why string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.slots[s.key] == s {
		s.ended = why
		delete(r.slots, s.key)
	}
}

// active returns the names recorded in the project rootKey, sorted, and
// how many recordings are in other projects.
func (r *Recordings) active(rootKey string) (names []string, others int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, s := range r.slots {
		switch {
		case s.info.name == "":
			// a start in progress
		case s.info.rootKey == rootKey:
			names = append(names, s.info.name)
		default:
			others++
		}
	}
	slices.Sort(names)
	return names, others
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
	tg.clientFile = clientpath.FlowsDir(a.ProjectRoot) + "/" + a.Name + ".yaml"
	if filepath.IsAbs(a.ProjectRoot) {
		tg.hostFile = filepath.Join(clientpath.FlowsDir(a.ProjectRoot), a.Name+".yaml")
		tg.key = clientfs.RealPath(tg.hostFile)
		tg.rootKey = clientfs.RealPath(a.ProjectRoot)
	} else {
		// A Windows client's root on a POSIX server: only ever a key.
		tg.key, tg.rootKey = tg.clientFile, strings.TrimRight(a.ProjectRoot, `/\`)
	}
	return tg, nil
}

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

// session finds the recording a call names and takes its lock; the caller
// must call release. It answers FLOW_NO_ACTIVE_RECORDING when there is
// none, and Argent's no-longer-active text (same code) when a restart, a
// finish or an eviction came first while it waited: the call was meant
// for the take that ended, not for a new one.
// open resolves the recording a call names and takes its lock, for the
// tools that only append to it.
func (t *Tools) open(ctx context.Context, toolName string, a recArgs) (*slot, *recording, error) {
	tg, err := resolveTarget(a)
	if err != nil {
		return nil, nil, err
	}
	return t.session(ctx, toolName, tg)
}

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

func recorderProps(extra map[string]*tool.Schema) map[string]*tool.Schema {
	p := map[string]*tool.Schema{
		"name":         tool.String("The flow's name: the recording writes <project_root>/.argent/flows/<name>.yaml. Letters, digits, _ and -."),
		"project_root": tool.String("Absolute path of the project (the directory that holds .argent/flows), as the calling agent sees it."),
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
			}), "name", "project_root"),
			// The probe tells the client to send project_root as a file
			// input (Argent's registry entry), path only.
			FileInputs: []wire.FileInput{{Target: "project_root", Path: "${project_root}", Kind: "probe"}},
			Run:        t.startRecording,
		},
		{
			Name:        wire.ToolAddStep,
			Description: "Run one tool live and, when it succeeds, append it to a recording as a step: a gesture-tap on an element becomes tap: with the element's id or text (coordinates with a warning when it has neither), open-url with fresh: true becomes launch:, flow-execute of a flow beside the recording becomes run:, anything else tool: <command> with its args. The command snapshot records a snapshot: step without capturing: its args are the step's options (name, maxMismatch, cropOn, maxDiffPixels, threshold, fullPage, mask, maskColor, hide, ignore, ignoreRegions, style, stylePath), checked as a flow file's are.",
			InputSchema: tool.Object(recorderProps(map[string]*tool.Schema{
				"command": tool.String("The tool to run and record, e.g. gesture-tap, keyboard, open-url, await-ui-element, flow-execute; or snapshot, to record a snapshot: step with the options in args."),
				"args":    {AnyType: []string{"string", "object"}, Description: "The tool's arguments as the JSON text of an object (an object is accepted too), e.g. {\"device\":\"chromium-cdp-1280x800\",\"x\":0.5,\"y\":0.3}."},
				"delayMs": tool.Integer("Pause after the step on replay, in ms.", 0, 600000),
			}), "name", "project_root", "command"),
			// Exactly as docs/link-protocol.md shows: the client sends the
			// files the recorded step makes the tool-server read as members.
			FileInputs:  []wire.FileInput{{Target: "project_root", Path: "${project_root}", Kind: "probe", Collect: "step"}},
			LongRunning: true,
			Prepare:     t.prepareStepMembers,
			Run:         t.addStep,
		},
		{
			Name:        wire.ToolAddEcho,
			Description: "Append an echo: step (a message the report prints) to a recording.",
			InputSchema: tool.Object(recorderProps(map[string]*tool.Schema{
				"message": tool.String("The message."),
			}), "name", "project_root", "message"),
			Run: t.addEcho,
		},
		{
			Name:        wire.ToolAddScript,
			Description: "Append a script: { path } step to a recording without running it: a .mjs file beside the flow file (path relative to .argent/flows, or absolute) that a local run executes with node on the tool-server's host. Refused for a recording replayed over a link, which rejects script: steps.",
			InputSchema: tool.Object(recorderProps(map[string]*tool.Schema{
				"path":    tool.String("The script: relative to the flow file's directory (e.g. scripts/seed.mjs), or an absolute path."),
				"timeout": tool.Integer("The script's time limit in ms (default 60000).", 1, 3600000),
			}), "name", "project_root", "path"),
			Run: t.addScript,
		},
		{
			Name:        wire.ToolFinishRecording,
			Description: "Finish a recording: checks that the flow file parses, returns its steps, and ends the recording.",
			InputSchema: tool.Object(recorderProps(nil), "name", "project_root"),
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

// claim takes the lock of the slot of key, creating the slot. A slot that
// was finished or evicted while the caller waited is left for the new one.
func (r *Recordings) claim(ctx context.Context, key string) (*slot, error) {
	for {
		s, _ := r.slotFor(key, true)
		if err := s.acquire(ctx); err != nil {
			return nil, err
		}
		if r.current(s) {
			return s, nil
		}
		s.release()
	}
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
