// Package mcp serves the tool registry over the Model Context Protocol, on
// the official Go SDK: `toolserver mcp` over stdin/stdout and /mcp on
// `toolserver serve` (streamable HTTP). Every tool of the registry is an
// MCP tool with the same name, description and input schema; a flow's
// steps become progress notifications, screenshots image content, and,
// when a run store is configured, the run tools (list_runs, get_run,
// get_run_events, start_run, abandon_run, resume_run) answer as /v1 does.
package mcp

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolserver/toolserver/runs"
	"github.com/toolserver/toolserver/store"
	"github.com/toolserver/toolserver/tool"
)

// MaxRequestBody caps a request to /mcp at tool.MaxCallBody, the cap of a
// POST /tools/{name}: a flow with inline members and a 32 MiB file
// argument in base64 fit. The SDK's default, 4 MiB, would refuse a file
// input the tools take over HTTP.
const MaxRequestBody = tool.MaxCallBody

// sessionIdle ends an HTTP session whose client sent nothing for that
// long and holds no stream open: an agent that went away without a
// DELETE leaves no session behind for ever.
const sessionIdle = 30 * time.Minute

// instructions tell an agent how the tools fit together.
const instructions = `toolserver drives headless Chromium devices named by their viewport, chromium-cdp-<W>x<H> (chromium-cdp-1280x800). ` +
	`open-url loads a page on a device (it boots on first use), screenshot returns the viewport as a PNG image, describe lists the page's elements, ` +
	`the gesture and keyboard tools act on it (coordinates are 0..1 of the viewport). flow-execute runs a YAML flow and reports each step as a progress notification; ` +
	`screenshot-diff compares two PNGs and returns the diff image.`

// runsInstructions follow instructions when the run tools are on.
const runsInstructions = ` start_run starts a flow run in the background (flow-execute's arguments as tool_args) and answers its id at once; ` +
	`get_run and get_run_events (page with from_seq = next_seq until end) follow it, list_runs lists the runs, abandon_run stops one, ` +
	`resume_run re-drives one a stopped tool-server left running. They answer as the /v1 control plane does.`

// Artifacts is the artifact store a result's handles are read from.
type Artifacts interface {
	// Get returns the handle of the artifact id and the path of its file.
	Get(id string) (store.Artifact, string, error)
}

// Config is what a Server exposes.
type Config struct {
	// Tools are exposed one for one, as they are listed when New runs.
	Tools *tool.Registry
	// Artifacts holds the files of the artifact handles results carry
	// (screenshots, diff images); nil sends no image content.
	Artifacts Artifacts
	// Runs, when set, adds the run tools: list_runs, get_run,
	// get_run_events, start_run, abandon_run and resume_run.
	Runs runs.Service
	// TempDir holds the files of file inputs during a call.
	TempDir string
	// Version is the server's version in the MCP handshake.
	Version string
	// Log gets internal faults and the SDK's warnings; nil discards them.
	Log *slog.Logger
	// BodyBudget bounds the bytes of the HTTP messages read and run at
	// once (0: DefaultBodyBudget); BodyWait is how long a message waits
	// for room before a 503 (0: DefaultBodyWait).
	BodyBudget int64
	BodyWait   time.Duration
}

// Server is the MCP surface of a tool registry: one SDK server that a
// stdio session (Run) or HTTP sessions (Handler) connect to.
type Server struct {
	cfg    Config
	sdk    *sdk.Server
	bodies *budget
}

// New returns the MCP server of cfg.
func New(cfg Config) *Server {
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	if cfg.BodyBudget <= 0 {
		cfg.BodyBudget = DefaultBodyBudget
	}
	if cfg.BodyWait <= 0 {
		cfg.BodyWait = DefaultBodyWait
	}
	s := &Server{cfg: cfg, bodies: newBudget(cfg.BodyBudget)}
	text := instructions
	if cfg.Runs != nil {
		text += runsInstructions
	}
	s.sdk = sdk.NewServer(&sdk.Implementation{Name: "toolserver", Version: cfg.Version}, &sdk.ServerOptions{
		Instructions: text,
		Logger:       sdkLog(cfg.Log),
	})
	for _, t := range cfg.Tools.List() {
		s.addTool(cfg.Tools, t)
	}
	if cfg.Runs != nil {
		runs := runsRegistry(cfg.Runs)
		for _, t := range runs.List() {
			s.addTool(runs, t)
		}
	}
	return s
}

// Run serves one session over t (stdin/stdout for `toolserver mcp`) until
// the client closes it (nil) or ctx ends (nil too: the caller asked), and
// cancels the calls still running.
func (s *Server) Run(ctx context.Context, t sdk.Transport) error {
	ss, err := s.sdk.Connect(ctx, t, nil)
	if err != nil {
		return fmt.Errorf("mcp: %w", err)
	}
	done := make(chan error, 1)
	go func() { done <- ss.Wait() }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		_ = ss.Close()
		<-done
		return nil
	}
}

// Handler serves the streamable HTTP transport. It is mounted behind the
// tool-server's own middleware: the bearer token, the Host guard and the
// cross-site guard. The Host guard stands in for the SDK's own DNS
// rebinding check, turned off here: that one refuses any Host but a
// loopback name on a loopback connection, so a proxy on this machine in
// front of a wildcard bind (with its token) would reach /tools and not
// /mcp. In front of it, the body budget (budget.go) bounds the bytes of
// the messages read at once.
func (s *Server) Handler() http.Handler {
	return limitBodies(s.sdkHandler(), s.bodies, s.cfg.BodyWait)
}

// sdkHandler is the SDK's streamable HTTP handler.
func (s *Server) sdkHandler() http.Handler {
	return sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s.sdk }, &sdk.StreamableHTTPOptions{
		DisableLocalhostProtection: true,
		MaxRequestBodyBytes:        MaxRequestBody,
		SessionTimeout:             sessionIdle,
		Logger:                     sdkLog(s.cfg.Log),
	})
}

// Close ends every session: their calls are cancelled and their open
// streams (an HTTP client's GET) end, so a server shutting down does not
// wait for them.
func (s *Server) Close() {
	for _, ss := range slices.Collect(s.sdk.Sessions()) {
		_ = ss.Close()
	}
}

// sdkLog is log for the SDK: its warnings and errors only. At info it
// logs every session's connect, initialize and disconnect, which the
// access log already tells for HTTP.
func sdkLog(log *slog.Logger) *slog.Logger {
	return slog.New(minLevel{log.Handler(), slog.LevelWarn})
}

// minLevel is a handler that drops records below min.
type minLevel struct {
	slog.Handler
	min slog.Level
}

func (h minLevel) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= h.min && h.Handler.Enabled(ctx, l)
}

func (h minLevel) WithAttrs(as []slog.Attr) slog.Handler {
	return minLevel{h.Handler.WithAttrs(as), h.min}
}

func (h minLevel) WithGroup(name string) slog.Handler {
	return minLevel{h.Handler.WithGroup(name), h.min}
}
