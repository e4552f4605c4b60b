package mcp

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"sync"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolserver/toolserver/fault"
	"github.com/toolserver/toolserver/flow"
	"github.com/toolserver/toolserver/tool"
)

// addTool exposes t, a tool of reg, as the MCP tool of the same name,
// description and input schema; a call invokes reg.
func (s *Server) addTool(reg *tool.Registry, t *tool.Tool) {
	schema, err := json.Marshal(t.InputSchema)
	if err != nil {
		// A schema is built from tool.Schema values; one that does not
		// marshal is a bug of the tool, not of the call.
		panic(fmt.Sprintf("mcp: the input schema of %s: %v", t.Name, err))
	}
	s.sdk.AddTool(&sdk.Tool{Name: t.Name, Description: t.Description, InputSchema: json.RawMessage(schema)},
		func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			return s.call(ctx, reg, req)
		})
}

// call invokes the tool of req on reg: its result becomes the JSON as text
// plus an image for each image artifact it names, its error a tool error
// result (IsError) with the error's message.
func (s *Server) call(ctx context.Context, reg *tool.Registry, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
	name := req.Params.Name
	opts := tool.Options{TempDir: s.cfg.TempDir}
	var p *progress
	if token := req.Params.GetProgressToken(); token != nil && req.Session != nil {
		p = startProgress(ctx, req.Session, token)
		opts.Progress = p.report
	}
	res, err := reg.Invoke(ctx, name, req.Params.Arguments, opts)
	// Every notification goes out before the result, so a client that
	// counts steps has them all when the call returns.
	p.finish()
	if err != nil {
		return s.errorResult(name, err), nil
	}
	text, err := json.Marshal(res)
	if err != nil {
		return s.errorResult(name, err), nil
	}
	out := &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: string(text)}}}
	out.Content = append(out.Content, s.images(text)...)
	return out, nil
}

// errorResult is the tool error result of err: the message of a
// *fault.Error; for an internal fault a stable message naming an id, with
// the fault logged under that id, as the HTTP surface answers one.
func (s *Server) errorResult(name string, err error) *sdk.CallToolResult {
	te := fault.AsError(err)
	msg := fault.Clip(te.Error(), fault.MaxMessageBytes)
	if te.Internal() {
		var b [8]byte
		_, _ = rand.Read(b[:]) // never fails (crypto/rand)
		id := hex.EncodeToString(b[:])
		s.cfg.Log.Error("internal error", "mcp_call", id, "tool", name, "err", err)
		msg = fmt.Sprintf("internal error (call %s); see the tool-server's log", id)
	}
	return &sdk.CallToolResult{IsError: true, Content: []sdk.Content{&sdk.TextContent{Text: msg}}}
}

// progressBuffer is how many notifications may wait for a slow client
// before more are dropped: a client that does not read never stalls the
// device a flow runs on (the same rule as the NDJSON stream).
const progressBuffer = 256

// progress turns the progress values of a call into MCP progress
// notifications, sent in order by one goroutine.
type progress struct {
	token any

	mu      sync.Mutex
	queue   chan *sdk.ProgressNotificationParams
	closed  bool
	steps   int // step reports so far: the progress value
	between int // other values since the last step
	done    chan struct{}
}

// startProgress starts the sender of a call's notifications; it sends
// with ctx, the call's context, which ties them to the call's request
// (on HTTP: the call's own event stream).
func startProgress(ctx context.Context, ss *sdk.ServerSession, token any) *progress {
	p := &progress{token: token, queue: make(chan *sdk.ProgressNotificationParams, progressBuffer), done: make(chan struct{})}
	go func() {
		defer close(p.done)
		for n := range p.queue {
			_ = ss.NotifyProgress(ctx, n) // a client gone away ends the call through ctx
		}
	}()
	return p
}

// report is the call's tool.Options.Progress. A flow.StepReport counts one
// step: its notification's progress is the steps so far. Anything else (a
// tool.Waiting while the device is busy) is a message between steps: its
// progress lies between the last step's and the next one's, rising with
// each, since MCP requires progress to increase with every notification.
func (p *progress) report(v any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return
	}
	n := &sdk.ProgressNotificationParams{ProgressToken: p.token}
	if sr, ok := v.(flow.StepReport); ok {
		p.steps++
		p.between = 0
		n.Progress = float64(p.steps)
		n.Message = stepMessage(p.steps, sr)
	} else {
		p.between++
		n.Progress = float64(p.steps) + 1 - 1/float64(p.between+1)
		n.Message = otherMessage(v)
	}
	select {
	case p.queue <- n:
	default: // the client is behind: this one is dropped
	}
}

// finish stops taking values and waits until the queued notifications
// are sent. A nil p (no progress token) does nothing.
func (p *progress) finish() {
	if p == nil {
		return
	}
	p.mu.Lock()
	p.closed = true
	close(p.queue)
	p.mu.Unlock()
	<-p.done
}

// stepMessage names the nth step of a run and how it ended, as the
// terminal renderer does: `step 3 snapshot "home": pass`.
func stepMessage(n int, sr flow.StepReport) string {
	var b strings.Builder
	fmt.Fprintf(&b, "step %d %s", n, sr.Kind)
	if sr.Tool != "" {
		b.WriteString(" " + sr.Tool)
	}
	switch {
	case sr.Target != "":
		b.WriteString(" " + sr.Target)
	case sr.Message != "":
		fmt.Fprintf(&b, " %q", sr.Message) // an echo
	}
	fmt.Fprintf(&b, ": %s", sr.Status)
	if sr.Reason != "" {
		b.WriteString(" — " + sr.Reason)
	}
	return b.String()
}

// otherMessage is the message of a progress value that is not a step.
func otherMessage(v any) string {
	if w, ok := v.(tool.Waiting); ok {
		return w.Message
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}
