package tool

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/toolserver/toolserver/fault"
	"github.com/toolserver/toolserver/wire"
)

// Handler runs a tool call. Its result becomes {"data": result}.
type Handler func(ctx context.Context, call *Call) (any, error)

// Tool is one tool of the server.
type Tool struct {
	Name        string
	Description string
	InputSchema *Schema
	FileInputs  []wire.FileInput
	// LongRunning tells clients not to time the call out (flow-execute, the
	// await tools): the Argent client re-posts a call that takes over 30 s
	// otherwise.
	LongRunning bool
	OutputHint  string
	Run         Handler
	// Prepare, when set, runs on the raw arguments before file inputs are
	// unwrapped and the schema is checked (the link reads members there).
	Prepare func(ctx context.Context, call *Call) error
	// Check, when set, checks a call as Run would before it runs (its
	// flow read and parsed), running nothing: Registry.Check, for a
	// start that must refuse a bad request before it creates a run.
	Check func(ctx context.Context, call *Call) error
}

// MarshalJSON writes the GET /tools entry of the tool.
func (t *Tool) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		Name        string           `json:"name"`
		Description string           `json:"description"`
		InputSchema *Schema          `json:"inputSchema"`
		FileInputs  []wire.FileInput `json:"fileInputs,omitempty"`
		LongRunning bool             `json:"longRunning,omitempty"`
		OutputHint  string           `json:"outputHint,omitempty"`
	}{t.Name, t.Description, t.InputSchema, t.FileInputs, t.LongRunning, t.OutputHint})
}

// Registry holds the tools by name.
type Registry struct {
	mu    sync.RWMutex
	tools map[string]*Tool
	// leases are the device queues of the registry's calls (lease.go).
	leases *leases
	// Remote is set when the tool-server answers other machines (a
	// wildcard bind): a file input of kind file is then read only from
	// the bytes sent with the call, never from a path of this machine,
	// even one the client claims by size and mtime. Set before serving.
	Remote bool
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry {
	return &Registry{tools: make(map[string]*Tool), leases: &leases{queues: make(map[string]*deviceQueue)}}
}

// Add registers t; a second tool with the same name replaces the first.
func (r *Registry) Add(t *Tool) {
	if t.InputSchema == nil {
		t.InputSchema = Object(map[string]*Schema{})
	}
	r.mu.Lock()
	r.tools[t.Name] = t
	r.mu.Unlock()
}

// Get returns the tool name.
func (r *Registry) Get(name string) (*Tool, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	t, ok := r.tools[name]
	return t, ok
}

// List returns the tools sorted by name.
func (r *Registry) List() []*Tool {
	r.mu.RLock()
	defer r.mu.RUnlock()
	out := make([]*Tool, 0, len(r.tools))
	for _, t := range r.tools {
		out = append(out, t)
	}
	slices.SortFunc(out, func(a, b *Tool) int {
		if a.Name < b.Name {
			return -1
		}
		if a.Name > b.Name {
			return 1
		}
		return 0
	})
	return out
}

// Call is one invocation as a handler sees it.
type Call struct {
	Tool *Tool
	// Args are the arguments after file inputs were unwrapped to paths.
	Args map[string]json.RawMessage
	// Files are the file-input objects the client sent, by target.
	Files map[string]*File
	// Linked is true when the client sent x-argent-linked: 1.
	Linked bool
	// Remote is the registry's Remote: the caller is on another machine,
	// so the tool reads and writes none of this machine's files for it.
	Remote bool
	// Values the Prepare hook leaves for the handler (e.g. link members).
	Values map[string]any

	progress func(any)
	// observers hear every progress value (wrap.go).
	observers []func(any)
	cleanup   []func()
	leases    *leases
}

// Progress emits a progress event (an NDJSON line when the client streams);
// a value with a StreamEvent method, such as Waiting, is an event of that
// name instead; a Note goes to the call's observers alone.
func (c *Call) Progress(v any) {
	if _, note := v.(Note); !note && c.progress != nil {
		c.progress(v)
	}
	for _, fn := range c.observers {
		fn(v)
	}
}

// OnDone registers fn to run when the call ends, on every path.
func (c *Call) OnDone(fn func()) { c.cleanup = append(c.cleanup, fn) }

// Decode decodes the call's arguments into T (a struct with json tags).
func Decode[T any](c *Call) (T, error) {
	var v T
	b, err := json.Marshal(c.Args)
	if err != nil {
		return v, err
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return v, &fault.Error{Kind: fault.Validation, Message: "arguments: " + err.Error()}
	}
	return v, nil
}

// Options are the per-invocation settings of the transport.
type Options struct {
	Linked   bool
	Progress func(any)
	// TempDir is where file-input bytes are written for the tool to read.
	TempDir string
}

// Invoke runs the tool name with the raw JSON arguments: file inputs are
// unwrapped, the arguments validated against the schema, the handler run,
// and every temp file removed before it returns.
func (r *Registry) Invoke(ctx context.Context, name string, raw []byte, opts Options) (any, error) {
	call, err := r.call(ctx, name, raw, opts)
	defer call.done()
	if err != nil {
		return nil, err
	}
	return call.Tool.Run(ctx, call)
}

// Check checks a call of the tool name as Invoke would, up to the
// tool's own Check, and runs nothing: what a call would refuse before it
// runs is refused here (file inputs, the schema, the tool's check).
func (r *Registry) Check(ctx context.Context, name string, raw []byte, opts Options) error {
	call, err := r.call(ctx, name, raw, opts)
	defer call.done()
	if err != nil || call.Tool.Check == nil {
		return err
	}
	return call.Tool.Check(ctx, call)
}

// call reads a call of the tool name, up to the handler: the caller runs
// done on every path.
func (r *Registry) call(ctx context.Context, name string, raw []byte, opts Options) (*Call, error) {
	t, ok := r.Get(name)
	if !ok {
		return &Call{}, &fault.Error{Kind: fault.NotFound, Code: "TOOL_NOT_FOUND", Message: fmt.Sprintf("unknown tool %q; GET /tools lists the tools", name)}
	}
	args, err := parseArgs(raw)
	if err != nil {
		return &Call{}, err
	}
	call := &Call{Tool: t, Args: args, Files: map[string]*File{}, Linked: opts.Linked, Remote: r.Remote, Values: map[string]any{}, progress: opts.Progress, leases: r.leases}
	if t.Prepare != nil {
		if err := t.Prepare(ctx, call); err != nil {
			return call, err
		}
	}
	if err := unwrapFileInputs(call, opts.TempDir, r.Remote); err != nil {
		return call, err
	}
	b, err := json.Marshal(call.Args)
	if err != nil {
		return call, err
	}
	return call, t.InputSchema.Validate(b)
}

// done runs the call's cleanups, newest first.
func (c *Call) done() {
	for i := len(c.cleanup) - 1; i >= 0; i-- {
		c.cleanup[i]()
	}
}

func parseArgs(raw []byte) (map[string]json.RawMessage, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return map[string]json.RawMessage{}, nil
	}
	// One pass: Unmarshal checks the whole text before it decodes, so a
	// syntax error means the text is not JSON at all.
	var args map[string]json.RawMessage
	if err := json.Unmarshal(raw, &args); err != nil {
		if _, ok := errors.AsType[*json.SyntaxError](err); ok {
			return nil, &fault.Error{Kind: fault.Validation, Message: "arguments are not valid JSON: " + err.Error()}
		}
		return nil, &fault.Error{Kind: fault.Validation, Message: "arguments must be a JSON object: " + err.Error()}
	}
	if args == nil {
		args = map[string]json.RawMessage{}
	}
	return args, nil
}
