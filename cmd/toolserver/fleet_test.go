package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"image/png"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// The fleet's pages each fill a viewport of fleetW×fleetH with a colour of
// their own. Their baselines are stored PNGs (no compression), about 297 KB
// each: over the 256 KiB past which a baseline travels by POST /upload.
// Chromium's captures of a flat colour are small, so the replicas spend
// their time on the uploads and the calls, not on inflating pixels.
const (
	fleetW, fleetH = 330, 300
	fleetDevice    = "chromium-cdp-330x300"
)

// fleetColour is flow n's colour, a different one for each of the 20
// flows, so that a baseline delivered to the wrong call fails its flow.
func fleetColour(n int) color.NRGBA {
	return color.NRGBA{uint8(40 + 9*n), uint8(220 - 7*n), uint8(90 + 5*n), 255}
}

// fleetPage is flow n's page: a div with the id fill that covers the
// viewport in fleetColour(n).
func fleetPage(n int) string {
	c := fleetColour(n)
	return fmt.Sprintf(`<!doctype html><body style="margin:0"><div id="fill" style="width:100vw;height:100vh;background:rgb(%d,%d,%d)"></div>`, c.R, c.G, c.B)
}

// fleetSuite writes 20 flows (f00 … f19), each on its page served by
// httptest, with their baselines for fleetDevice; it returns the flows'
// directory.
func fleetSuite(t *testing.T) string {
	t.Helper()
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var n int
		fmt.Sscanf(r.URL.Path, "/page-%d", &n)
		io.WriteString(w, fleetPage(n))
	}))
	t.Cleanup(site.Close)
	flows := filepath.Join(t.TempDir(), ".argent", "flows")
	for i := range 20 {
		name := fmt.Sprintf("f%02d", i)
		body := fmt.Sprintf("steps:\n  - launch: %q\n  - await: { visible: fill }\n  - snapshot: fill\n", fmt.Sprintf("%s/page-%d", site.URL, i))
		// An opaque fill of an *image.RGBA is image/draw's fast path.
		img := image.NewRGBA(image.Rect(0, 0, fleetW, fleetH))
		draw.Draw(img, img.Bounds(), image.NewUniform(fleetColour(i)), image.Point{}, draw.Src)
		var buf bytes.Buffer
		if err := (&png.Encoder{CompressionLevel: png.NoCompression}).Encode(&buf, img); err != nil {
			t.Fatal(err)
		}
		baseline := buf.Bytes()
		if len(baseline) <= 256<<10 {
			t.Fatalf("a baseline of %d bytes: want one over 256 KiB, so that it travels by POST /upload", len(baseline))
		}
		dir := filepath.Join(flows, "__baselines__", name)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		for path, data := range map[string][]byte{
			filepath.Join(flows, name+".yaml"):                                          []byte(body),
			filepath.Join(dir, fmt.Sprintf("fill__chromium-%dx%d.png", fleetW, fleetH)): baseline,
		} {
			if err := os.WriteFile(path, data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	return flows
}

// TestReplicasBehindNginx: three tool-server processes sharing an
// --upload-dir behind a plain round-robin nginx upstream run a 20-flow
// suite whose baselines go through POST /upload: every flow passes,
// though an upload and the call that uses it land on different
// replicas. Then one replica is killed (SIGKILL) in the middle of the
// suite: the flows it had fail (a call that may have run is never sent
// again) or go to the others, every other flow passes, and nothing
// hangs.
func TestReplicasBehindNginx(t *testing.T) {
	t.Parallel()
	flows := fleetSuite(t)
	const token = "fleet"
	shared := t.TempDir()
	var urls []string
	var procs []*os.Process
	for range 3 {
		u, p := startServeProcess(t, token, "--upload-dir", shared, "--state-dir", "")
		urls, procs = append(urls, u), append(procs, p)
	}
	u := startNginxUpstream(t, urls, "64m")
	run := []string{"flow", "run", flows, "--device", fleetDevice, "--link", u}

	t.Run("every flow passes", func(t *testing.T) {
		code, out, errOut := runCLIEnv(t, env{envAuthToken: token}, run...)
		if code != 0 || !strings.Contains(out, "20 flows: 20 passed, 0 failed") {
			t.Fatalf("20 flows through nginx over 3 replicas: exit %d\n%s\n%s", code, out, errOut)
		}
		// Nothing waits in the shared directory: every upload was taken.
		left, _ := filepath.Glob(filepath.Join(shared, "*.upload"))
		if len(left) != 0 {
			t.Errorf("uploads left in the shared directory: %v", left)
		}
	})

	t.Run("a replica killed mid-suite", func(t *testing.T) {
		stdout := newLineWatch("PASS f05")
		var stderr syncBuffer
		done := runAsync(run, testStreams(t, env{envAuthToken: token}, stdout, &stderr))
		select {
		case <-stdout.seen:
		case code := <-done:
			t.Fatalf("the suite ended (exit %d) before the kill\n%s\n%s", code, stdout, stderr.String())
		case <-time.After(3 * time.Minute):
			t.Fatalf("the suite did not reach f05\n%s", stdout)
		}
		procs[1].Signal(syscall.SIGKILL)
		code := waitExit(t, done, stdout, &stderr)
		out := stdout.String()
		passed := strings.Count(out, "PASS f")
		failed := strings.Count(out, "not finished") + strings.Count(out, "FAIL f")
		if passed+failed != 20 || failed > 2 || !strings.Contains(out, "PASS f19") {
			t.Fatalf("after a replica was killed: exit %d, %d passed, %d failed; want 20 reported, at most the flow or two it had in flight failed\n%s\n%s", code, passed, failed, out, stderr.String())
		}
		if failed > 0 && code != 2 {
			t.Errorf("a flow broke under a killed replica: exit %d, want 2", code)
		}
	})
}

// heldPage serves a page that answers only once release is called;
// reached is closed when a browser first asks for it.
func heldPage(t *testing.T) (url string, reached <-chan struct{}, release func()) {
	t.Helper()
	released, asked := make(chan struct{}), make(chan struct{})
	var once, askOnce sync.Once
	release = func() { once.Do(func() { close(released) }) }
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		askOnce.Do(func() { close(asked) })
		select {
		case <-released:
		case <-r.Context().Done():
			return
		}
		io.WriteString(w, `<!doctype html><p>here</p>`)
	}))
	t.Cleanup(func() {
		release()
		site.Close()
	})
	return site.URL, asked, release
}

// TestDrain: SIGTERM (the context's end) turns readiness false at once,
// refuses new calls with 503, lets the call in flight finish, then the
// server exits 0.
func TestDrain(t *testing.T) {
	t.Parallel()
	site, reached, release := heldPage(t)
	root := writeProject(t, map[string]string{
		"held.yaml": "steps:\n  - launch: \"" + site + "/held\"\n  - await: { visible: { text: here } }\n",
	})
	device := sharedDevice(t, "chromium-cdp-337x217")

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stderr := &syncBuffer{started: make(chan struct{})}
	draining := newLineWatch("draining")
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, []string{"serve", "--addr", "127.0.0.1:0", "--drain-timeout", "1m"}, testStreams(t, nil, io.Discard, io.MultiWriter(stderr, draining)))
	}()
	select {
	case <-stderr.started:
	case code := <-done:
		t.Fatalf("serve exited %d: %s", code, stderr)
	}
	m := regexp.MustCompile(`listening on (http://\S+) `).FindStringSubmatch(stderr.String())
	if m == nil {
		t.Fatalf("no address in %q", stderr)
	}
	u := m[1]
	get := func(path string) (int, string) {
		resp, err := http.Get(u + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, body := get("/readyz"); code != 200 {
		t.Fatalf("/readyz before the drain: %d %s", code, body)
	}

	// A call in flight: the flow waits on the held page, which says when
	// the browser asked for it.
	type answer struct {
		code int
		body string
	}
	inFlight := make(chan answer, 1)
	go func() {
		body := fmt.Sprintf(`{"name":"held","project_root":%q,"device":%q}`, root, device)
		req, _ := http.NewRequest("POST", u+"/tools/flow-execute", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/x-ndjson")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			inFlight <- answer{0, err.Error()}
			return
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		inFlight <- answer{resp.StatusCode, string(b)}
	}()
	select {
	case <-reached:
	case a := <-inFlight:
		t.Fatalf("the call in flight: %+v", a)
	case <-time.After(time.Minute):
		t.Fatal("the flow never reached the held page")
	}
	cancel() // SIGTERM

	// Once the server says it drains, readiness is false and a new call
	// is refused, while the call in flight goes on.
	select {
	case <-draining.seen:
	case <-time.After(time.Minute):
		t.Fatalf("serve never said it drains: %s", stderr)
	}
	if code, body := get("/readyz"); code != http.StatusServiceUnavailable {
		t.Fatalf("/readyz while draining: %d %s, want 503", code, body)
	}
	req, _ := http.NewRequest("POST", u+"/tools/list-devices", strings.NewReader(`{}`))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	var e struct {
		ErrorCode string `json:"error_code"`
	}
	json.Unmarshal(b, &e)
	if resp.StatusCode != http.StatusServiceUnavailable || e.ErrorCode != "DRAINING" || resp.Header.Get("Retry-After") == "" {
		t.Errorf("a new call while draining: %d %s, want 503 DRAINING with Retry-After", resp.StatusCode, b)
	}
	select {
	case code := <-done:
		t.Fatalf("serve exited %d with a call in flight", code)
	default:
	}

	release()
	var a answer
	select {
	case a = <-inFlight:
	case <-time.After(time.Minute):
		t.Fatal("the call in flight never ended")
	}
	if a.code != 200 || !strings.Contains(a.body, `"event":"result"`) || !bytes.Contains([]byte(a.body), []byte(`"ok":true`)) {
		t.Errorf("the call in flight: %d %s, want its result", a.code, a.body)
	}
	select {
	case code := <-done:
		if code != 0 {
			t.Errorf("serve: exit %d, want 0", code)
		}
	case <-time.After(time.Minute):
		t.Fatal("serve did not exit after the drain")
	}
}

// startServeProcess runs `toolserver serve` as a process of its own (the
// test binary is the CLI when started as toolserver, see TestMain), with
// the token and its own browsers, and returns its URL and process.
func startServeProcess(t *testing.T, token string, args ...string) (string, *os.Process) {
	t.Helper()
	p := startServeProc(t, token, args...)
	return p.url, p.proc
}

// serveProc is a serve process: its URL, its stderr, and a channel
// closed once it has exited.
type serveProc struct {
	url    string
	proc   *os.Process
	stderr *lineWatch
	exited chan struct{}
}

// kill kills the process with SIGKILL and waits for it to exit.
func (p *serveProc) kill() {
	p.proc.Kill()
	<-p.exited
}

func startServeProc(t *testing.T, token string, args ...string) *serveProc {
	t.Helper()
	return startServeProcVia(t, nil, token, args...)
}

// startServeProcVia is startServeProc with the command started through
// the program and arguments of via (e.g. ip netns exec NAME), which run
// the binary in their place (the process killed is then the serve
// process itself). A later --addr in args wins.
func startServeProcVia(t *testing.T, via []string, token string, args ...string) *serveProc {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(t.TempDir(), "toolserver")
	if err := os.Symlink(self, bin); err != nil {
		t.Fatal(err)
	}
	argv := append(append(append([]string{}, via...), bin, "serve", "--addr", "127.0.0.1:0"), args...)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), envAuthToken+"="+token)
	stderr := newLineWatch("listening on")
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-exited
	})
	select {
	case <-stderr.seen:
	case <-exited:
		t.Fatalf("serve exited: %s", stderr)
	case <-time.After(time.Minute):
		t.Fatalf("serve did not listen: %s", stderr)
	}
	m := regexp.MustCompile(`listening on (http://\S+) `).FindStringSubmatch(stderr.String())
	if m == nil {
		t.Fatalf("no address in %q", stderr)
	}
	return &serveProc{url: m[1], proc: cmd.Process, stderr: stderr, exited: exited}
}
