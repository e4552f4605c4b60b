package mcp_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"image"
	"image/color"
	"image/png"
	"log/slog"
	"maps"
	"math"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolserver/toolserver/device/cdp/cdptest"
	"github.com/toolserver/toolserver/fault"
	"github.com/toolserver/toolserver/flow"
	"github.com/toolserver/toolserver/server/mcp"
	"github.com/toolserver/toolserver/store"
	"github.com/toolserver/toolserver/tool"
)

// TestMain runs the tests on cdptest's shared browser (the run tools
// drive real flows), with its goroutine-leak check.
func TestMain(m *testing.M) { cdptest.Main(m) }

// fixture is a registry of small tools and the artifact store they write.
type fixture struct {
	reg  *tool.Registry
	arts *store.Artifacts
	log  *syncBuffer
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	arts, err := store.NewArtifacts(t.TempDir()+"/artifacts", 100, 1<<30)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { arts.Close() })
	f := &fixture{reg: tool.NewRegistry(), arts: arts, log: &syncBuffer{}}
	f.reg.Add(&tool.Tool{
		Name:        "echo",
		Description: "Echo the text.",
		InputSchema: tool.Object(map[string]*tool.Schema{"text": tool.String("What to echo.")}, "text"),
		Run: func(ctx context.Context, call *tool.Call) (any, error) {
			a, err := tool.Decode[struct {
				Text string `json:"text"`
			}](call)
			return map[string]any{"echo": a.Text}, err
		},
	})
	f.reg.Add(&tool.Tool{
		Name: "busy",
		Run: func(ctx context.Context, call *tool.Call) (any, error) {
			return nil, &fault.Error{Kind: fault.Conflict, Code: tool.CodeDeviceBusy, Message: "device chromium-cdp-100x100 is busy"}
		},
	})
	f.reg.Add(&tool.Tool{
		Name: "broken",
		Run: func(ctx context.Context, call *tool.Call) (any, error) {
			return nil, errors.New("cdp: websocket: secret detail")
		},
	})
	f.reg.Add(&tool.Tool{
		Name: "steps",
		Run: func(ctx context.Context, call *tool.Call) (any, error) {
			call.Progress(tool.Waiting{Device: "chromium-cdp-100x100", Ahead: 1, Message: "waiting for device chromium-cdp-100x100"})
			call.Progress(tool.Waiting{Device: "chromium-cdp-100x100", Ahead: 1, Message: "still waiting"})
			call.Progress(flow.StepReport{Kind: "launch", Target: "http://x/", Status: flow.StatusPass})
			call.Progress(flow.StepReport{Kind: "snapshot", Target: `"home"`, Status: flow.StatusFail, Reason: "12 pixels differ"})
			call.Progress(flow.StepReport{Kind: "echo", Message: "done", Status: flow.StatusPass})
			return map[string]any{"status": "failed"}, nil
		},
	})
	f.reg.Add(&tool.Tool{
		Name: "picture",
		Run: func(ctx context.Context, call *tool.Call) (any, error) {
			h, err := f.arts.Put("shot.png", "image/png", pngOf(t, 7, 5))
			if err != nil {
				return nil, err
			}
			txt, err := f.arts.Put("log.txt", "text/plain", []byte("not an image"))
			if err != nil {
				return nil, err
			}
			// The same image twice: it is sent once.
			return map[string]any{"image": h, "again": []any{h}, "log": txt, "width": 7}, nil
		},
	})
	f.reg.Add(&tool.Tool{
		Name: "huge",
		Run: func(ctx context.Context, call *tool.Call) (any, error) {
			small, err := f.arts.Put("small.png", "image/png", pngOf(t, 3, 3))
			if err != nil {
				return nil, err
			}
			// Over the cap with the small one: named, not sent.
			big, err := f.arts.Put("big.png", "image/png", make([]byte, mcp.MaxImageBytes))
			if err != nil {
				return nil, err
			}
			return map[string]any{"a": small, "b": big}, nil
		},
	})
	return f
}

func pngOf(t *testing.T, w, h int) []byte {
	t.Helper()
	img := image.NewNRGBA(image.Rect(0, 0, w, h))
	img.Set(1, 1, color.NRGBA{R: 255, A: 255})
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// syncBuffer is a goroutine-safe log.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// connect serves cfg over in-memory transports and returns a client
// session whose progress notifications arrive on the channel.
func connect(t *testing.T, cfg mcp.Config) (*sdk.ClientSession, <-chan *sdk.ProgressNotificationParams) {
	t.Helper()
	progress := make(chan *sdk.ProgressNotificationParams, 64)
	srv := mcp.New(cfg)
	st, ct := sdk.NewInMemoryTransports()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Run(ctx, st) }()
	client := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "v0"}, &sdk.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, req *sdk.ProgressNotificationClientRequest) {
			progress <- req.Params
		},
	})
	cs, err := client.Connect(ctx, ct, nil)
	if err != nil {
		cancel()
		<-done
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cs.Close()
		if err := <-done; err != nil {
			t.Errorf("server run: %v", err)
		}
		cancel()
	})
	return cs, progress
}

func (f *fixture) config() mcp.Config {
	return mcp.Config{Tools: f.reg, Artifacts: f.arts, TempDir: "", Version: "test",
		Log: slog.New(slog.NewTextHandler(f.log, nil))}
}

func call(t *testing.T, cs *sdk.ClientSession, name string, args any, token any) *sdk.CallToolResult {
	t.Helper()
	p := &sdk.CallToolParams{Name: name, Arguments: args}
	if token != nil {
		p.SetProgressToken(token)
	}
	res, err := cs.CallTool(context.Background(), p)
	if err != nil {
		t.Fatalf("call %s: %v", name, err)
	}
	return res
}

func text(t *testing.T, res *sdk.CallToolResult, i int) string {
	t.Helper()
	if len(res.Content) <= i {
		t.Fatalf("content: got %d items, want more than %d", len(res.Content), i)
	}
	tc, ok := res.Content[i].(*sdk.TextContent)
	if !ok {
		t.Fatalf("content %d: got %T, want text", i, res.Content[i])
	}
	return tc.Text
}

func TestToolsListed(t *testing.T) {
	f := newFixture(t)
	cs, _ := connect(t, f.config())
	got := map[string]*sdk.Tool{}
	for tl, err := range cs.Tools(context.Background(), nil) {
		if err != nil {
			t.Fatal(err)
		}
		got[tl.Name] = tl
	}
	want := []string{"broken", "busy", "echo", "huge", "picture", "steps"}
	if names := slices.Sorted(maps.Keys(got)); !slices.Equal(names, want) {
		t.Fatalf("tools: got %v, want %v (no runs tools without Runs)", names, want)
	}
	echo := got["echo"]
	if echo.Description != "Echo the text." {
		t.Errorf("description: got %q", echo.Description)
	}
	gotSchema, _ := json.Marshal(echo.InputSchema)
	et, _ := f.reg.Get("echo")
	wantSchema, _ := json.Marshal(et.InputSchema)
	var g, w any
	_ = json.Unmarshal(gotSchema, &g)
	_ = json.Unmarshal(wantSchema, &w)
	if !reflect.DeepEqual(g, w) {
		t.Errorf("schema: got %s, want %s", gotSchema, wantSchema)
	}
}

func TestCallResultAndErrors(t *testing.T) {
	f := newFixture(t)
	cs, _ := connect(t, f.config())

	res := call(t, cs, "echo", map[string]any{"text": "hi"}, nil)
	if res.IsError || text(t, res, 0) != `{"echo":"hi"}` || len(res.Content) != 1 {
		t.Errorf("echo: got %+v", res)
	}

	for _, tc := range []struct {
		name string
		args any
		want string
	}{
		{"echo", map[string]any{}, "text: required"}, // the schema, checked by the registry
		{"echo", map[string]any{"text": "a", "x": 1}, "x: unknown argument"},
		{"busy", map[string]any{}, "device chromium-cdp-100x100 is busy"},
		{"broken", map[string]any{}, "internal error (call "},
	} {
		res := call(t, cs, tc.name, tc.args, nil)
		if !res.IsError || !strings.Contains(text(t, res, 0), tc.want) {
			t.Errorf("%s %v: got error %v %q, want one containing %q", tc.name, tc.args, res.IsError, text(t, res, 0), tc.want)
		}
	}
	// The fault is logged, never sent.
	res = call(t, cs, "broken", nil, nil)
	if msg := text(t, res, 0); strings.Contains(msg, "secret") {
		t.Errorf("internal error sent its detail: %q", msg)
	}
	if !strings.Contains(f.log.String(), "secret detail") {
		t.Errorf("log: got %q, want the fault", f.log.String())
	}
}

func TestProgressPerStep(t *testing.T) {
	f := newFixture(t)
	cs, progress := connect(t, f.config())
	res := call(t, cs, "steps", nil, "tok-1")
	if res.IsError {
		t.Fatalf("steps: %v", text(t, res, 0))
	}
	want := []struct {
		progress float64
		message  string
	}{
		{0.5, "waiting for device chromium-cdp-100x100"},
		{1 - 1.0/3, "still waiting"},
		{1, "step 1 launch http://x/: pass"},
		{2, `step 2 snapshot "home": fail — 12 pixels differ`},
		{3, `step 3 echo "done": pass`},
	}
	for i, w := range want {
		select {
		case p := <-progress:
			if p.ProgressToken != "tok-1" || math.Abs(p.Progress-w.progress) > 1e-9 || p.Message != w.message {
				t.Errorf("notification %d: got %v %v %q, want tok-1 %v %q", i, p.ProgressToken, p.Progress, p.Message, w.progress, w.message)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("notification %d never came", i)
		}
	}
	// Without a token, none.
	call(t, cs, "steps", nil, nil)
	call(t, cs, "echo", map[string]any{"text": "after"}, nil)
	select {
	case p := <-progress:
		t.Errorf("a call without a token notified %+v", p)
	default:
	}
}

func TestImageContent(t *testing.T) {
	f := newFixture(t)
	cs, _ := connect(t, f.config())
	res := call(t, cs, "picture", nil, nil)
	if res.IsError {
		t.Fatalf("picture: %s", text(t, res, 0))
	}
	if len(res.Content) != 2 {
		t.Fatalf("content: got %d items, want the JSON and one image", len(res.Content))
	}
	var out struct {
		Image store.Artifact `json:"image"`
	}
	if err := json.Unmarshal([]byte(text(t, res, 0)), &out); err != nil || !out.Image.Artifact {
		t.Fatalf("JSON: %v, %s", err, text(t, res, 0))
	}
	img, ok := res.Content[1].(*sdk.ImageContent)
	if !ok {
		t.Fatalf("content 1: got %T, want an image", res.Content[1])
	}
	if img.MIMEType != "image/png" {
		t.Errorf("mime type: got %q, want image/png", img.MIMEType)
	}
	cfg, err := png.DecodeConfig(bytes.NewReader(img.Data))
	if err != nil || cfg.Width != 7 || cfg.Height != 5 {
		t.Errorf("image: got %dx%d (%v), want 7x5", cfg.Width, cfg.Height, err)
	}

	// Past the cap, an image is named instead.
	res = call(t, cs, "huge", nil, nil)
	if len(res.Content) != 3 {
		t.Fatalf("huge: got %d items, want the JSON, an image and a note", len(res.Content))
	}
	if _, ok := res.Content[1].(*sdk.ImageContent); !ok {
		t.Errorf("huge: content 1 is %T, want the small image", res.Content[1])
	}
	if note := text(t, res, 2); !strings.Contains(note, "big.png") || !strings.Contains(note, "is not attached") {
		t.Errorf("huge: got note %q", note)
	}

	// Without a store, the JSON alone.
	c := f.config()
	c.Artifacts = nil
	cs2, _ := connect(t, c)
	if res := call(t, cs2, "picture", nil, nil); len(res.Content) != 1 {
		t.Errorf("without a store: got %d items, want 1", len(res.Content))
	}
}
