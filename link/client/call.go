package client

import (
	"archive/tar"
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"mime"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/toolserver/toolserver/flow"
	"github.com/toolserver/toolserver/internal/clientfs"
	"github.com/toolserver/toolserver/link/wire"
	"github.com/toolserver/toolserver/tool"
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
	// directive is checked as for a write and becomes a flow.BaselineWrite with its Plan, or
	// {"path", "error"} when it would be refused.
	DryRun bool
}

// CallError is a call the tool-server answered with an error: a non-2xx
// answer, or an error line of the stream (Status 200 then).
type CallError struct {
	Tool    string
	Status  int
	Message string
	Code    string // error_code
	Kind    string // error_kind
}

func (e *CallError) Error() string { return e.Message }

// Is makes a CallError match flow.ErrInfrastructure when the answer is
// about the machinery under the call rather than the call: the token, the
// Host guard, a cap, Chromium, an internal fault of the server (the
// error table of package tool). An answer whose error_kind the table does
// not know, such as a proxy's page, stands for the kind of its status.
func (e *CallError) Is(target error) bool {
	if target != flow.ErrInfrastructure {
		return false
	}
	k := tool.Kind(e.Kind)
	if !k.Known() {
		k = tool.KindOf(e.Status)
	}
	return k.Infrastructure()
}

// ClosedError is a call whose connection closed before its result arrived
// (seed, "The call"). The call is never sent again: the tool may have run.
type ClosedError struct {
	Tool  string
	Cause error
}

func (e *ClosedError) Error() string {
	return fmt.Sprintf(wire.ClosedBeforeResult, e.Tool, e.Cause)
}

func (e *ClosedError) Unwrap() error { return e.Cause }

// Is makes a ClosedError match flow.ErrInfrastructure: the link broke.
func (e *ClosedError) Is(target error) bool { return target == flow.ErrInfrastructure }

// UploadTooLargeError is a POST /upload that a proxy (or the tool-server)
// refused with 413. The call was not sent.
type UploadTooLargeError struct {
	// File is the file whose archive was refused.
	File string
	// Size is the archive's size in bytes; -1 when it was streamed.
	Size int64
}

// proxyBodyHint is what a proxy must accept for the largest member: a
// 32 MiB file in its gzipped tar (stored deflate blocks and tar framing
// add a few KiB).
const proxyBodyHint = "33m"

func (e *UploadTooLargeError) Error() string {
	size := "its archive"
	if e.Size >= 0 {
		size = fmt.Sprintf("a body of %d bytes", e.Size)
	}
	return fmt.Sprintf("POST /upload of %s was refused with 413 Request Entity Too Large: the proxy in front of the tool-server must accept %s on POST /upload, and up to %s for the largest file a link sends (32 MiB in its gzipped tar), for example client_max_body_size %s; in nginx. The call was not sent.", e.File, size, proxyBodyHint, proxyBodyHint)
}

// Is makes an UploadTooLargeError match flow.ErrInfrastructure: the
// proxy's cap is the link's configuration, not the flow's fault.
func (e *UploadTooLargeError) Is(target error) bool { return target == flow.ErrInfrastructure }

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
		return nil, flow.Infrastructure(fmt.Errorf("GET %s/tools: %w: %w", c.base, ErrNotSent, err))
	}
	defer resp.Body.Close()
	body, err := readAnswerCapped(resp.Body, MaxListingBytes, "the GET /tools answer")
	if err != nil {
		return nil, flow.Infrastructure(fmt.Errorf("GET %s/tools: %w", c.base, err))
	}
	if resp.StatusCode/100 != 2 {
		ce, _ := answerError("tools", resp, body)
		return nil, flow.Infrastructure(fmt.Errorf("GET %s/tools failed: %s", c.base, ce.Message))
	}
	var list struct {
		Tools []ToolEntry `json:"tools"`
	}
	if err := json.Unmarshal(body, &list); err != nil {
		return nil, flow.Infrastructure(fmt.Errorf("GET %s/tools: the answer is not a tool listing: %w", c.base, err))
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
		return nil, flow.Infrastructure(fmt.Errorf("GET %s/artifacts/%s: %w", c.base, id, err))
	}
	defer resp.Body.Close()
	body, err := readAnswerCapped(resp.Body, MaxArtifactBytes, "artifact "+id)
	if err != nil {
		return nil, flow.Infrastructure(fmt.Errorf("GET %s/artifacts/%s: %w", c.base, id, err))
	}
	if resp.StatusCode/100 != 2 {
		ce, _ := answerError("artifacts", resp, body)
		return nil, fmt.Errorf("GET %s/artifacts/%s failed: %s", c.base, id, ce.Message)
	}
	return body, nil
}

// Call calls the tool name with args over the link, as a client must
// (seed, "The call"): it reads the tool's file inputs from GET /tools,
// wraps each as a file-input object with the members of an input that
// collects them, sends members past the inline budget to POST /upload,
// posts the call once with x-argent-linked: 1, streams its progress to
// opts.Progress, and applies the client-file directives of the result:
// each baselineWrites directive becomes the path written or
// {"path", "error"}, and a recording's savedTo the path or null. It
// returns the result's data after that. A result with a recording's
// directive that the call did not ask for is refused whole, nothing of it
// written, with a *DirectiveError. args is not modified.
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
			return nil, &ClosedError{Tool: st.name, Cause: closeCause(err)}
		}
		return nil, flow.Infrastructure(fmt.Errorf("POST %s: %w: %w", u, ErrNotSent, err))
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 == 2 && isNDJSON(resp.Header.Get("Content-Type")) {
		return st.readStream(resp.Body)
	}
	data, err := readAnswerCapped(resp.Body, MaxResultBytes, "the answer of "+st.name)
	if err != nil {
		if errors.Is(err, errOverCap) {
			return nil, flow.Infrastructure(fmt.Errorf("%s: %w", st.name, err))
		}
		return nil, &ClosedError{Tool: st.name, Cause: closeCause(err)}
	}
	if resp.StatusCode/100 != 2 {
		ce, found := answerError(st.name, resp, data)
		if resp.StatusCode == http.StatusRequestEntityTooLarge && !found {
			// A proxy's page, not the tool-server's JSON: say what it must
			// let through (seed, "Members": the flow file with up to 256 KiB
			// of members rides in the call body).
			ce.Message = fmt.Sprintf("POST /tools/%s was refused with 413 Request Entity Too Large: the proxy in front of the tool-server must accept a body of %d bytes on POST /tools/%s (the flow file and up to 256 KiB of members; each other member goes to POST /upload), for example with client_max_body_size in nginx. The tool did not run.", st.name, body.Len(), st.name)
		}
		return nil, ce
	}
	var answer struct {
		Data json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal(data, &answer); err != nil {
		return nil, flow.Infrastructure(fmt.Errorf("%s: the answer is not JSON: %w", st.name, err))
	}
	if answer.Data == nil {
		answer.Data = json.RawMessage("null")
	}
	return answer.Data, nil
}

// closeCause names why a connection ended: a close from the other side
// reads as such rather than as a bare EOF.
func closeCause(err error) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return fmt.Errorf("other side closed: %w", err)
	}
	return err
}

func isNDJSON(ct string) bool {
	mt, _, err := mime.ParseMediaType(ct)
	return err == nil && strings.EqualFold(mt, "application/x-ndjson")
}

// answerLine is one line of an NDJSON answer.
type answerLine struct {
	Event     string          `json:"event"`
	Data      json.RawMessage `json:"data"`
	Error     string          `json:"error"`
	ErrorCode string          `json:"error_code"`
	ErrorKind string          `json:"error_kind"`
}

// readStream reads the stream of a call: progress and waiting lines go to
// their callbacks as they arrive, the last result line is the result, an
// error line fails the call at once, other events are ignored. The stream
// ending before a result is a ClosedError.
func (st *callState) readStream(r io.Reader) (json.RawMessage, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	var result json.RawMessage
	for {
		line, err := readAnswerLine(br)
		if errors.Is(err, errOverCap) {
			return nil, flow.Infrastructure(fmt.Errorf("%s: %w", st.name, err))
		}
		if len(bytes.TrimSpace(line)) > 0 {
			var ev answerLine
			if jerr := json.Unmarshal(line, &ev); jerr != nil {
				if err != nil {
					// The connection broke in the middle of this line.
					return nil, &ClosedError{Tool: st.name, Cause: closeCause(err)}
				}
				return nil, flow.Infrastructure(fmt.Errorf("%s: the tool-server sent a stream line that is not JSON: %w", st.name, jerr))
			}
			switch ev.Event {
			case "progress":
				if st.opts.Progress != nil {
					st.opts.Progress(ev.Data)
				}
			case "waiting":
				var w struct {
					Message string `json:"message"`
				}
				if json.Unmarshal(ev.Data, &w) == nil && w.Message != "" && st.opts.Waiting != nil {
					st.opts.Waiting(w.Message)
				}
			case "result":
				result = ev.Data
				if result == nil {
					result = json.RawMessage("null")
				}
			case "error":
				msg := ev.Error
				if msg == "" {
					msg = "tool invocation failed"
				}
				return nil, &CallError{Tool: st.name, Status: http.StatusOK, Message: msg, Code: ev.ErrorCode, Kind: ev.ErrorKind}
			}
		}
		if err != nil {
			if result != nil {
				return result, nil
			}
			if errors.Is(err, io.EOF) {
				err = errors.New("the stream ended without a result")
			}
			return nil, &ClosedError{Tool: st.name, Cause: closeCause(err)}
		}
	}
}

// errOverCap is an answer larger than the client reads.
var errOverCap = errors.New("over the size the client reads")

// readAnswerLine reads one line up to MaxResultBytes.
func readAnswerLine(br *bufio.Reader) ([]byte, error) {
	var line []byte
	for {
		chunk, err := br.ReadSlice('\n')
		if len(line)+len(chunk) > MaxResultBytes {
			return nil, fmt.Errorf("a stream line is %w (%d bytes)", errOverCap, MaxResultBytes)
		}
		line = append(line, chunk...)
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		return line, err
	}
}

// readAnswerCapped reads r up to limit bytes; more is errOverCap.
func readAnswerCapped(r io.Reader, limit int64, what string) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("%s is %w (%d bytes)", what, errOverCap, limit)
	}
	return b, nil
}

// answerError turns a non-2xx answer into a CallError, choosing the
// message as Argent's clients do: message when the body has issues, else
// error, else message, else the status. found tells a message of the body
// from the status text.
func answerError(name string, resp *http.Response, body []byte) (ce *CallError, found bool) {
	e := &CallError{Tool: name, Status: resp.StatusCode}
	var b struct {
		Error     *string         `json:"error"`
		Message   *string         `json:"message"`
		Issues    json.RawMessage `json:"issues"`
		ErrorCode string          `json:"error_code"`
		ErrorKind string          `json:"error_kind"`
	}
	if json.Unmarshal(body, &b) == nil {
		e.Code, e.Kind = b.ErrorCode, b.ErrorKind
		switch {
		case len(b.Issues) > 0 && b.Issues[0] == '[' && b.Message != nil:
			e.Message = *b.Message
		case b.Error != nil:
			e.Message = *b.Error
		case b.Message != nil:
			e.Message = *b.Message
		}
	}
	if e.Message != "" {
		return e, true
	}
	e.Message = fmt.Sprintf("%d %s", resp.StatusCode, http.StatusText(resp.StatusCode))
	return e, false
}

// memberSender places the bytes of members: in the call body while they total
// at most MaxInlineBytes (decoded, in collection order, each member that
// still fits), else each through POST /upload as its own gzipped tar.
type memberSender struct {
	c      *Client
	inline int
}

// place puts data into m and returns the tail of its [flow-files] line.
func (s *memberSender) place(ctx context.Context, m *wire.Member, name string, data []byte, mtimeMs float64) (string, error) {
	size := int64(len(data))
	m.Size, m.MtimeMs = &size, &mtimeMs
	if s.inline+len(data) <= wire.MaxInlineBytes {
		s.inline += len(data)
		content := base64.StdEncoding.EncodeToString(data)
		m.Content = &content
		return sentInline(len(data)), nil
	}
	archive, err := tarOneFile(filepath.Base(name), data, mtimeMs)
	if err != nil {
		return "", fmt.Errorf("archive %s: %w", name, err)
	}
	sum := sha256.Sum256(archive)
	hash := hex.EncodeToString(sum[:])
	id, err := s.c.upload(ctx, m.Path, bytes.NewReader(archive), int64(len(archive)), hash)
	if err != nil {
		return "", err
	}
	m.UploadID, m.ContentHash = id, hash
	return sentUpload(len(data)), nil
}

// storedWriters and fastWriters reuse the compressors of member archives
// (each holds about a megabyte of tables). A PNG is deflated already:
// deflating it again gains nothing and costs as much as the rest of its
// upload, so it is stored (gzip's stored blocks, a copy both ways).
// Anything else gets the fastest level.
var (
	storedWriters = gzipWriters(gzip.NoCompression)
	fastWriters   = gzipWriters(gzip.BestSpeed)
)

func gzipWriters(level int) *sync.Pool {
	return &sync.Pool{New: func() any {
		zw, _ := gzip.NewWriterLevel(nil, level)
		return zw
	}}
}

// tarOneFile is a gzipped tar of one regular file named name: the shape
// of an upload the tool-server reads for a member.
func tarOneFile(name string, data []byte, mtimeMs float64) ([]byte, error) {
	var buf bytes.Buffer
	buf.Grow(len(data) + 2048)
	pool := fastWriters
	if bytes.HasPrefix(data, clientPNGMagic) {
		pool = storedWriters
	}
	zw := pool.Get().(*gzip.Writer)
	defer pool.Put(zw)
	zw.Reset(&buf)
	tw := tar.NewWriter(zw)
	hdr := &tar.Header{Typeflag: tar.TypeReg, Name: name, Mode: 0o644, Size: int64(len(data)),
		ModTime: time.UnixMilli(int64(mtimeMs))}
	if err := tw.WriteHeader(hdr); err != nil {
		return nil, err
	}
	if _, err := tw.Write(data); err != nil {
		return nil, err
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// upload posts one gzipped tar to POST /upload and returns its uploadId.
// size is -1 for a streamed body. hash, when known, is checked against
// the contentHash the tool-server answers.
func (c *Client) upload(ctx context.Context, what string, body io.Reader, size int64, hash string) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.base+"/upload", body)
	if err != nil {
		return "", err
	}
	if size >= 0 {
		req.ContentLength = size
	}
	req.Header.Set("Content-Type", "application/gzip")
	c.auth(req)
	// A failed upload is the link's failure: the server or a proxy refused
	// or lost bytes the client read fine.
	resp, err := c.hc.Do(req)
	if err != nil {
		return "", flow.Infrastructure(fmt.Errorf("upload of %s to %s/upload failed: %w", what, c.base, err))
	}
	defer resp.Body.Close()
	answer, err := readAnswerCapped(resp.Body, maxSmallAnswer, "the POST /upload answer")
	if err != nil {
		return "", flow.Infrastructure(fmt.Errorf("upload of %s to %s/upload failed: %w", what, c.base, err))
	}
	if resp.StatusCode == http.StatusRequestEntityTooLarge {
		return "", &UploadTooLargeError{File: what, Size: size}
	}
	if resp.StatusCode/100 != 2 {
		ce, _ := answerError("upload", resp, answer)
		return "", flow.Infrastructure(fmt.Errorf("upload of %s to %s/upload failed: %s", what, c.base, ce.Message))
	}
	var u struct {
		UploadID    string `json:"uploadId"`
		ContentHash string `json:"contentHash"`
	}
	if err := json.Unmarshal(answer, &u); err != nil || u.UploadID == "" {
		return "", flow.Infrastructure(fmt.Errorf("upload of %s to %s/upload: the answer has no uploadId: %s", what, c.base, bytes.TrimSpace(answer)))
	}
	if hash != "" && u.ContentHash != "" && !strings.EqualFold(hash, u.ContentHash) {
		return "", flow.Infrastructure(fmt.Errorf("upload of %s: the tool-server received sha256 %s, the client sent %s", what, u.ContentHash, hash))
	}
	return u.UploadID, nil
}
