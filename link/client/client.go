package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"strings"
	"sync/atomic"

	"github.com/toolserver/toolserver/fault"
	"github.com/toolserver/toolserver/internal/clientfs"
	"github.com/toolserver/toolserver/wire"
)

// Caps on what the client reads from a tool-server.
const (
	// MaxListingBytes caps the GET /tools answer.
	MaxListingBytes = 16 << 20
	// MaxResultBytes caps a JSON answer and one line of a stream: a
	// result carries the baselines a run wrote, base64, each up to 32 MiB.
	MaxResultBytes = 512 << 20
	// maxSmallAnswer caps an error body and an upload's answer.
	maxSmallAnswer = 1 << 20
)

// Client is the client half of the link: it lists a tool-server's tools
// and calls them with their file inputs wrapped, the members of a flow or
// a recorded step collected and sent (inline or through POST /upload),
// the progress streamed, and the client-file directives of the result
// applied to this machine.
type Client struct {
	base  string
	token string
	hc    *http.Client
}

// NewClient returns a client of the tool-server at baseURL (a trailing
// slash is dropped). token, when not empty, is sent as a bearer token.
// httpClient may be nil; a tool call never uses its Timeout, since a flow
// run takes as long as it takes and a call over a link is sent once.
func NewClient(baseURL, token string, httpClient *http.Client) *Client {
	if httpClient == nil {
		httpClient = &http.Client{}
	}
	return &Client{base: strings.TrimRight(baseURL, "/"), token: token, hc: httpClient}
}

// ToolEntry is one tool of GET /tools.
type ToolEntry struct {
	Name        string           `json:"name"`
	Description string           `json:"description"`
	InputSchema json.RawMessage  `json:"inputSchema,omitempty"`
	FileInputs  []wire.FileInput `json:"fileInputs,omitempty"`
	LongRunning bool             `json:"longRunning,omitempty"`
	OutputHint  string           `json:"outputHint,omitempty"`
}

// CallOptions configure one Call.
type CallOptions struct {
	// Progress receives the data of each progress line as it arrives. A
	// call with Progress, or with members, asks for an NDJSON stream.
	Progress func(data json.RawMessage)
	// Waiting receives the message of each waiting line: the call waits
	// for its device, held by another call ({"event":"waiting"}).
	Waiting func(message string)
	// FilesLog receives each [flow-files] line (see FilesLogEnv); nil
	// prints none.
	FilesLog func(line string)
	// DryRun writes no baseline of the result: each baselineWrites
	// directive is checked as for a write and becomes a flow.BaselineWrite
	// with its Plan, or {"path", "error"} when it would be refused.
	DryRun bool
	// Flow, when set, is a flow file held in memory: the flow file input
	// whose path is Flow.Path is sent with Flow.Data, listed, with
	// Flow.Path as its canonical path and the members (baselines
	// included) of a file at that path, as if the file existed there
	// (toolserver storybook's generated flows).
	Flow *FlowBytes
	// Tunnel, when set, is named by the call (flow-execute's tunnel
	// argument, our extension), and serves the files of the call's client
	// policy to the tool-server's browser.
	Tunnel *Tunnel
}

// FlowBytes is a flow file's bytes under the path they stand at.
type FlowBytes struct {
	// Path is absolute, and its directory's real path (the canonical
	// path of a file there).
	Path string
	Data []byte
}

// Tools lists the tools of the tool-server (GET /tools).
func (c *Client) Tools(ctx context.Context) ([]ToolEntry, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.base+"/tools", nil)
	if err != nil {
		return nil, err
	}
	c.auth(req)
	// Every failure here is the link's: the server is unreachable, refuses
	// the token, or is not a tool-server.
	resp, err := c.hc.Do(req)
	if err != nil {
		return nil, fault.Infrastructure(fmt.Errorf("GET %s/tools: %w: %w", c.base, ErrNotSent, err))
	}
	defer resp.Body.Close()
	body, err := readAnswerCapped(resp.Body, MaxListingBytes, "the GET /tools answer")
	if err != nil {
		return nil, fault.Infrastructure(fmt.Errorf("GET %s/tools: %w", c.base, err))
	}
	if resp.StatusCode/100 != 2 {
		ce, _ := answerError("tools", resp, body)
		return nil, fault.Infrastructure(fmt.Errorf("GET %s/tools failed: %s", c.base, ce.Message))
	}
	var list struct {
		Tools []ToolEntry `json:"tools"`
	}
	if err := json.Unmarshal(body, &list); err != nil {
		return nil, fault.Infrastructure(fmt.Errorf("GET %s/tools: the answer is not a tool listing: %w", c.base, err))
	}
	return list.Tools, nil
}

// MaxArtifactBytes caps an artifact the client downloads.
const MaxArtifactBytes = 256 << 20

// Artifact downloads the artifact id of a result (GET /artifacts/<id>),
// such as the images of a failed snapshot.
func (c *Client) Artifact(ctx context.Context, id string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.base+"/artifacts/"+url.PathEscape(id), nil)
	if err != nil {
		return nil, err
	}
	c.auth(req)
	resp, err := c.hc.Do(req)
	if err != nil {
		return nil, fault.Infrastructure(fmt.Errorf("GET %s/artifacts/%s: %w", c.base, id, err))
	}
	defer resp.Body.Close()
	body, err := readAnswerCapped(resp.Body, MaxArtifactBytes, "artifact "+id)
	if err != nil {
		return nil, fault.Infrastructure(fmt.Errorf("GET %s/artifacts/%s: %w", c.base, id, err))
	}
	if resp.StatusCode/100 != 2 {
		ce, _ := answerError("artifacts", resp, body)
		return nil, fmt.Errorf("GET %s/artifacts/%s failed: %s", c.base, id, ce.Message)
	}
	return body, nil
}

// Call calls the tool name with args over the link, as a client must
// (docs/link-protocol.md, "The call"): it reads the tool's file inputs from GET
// /tools, wraps each as a file-input object with the members of an input that
// collects them, sends members past the inline budget to POST /upload, posts
// the call once with x-argent-linked: 1, streams its progress to opts.Progress,
// and applies the client-file directives of the result: each baselineWrites
// directive becomes the path written or {"path", "error"}, and a recording's
// savedTo the path or null. It returns the result's data after that. A result
// with a recording's directive that the call did not ask for is refused whole,
// nothing of it written, with a *DirectiveError. args is not modified.
func (c *Client) Call(ctx context.Context, name string, args map[string]any, opts CallOptions) (json.RawMessage, error) {
	st, err := c.prepare(ctx, name, args, opts)
	if err != nil {
		return nil, err
	}
	data, err := c.post(ctx, st)
	if err != nil {
		return nil, err
	}
	return st.apply(data)
}

// Prepare returns the arguments of a call of tool name as Call sends
// them (file inputs wrapped, members collected, large ones uploaded)
// without calling: for a run started through POST /v1/runs, whose
// tool_args they are. A result's client-file directives never come back
// to such a caller, so it writes no baseline.
func (c *Client) Prepare(ctx context.Context, name string, args map[string]any) (map[string]any, error) {
	st, err := c.prepare(ctx, name, args, CallOptions{})
	if err != nil {
		return nil, err
	}
	return st.args, nil
}

// prepare wraps a call's arguments within the members' budget.
func (c *Client) prepare(ctx context.Context, name string, args map[string]any, opts CallOptions) (*callState, error) {
	tools, err := c.Tools(ctx)
	if err != nil {
		return nil, err
	}
	st := &callState{c: c, name: name, opts: opts, args: maps.Clone(args),
		specs: map[string][]wire.FileInput{}, writable: map[string]*clientfs.Policy{}}
	if st.args == nil {
		st.args = map[string]any{}
	}
	if opts.Tunnel != nil {
		st.args[wire.ArgTunnel] = opts.Tunnel.ID()
	}
	for _, t := range tools {
		st.specs[t.Name] = t.FileInputs
	}
	st.send = &memberSender{c: c}
	st.recording = recordingFile(st.args)
	if err := st.wrapInputs(ctx); err != nil {
		return nil, err
	}
	if st.members > wire.MaxMembers {
		return nil, fmt.Errorf("%s: the call would carry %d members; a call carries at most %d", name, st.members, wire.MaxMembers)
	}
	return st, nil
}

// callState is one Call on its way: the arguments being wrapped, the
// members' budget, and what the result may write.
type callState struct {
	c    *Client
	name string
	args map[string]any
	opts CallOptions
	// specs are the file inputs of each tool, for tool: steps.
	specs map[string][]wire.FileInput
	send  *memberSender
	// collected tells a call with a members field (it asks for a stream);
	// members counts them.
	collected bool
	members   int
	// writable maps each baseline directory of a run that updates
	// baselines to the policy of its call ("Baselines in the result").
	writable map[string]*clientfs.Policy
	// recording is the recording file the call names, the one file a
	// savedTo directive of a recorder tool's result may write; "" when the
	// call names none.
	recording string
}

func (st *callState) log(line string) {
	if st.opts.FilesLog != nil {
		st.opts.FilesLog(line)
	}
}

func (c *Client) auth(req *http.Request) {
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
}

// post sends the call once and reads its result: a stream when asked for
// and given, else the JSON answer.
func (c *Client) post(ctx context.Context, st *callState) (json.RawMessage, error) {
	var body bytes.Buffer
	enc := json.NewEncoder(&body)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(st.args); err != nil {
		return nil, fmt.Errorf("%s: encode the arguments: %w", st.name, err)
	}
	// Whether the request reached the wire decides what a failure means:
	// before, nothing ran; after, the tool may have run.
	var wrote atomic.Bool
	trace := &httptrace.ClientTrace{WroteRequest: func(i httptrace.WroteRequestInfo) {
		if i.Err == nil {
			wrote.Store(true)
		}
	}}
	u := c.base + "/tools/" + url.PathEscape(st.name)
	req, err := http.NewRequestWithContext(httptrace.WithClientTrace(ctx, trace), http.MethodPost, u, bytes.NewReader(body.Bytes()))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	if st.collected || st.opts.Progress != nil {
		req.Header.Set("Accept", "application/x-ndjson")
	}
	// Identity: a compressing proxy would hold the progress lines back.
	req.Header.Set("Accept-Encoding", "identity")
	req.Header.Set("X-Argent-Linked", "1")
	c.auth(req)
	hc := *c.hc
	hc.Timeout = 0
	resp, err := hc.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		if wrote.Load() {
			return nil, closed(st.name, err)
		}
		return nil, fault.Infrastructure(fmt.Errorf("POST %s: %w: %w", u, ErrNotSent, err))
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 == 2 && isNDJSON(resp.Header.Get("Content-Type")) {
		return st.readStream(resp.Body)
	}
	data, err := readAnswerCapped(resp.Body, MaxResultBytes, "the answer of "+st.name)
	if err != nil {
		if errors.Is(err, errOverCap) {
			return nil, fault.Infrastructure(fmt.Errorf("%s: %w", st.name, err))
		}
		return nil, closed(st.name, err)
	}
	if resp.StatusCode/100 != 2 {
		ce, found := answerError(st.name, resp, data)
		if resp.StatusCode == http.StatusRequestEntityTooLarge && !found {
			// A proxy's page, not the tool-server's JSON: say what it must let
			// through (docs/link-protocol.md, "Members": the flow file with up
			// to 256 KiB of members rides in the call body).
			ce.Message = fmt.Sprintf("POST /tools/%s was refused with 413 Request Entity Too Large: the proxy in front of the tool-server must accept a body of %d bytes on POST /tools/%s (the flow file and up to 256 KiB of members; each other member goes to POST /upload), for example with client_max_body_size in nginx. The tool did not run.", st.name, body.Len(), st.name)
		}
		return nil, ce.classified()
	}
	var answer struct {
		Data json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal(data, &answer); err != nil {
		return nil, fault.Infrastructure(fmt.Errorf("%s: the answer is not JSON: %w", st.name, err))
	}
	if answer.Data == nil {
		answer.Data = json.RawMessage("null")
	}
	return answer.Data, nil
}
