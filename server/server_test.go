package server_test

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"image/png"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/toolserver/toolserver/device/cdp/cdptest"
	"github.com/toolserver/toolserver/fault"
	"github.com/toolserver/toolserver/internal/pgtest"
	linkserver "github.com/toolserver/toolserver/link/server"
	"github.com/toolserver/toolserver/link/tunnel"
	"github.com/toolserver/toolserver/server"
	"github.com/toolserver/toolserver/store"
	"github.com/toolserver/toolserver/tool"
	"github.com/toolserver/toolserver/tool/devicetool"
	"github.com/toolserver/toolserver/tool/flowtool"
	"github.com/toolserver/toolserver/wire"
)

// TestMain stops the PostgreSQL cluster the fleet's tests and benchmarks
// started (internal/pgtest) after the tests.
func TestMain(m *testing.M) {
	code := cdptest.Run(m)
	pgtest.Stop()
	os.Exit(code)
}

// rig is a server with the real device tools plus two tools that exist to
// observe the transport: "steps" streams progress and waits to be released,
// "hold" waits until its context ends and reports that it did.
type rig struct {
	url       string
	srv       *server.Server
	uploads   *store.Uploads
	release   chan struct{}
	cancelled chan struct{}
	now       *time.Time
	uploadDir string
}

func newRig(t *testing.T, token string) *rig {
	t.Helper()
	dir := t.TempDir()
	arts, err := store.NewArtifacts(dir+"/artifacts", 100, 1<<30)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	r := &rig{release: make(chan struct{}), cancelled: make(chan struct{}, 1), now: &now, uploadDir: dir + "/uploads"}
	r.uploads, err = store.NewUploads(store.UploadConfig{Dir: dir + "/uploads", MaxUpload: 1 << 20, MaxPending: 3 << 19, TTL: time.Minute, Now: func() time.Time { return *r.now }})
	if err != nil {
		t.Fatal(err)
	}
	reg := tool.NewRegistry()
	(&devicetool.Tools{Pool: cdptest.Pool(t), Artifacts: arts}).Register(reg)
	(&flowtool.Tools{Pool: cdptest.Pool(t), Artifacts: arts, Uploads: r.uploads, TempDir: dir}).Register(reg)
	reg.Add(&tool.Tool{
		Name: "read-file", Description: "test: reads its file argument",
		InputSchema: tool.Object(map[string]*tool.Schema{"file": tool.String("a file"), "device": tool.String("device")}, "file"),
		FileInputs:  []wire.FileInput{{Target: "file", Path: "${file}", Kind: "file"}},
		Run: func(ctx context.Context, call *tool.Call) (any, error) {
			a, err := tool.Decode[struct{ File string }](call)
			if err != nil {
				return nil, err
			}
			b, err := os.ReadFile(a.File)
			if err != nil {
				return nil, err
			}
			return map[string]any{"bytes": len(b), "text": string(b)}, nil
		},
	})
	reg.Add(&tool.Tool{
		Name: "list-dir", Description: "test: takes a directory",
		InputSchema: tool.Object(map[string]*tool.Schema{"dir": tool.String("a directory"), "device": tool.String("device")}),
		FileInputs:  []wire.FileInput{{Target: "dir", Path: "${dir}", Kind: "directory"}},
		Run:         func(ctx context.Context, call *tool.Call) (any, error) { return "ok", nil },
	})
	reg.Add(&tool.Tool{
		Name: "steps", Description: "test: three progress events, then waits to be released",
		InputSchema: tool.Object(map[string]*tool.Schema{"n": tool.Integer("count", 1, 10)}, "n"),
		Run: func(ctx context.Context, call *tool.Call) (any, error) {
			for i := range 3 {
				call.Progress(map[string]any{"index": i})
			}
			select {
			case <-r.release:
			case <-ctx.Done():
				return nil, ctx.Err()
			}
			return map[string]any{"ok": true}, nil
		},
	})
	reg.Add(&tool.Tool{
		Name: "hold-fail", Description: "test: progress, then an error",
		Run: func(ctx context.Context, call *tool.Call) (any, error) {
			call.Progress("working")
			return nil, &fault.Error{Kind: fault.Validation, Message: "it broke"}
		},
	})
	reg.Add(&tool.Tool{
		Name: "hold", Description: "test: waits for its context to end",
		Run: func(ctx context.Context, call *tool.Call) (any, error) {
			call.Progress("holding")
			<-ctx.Done()
			r.cancelled <- struct{}{}
			return nil, ctx.Err()
		},
	})
	r.srv = server.New(server.Config{Addr: "127.0.0.1:0", Token: token, Tools: reg, Artifacts: arts, Uploads: r.uploads, TempDir: dir})
	ts := httptest.NewServer(r.srv.Handler())
	t.Cleanup(ts.Close)
	r.url = ts.URL
	return r
}

// postNDJSON posts a JSON call asking for an NDJSON stream, with the
// extra headers given as name, value pairs, and returns the open answer.
func postNDJSON(t *testing.T, url, body string, hdr ...string) *http.Response {
	t.Helper()
	req, _ := http.NewRequest("POST", url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/x-ndjson")
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

func do(t *testing.T, method, url, body string, hdr ...string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if method == "POST" && strings.Contains(url, "/tools/") {
		// What every client sends with a call; a test may set another.
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		if hdr[i] == "Host" {
			req.Host = hdr[i+1]
			continue
		}
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, b
}

func TestListTools(t *testing.T) {
	t.Parallel()
	r := newRig(t, "")
	resp, body := do(t, "GET", r.url+"/tools", "")
	var got struct {
		Tools []struct {
			Name        string          `json:"name"`
			Description string          `json:"description"`
			InputSchema json.RawMessage `json:"inputSchema"`
			LongRunning bool            `json:"longRunning"`
		} `json:"tools"`
	}
	if resp.StatusCode != 200 || json.Unmarshal(body, &got) != nil {
		t.Fatalf("GET /tools: %d %s", resp.StatusCode, body)
	}
	names := map[string]bool{}
	for _, tl := range got.Tools {
		names[tl.Name] = true
		if tl.Description == "" || len(tl.InputSchema) == 0 {
			t.Errorf("%s has no description or schema", tl.Name)
		}
		if tl.Name == "await-ui-element" && !tl.LongRunning {
			t.Errorf("await-ui-element must be longRunning")
		}
	}
	for _, n := range []string{"list-devices", "boot-device", "stop-device", "open-url", "describe", "screenshot", "gesture-tap", "gesture-swipe", "gesture-scroll", "keyboard", "await-ui-element", "await-screen-idle"} {
		if !names[n] {
			t.Errorf("GET /tools lacks %s", n)
		}
	}
}

func TestCallErrors(t *testing.T) {
	t.Parallel()
	r := newRig(t, "")
	for _, tc := range []struct {
		name, path, body string
		status           int
		want             string
	}{
		{"unknown tool", "/tools/nope", `{}`, 404, "unknown tool"},
		{"malformed JSON", "/tools/describe", `{"device":`, 400, "not valid JSON"},
		{"not an object", "/tools/describe", `[1]`, 400, "JSON object"},
		{"wrong type", "/tools/gesture-tap", `{"device":"chromium-cdp-800x600","x":"a","y":0}`, 400, "x: want number"},
		{"bad device", "/tools/screenshot", `{"device":"chromium-cdp-5x5"}`, 400, "100..4096"},
		{"unknown route", "/nope", ``, 404, "no route"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp, body := do(t, "POST", r.url+tc.path, tc.body, "Content-Type", "application/json")
			var e struct{ Error string }
			_ = json.Unmarshal(body, &e)
			if resp.StatusCode != tc.status || !strings.Contains(e.Error, tc.want) {
				t.Fatalf("got %d %s, want %d with %q", resp.StatusCode, body, tc.status, tc.want)
			}
		})
	}
	// The server keeps serving after bad input.
	resp, _ := do(t, "GET", r.url+"/healthz", "")
	if resp.StatusCode != 200 {
		t.Fatalf("healthz after bad input: %d", resp.StatusCode)
	}
}

func TestStreamProgressBeforeResult(t *testing.T) {
	t.Parallel()
	r := newRig(t, "")
	resp := postNDJSON(t, r.url+"/tools/steps", `{"n":3}`)
	defer resp.Body.Close()
	for k, v := range map[string]string{"Content-Type": "application/x-ndjson", "Cache-Control": "no-cache, no-transform", "X-Accel-Buffering": "no"} {
		if got := resp.Header.Get(k); got != v {
			t.Errorf("%s: got %q, want %q", k, got, v)
		}
	}
	sc := bufio.NewScanner(resp.Body)
	// The tool has not returned yet: these lines can only arrive if each
	// was flushed when emitted.
	for i := range 3 {
		if !sc.Scan() {
			t.Fatalf("stream ended before progress %d: %v", i, sc.Err())
		}
		var line struct {
			Event string
			Data  struct{ Index int }
		}
		if err := json.Unmarshal(sc.Bytes(), &line); err != nil || line.Event != "progress" || line.Data.Index != i {
			t.Fatalf("line %d: got %s, want progress %d", i, sc.Bytes(), i)
		}
	}
	close(r.release)
	if !sc.Scan() || !strings.Contains(sc.Text(), `"event":"result"`) {
		t.Fatalf("got %q, want the result line", sc.Text())
	}
	if sc.Scan() {
		t.Fatalf("extra line after result: %q", sc.Text())
	}
}

func TestStreamErrorInBand(t *testing.T) {
	t.Parallel()
	r := newRig(t, "")
	// Before any progress, an error keeps its own status.
	resp, body := do(t, "POST", r.url+"/tools/gesture-tap", `{"device":"chromium-cdp-800x600"}`, "Accept", "application/x-ndjson")
	if resp.StatusCode != 400 || !strings.HasPrefix(string(body), `{"error":"x: required"`) {
		t.Fatalf("got %d %s, want a 400 naming x", resp.StatusCode, body)
	}
	// After progress, in band.
	resp, body = do(t, "POST", r.url+"/tools/hold-fail", `{}`, "Accept", "application/x-ndjson")
	if resp.StatusCode != 200 || !strings.Contains(string(body), `{"event":"error","error":"it broke"`) {
		t.Fatalf("got %d %s, want an in-band error line", resp.StatusCode, body)
	}
}

func TestDisconnectCancelsTool(t *testing.T) {
	t.Parallel()
	r := newRig(t, "")
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, "POST", r.url+"/tools/hold", strings.NewReader(`{}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/x-ndjson")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	// Read the first progress line so the tool is surely running.
	if _, err := bufio.NewReader(resp.Body).ReadString('\n'); err != nil {
		t.Fatal(err)
	}
	cancel()
	resp.Body.Close()
	select {
	case <-r.cancelled:
	case <-time.After(10 * time.Second):
		t.Fatal("the tool's context was not cancelled after the client went away")
	}
}

func TestAccessLogNeverHoldsTheToken(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	srv := server.New(server.Config{Addr: "127.0.0.1:0", Token: "s3cret", Tools: tool.NewRegistry(), Log: slog.New(slog.NewTextHandler(&buf, nil))})
	ts := httptest.NewServer(srv.Handler())
	defer ts.Close()
	do(t, "GET", ts.URL+"/tools", "", "Authorization", "Bearer s3cret")
	do(t, "GET", ts.URL+"/tools", "", "Authorization", "Bearer wrong")
	log := buf.String()
	if !strings.Contains(log, "path=/tools status=200") || !strings.Contains(log, "status=401") || strings.Contains(log, "s3cret") {
		t.Fatalf("access log: %s", log)
	}
}

func TestAuth(t *testing.T) {
	t.Parallel()
	r := newRig(t, "s3cret")
	for _, tc := range []struct {
		hdr    string
		status int
	}{{"", 401}, {"Bearer wrong", 401}, {"Basic s3cret", 401}, {"Bearer s3cret", 200}} {
		resp, body := do(t, "GET", r.url+"/tools", "", "Authorization", tc.hdr)
		if resp.StatusCode != tc.status {
			t.Errorf("Authorization %q: got %d %s, want %d", tc.hdr, resp.StatusCode, body, tc.status)
		}
	}
}

func TestHostGuard(t *testing.T) {
	t.Parallel()
	r := newRig(t, "")
	for _, tc := range []struct {
		host   string
		status int
	}{{"localhost:3000", 200}, {"127.0.0.1", 200}, {"[::1]:3000", 200}, {"app.localhost", 200}, {"evil.example:3000", 403}, {"10.0.0.5:3000", 403}} {
		resp, body := do(t, "GET", r.url+"/healthz", "", "Host", tc.host)
		if resp.StatusCode != tc.status {
			t.Errorf("Host %q: got %d %s, want %d", tc.host, resp.StatusCode, body, tc.status)
		}
	}
	// A wildcard bind serves any name.
	wide := server.New(server.Config{Addr: "0.0.0.0:0", Tools: tool.NewRegistry()})
	ts := httptest.NewServer(wide.Handler())
	defer ts.Close()
	if resp, _ := do(t, "GET", ts.URL+"/healthz", "", "Host", "evil.example"); resp.StatusCode != 200 {
		t.Errorf("wildcard bind: got %d, want 200", resp.StatusCode)
	}
}

// overCap is a call body one string of tool.MaxCallBody bytes long
// between head and tail: over the cap. It is built in one buffer (48 MiB
// is slow to allocate and copy under -race).
func overCap(head, tail string) string {
	var b strings.Builder
	b.Grow(len(head) + tool.MaxCallBody + len(tail))
	b.WriteString(head)
	chunk := strings.Repeat("x", 64<<10)
	for n := tool.MaxCallBody; n > 0; n -= len(chunk) {
		b.WriteString(chunk[:min(n, len(chunk))])
	}
	b.WriteString(tail)
	return b.String()
}

func gz(t *testing.T, n int) string {
	t.Helper()
	var b bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&b, gzip.NoCompression)
	zw.Write(bytes.Repeat([]byte{'x'}, n))
	zw.Close()
	return b.String()
}

func uploadFiles(t *testing.T, dir string) int {
	t.Helper()
	ents, _ := os.ReadDir(dir)
	return len(ents)
}

func TestUploadCapsAndExpiry(t *testing.T) {
	t.Parallel()
	r := newRig(t, "")
	resp, body := do(t, "POST", r.url+"/upload", gz(t, 1000), "Content-Type", "application/gzip")
	var u struct{ UploadID, ContentHash string }
	if resp.StatusCode != 200 || json.Unmarshal(body, &u) != nil || len(u.UploadID) == 0 || len(u.ContentHash) != 64 {
		t.Fatalf("upload: %d %s", resp.StatusCode, body)
	}
	// Not gzip: 400, nothing left behind.
	resp, body = do(t, "POST", r.url+"/upload", "plain text, not gzip", "Content-Type", "application/gzip")
	if resp.StatusCode != 400 || !strings.Contains(string(body), "gzip") {
		t.Fatalf("non-gzip: %d %s", resp.StatusCode, body)
	}
	// Over the 1 MiB per-upload cap: 413.
	resp, body = do(t, "POST", r.url+"/upload", gz(t, 2<<20), "Content-Type", "application/gzip")
	if resp.StatusCode != 413 {
		t.Fatalf("too large: %d %s, want 413", resp.StatusCode, body)
	}
	// The pending total is 1.5 MiB: a second 1000 KiB upload fits the
	// per-upload cap but not the total beside a first one.
	do(t, "POST", r.url+"/upload", gz(t, 700<<10), "Content-Type", "application/gzip")
	resp, body = do(t, "POST", r.url+"/upload", gz(t, 900<<10), "Content-Type", "application/gzip")
	if resp.StatusCode != 507 {
		t.Fatalf("over the pending total: %d %s, want 507", resp.StatusCode, body)
	}
	// Failed uploads left no temp file: only the two pending archives.
	if n := uploadFiles(t, r.uploadsDir(t)); n != 2 {
		t.Fatalf("files in the upload dir: got %d, want 2", n)
	}
	*r.now = r.now.Add(2 * time.Minute)
	if n := r.uploads.Sweep(); n != 2 {
		t.Fatalf("expired: got %d, want 2", n)
	}
	if n := uploadFiles(t, r.uploadsDir(t)); n != 0 {
		t.Fatalf("files after expiry: got %d, want 0", n)
	}
	if _, err := r.uploads.Take(u.UploadID); err == nil {
		t.Fatal("an expired upload could still be taken")
	}
}

func (r *rig) uploadsDir(t *testing.T) string {
	t.Helper()
	return r.uploadDir
}

func TestScreenshotArtifactOverHTTP(t *testing.T) {
	t.Parallel()
	r := newRig(t, "tok")
	auth := []string{"Authorization", "Bearer tok", "Content-Type", "application/json"}
	const id = "chromium-cdp-1280x800"
	t.Cleanup(func() { cdptest.Stop(t, id) })
	resp, body := do(t, "POST", r.url+"/tools/open-url", fmt.Sprintf(`{"udid":%q,"url":%q}`, id, cdptest.PagesURL()+"/app.html"), auth...)
	if resp.StatusCode != 200 {
		t.Fatalf("open-url: %d %s", resp.StatusCode, body)
	}
	resp, body = do(t, "POST", r.url+"/tools/screenshot", fmt.Sprintf(`{"device":%q}`, id), auth...)
	var res struct {
		Data struct {
			Image struct{ ID string }
		}
	}
	if resp.StatusCode != 200 || json.Unmarshal(body, &res) != nil || res.Data.Image.ID == "" {
		t.Fatalf("screenshot: %d %s", resp.StatusCode, body)
	}
	resp, body = do(t, "GET", r.url+"/artifacts/"+res.Data.Image.ID, "", auth...)
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "image/png" {
		t.Fatalf("artifact: %d %s", resp.StatusCode, resp.Header)
	}
	img, err := png.Decode(bytes.NewReader(body))
	if err != nil || img.Bounds().Dx() != 1280 || img.Bounds().Dy() != 800 {
		t.Fatalf("artifact PNG: %v %v", img.Bounds(), err)
	}
	resp, _ = do(t, "GET", r.url+"/artifacts/nope", "", auth...)
	if resp.StatusCode != 404 {
		t.Fatalf("unknown artifact: %d, want 404", resp.StatusCode)
	}
}

// TestAccessLogSaysUpgraded: the tunnels' upgrade takes the connection
// over, and its line in the access log says 101, not 200.
func TestAccessLogSaysUpgraded(t *testing.T) {
	t.Parallel()
	log := &syncBuffer{}
	tunnels := linkserver.NewTunnels(nil)
	srv := server.New(server.Config{Addr: "127.0.0.1:0", Tools: tool.NewRegistry(), Tunnels: tunnels, Log: slog.New(slog.NewTextHandler(log, nil))})
	ts := httptest.NewServer(srv.Handler())
	defer ts.Close()
	defer tunnels.Close()
	c, err := net.Dial("tcp", ts.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fmt.Fprintf(c, "GET %s HTTP/1.1\r\nHost: %s\r\nConnection: Upgrade\r\nUpgrade: %s\r\n%s: localhost:5173\r\n\r\n", tunnel.Path, ts.Listener.Addr(), tunnel.Protocol, tunnel.HeaderExpose)
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusSwitchingProtocols {
		body, _ := io.ReadAll(resp.Body)
		t.Fatalf("GET %s: got %s %s, want 101", tunnel.Path, resp.Status, body)
	}
	c.Close()
	waitLog(t, log, "msg=request", "path="+tunnel.Path, "status=101")
}
