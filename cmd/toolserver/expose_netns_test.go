package main

import (
	"bufio"
	"crypto/sha1"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"image/png"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// The devices of the namespaced server's own browser: A's runs, and B's
// call while A's run holds its device.
const (
	exposeDeviceA = "chromium-cdp-420x300"
	exposeDeviceB = "chromium-cdp-421x301"
)

// exposeRunTimeout bounds one CLI run of the test: far past what a run
// takes on a loaded machine, only so that a hang fails with the output.
const exposeRunTimeout = 4 * time.Minute

// netnsServer makes a network namespace joined to this one by a veth
// pair (this side 10.213.N.1/30, the namespace's 10.213.N.2/30, its lo
// up) and starts `toolserver serve` in it on 10.213.N.2 with token. Its
// browser's loopback is the namespace's: nothing this process listens
// on at 127.0.0.1 is reachable from it. It returns the server's URL.
// Namespaces, the link and the process go when the test ends.
func netnsServer(t *testing.T, token string) string {
	t.Helper()
	if _, err := exec.LookPath("ip"); err != nil {
		t.Fatalf("network namespaces: no ip command (%v); make test installs it (apt-get install iproute2)", err)
	}
	ip := func(args ...string) error {
		out, err := exec.Command("ip", args...).CombinedOutput()
		if err != nil {
			return fmt.Errorf("ip %s: %v: %s", strings.Join(args, " "), err, trimOut(out))
		}
		return nil
	}
	// N comes from the process id, so that runs of this test at the same
	// time (other worktrees) pick different namespaces and subnets; a
	// name taken moves on to the next N.
	for i := range 200 {
		n := (os.Getpid()+i)%250 + 1
		ns, host, peer := fmt.Sprintf("ts-expose-%d", n), fmt.Sprintf("tsx%dh", n), fmt.Sprintf("tsx%dn", n)
		if err := ip("netns", "add", ns); err != nil {
			msg := err.Error()
			switch {
			case strings.Contains(msg, "File exists"):
				continue
			case strings.Contains(msg, "Operation not permitted"), strings.Contains(msg, "Permission denied"):
				t.Fatalf("network namespaces are unavailable here: this test makes one, as CI does, and needs root or CAP_SYS_ADMIN: %v", err)
			}
			t.Fatal(err)
		}
		if err := ip("link", "add", host, "type", "veth", "peer", "name", peer); err != nil {
			ip("netns", "del", ns)
			if strings.Contains(err.Error(), "File exists") {
				continue
			}
			t.Fatal(err)
		}
		t.Cleanup(func() {
			// Deleting one end removes both; a namespace's devices would
			// otherwise outlive it a while (the kernel frees them later).
			ip("link", "del", host)
			if err := ip("netns", "del", ns); err != nil {
				t.Errorf("cleanup: %v", err)
			}
		})
		hostIP, nsIP := fmt.Sprintf("10.213.%d.1", n), fmt.Sprintf("10.213.%d.2", n)
		for _, args := range [][]string{
			{"link", "set", peer, "netns", ns},
			{"addr", "add", hostIP + "/30", "dev", host},
			{"link", "set", host, "up"},
			{"-n", ns, "addr", "add", nsIP + "/30", "dev", peer},
			{"-n", ns, "link", "set", peer, "up"},
			{"-n", ns, "link", "set", "lo", "up"},
		} {
			if err := ip(args...); err != nil {
				t.Fatal(err)
			}
		}
		p := startServeProcVia(t, []string{"ip", "netns", "exec", ns}, token, "--addr", nsIP+":0", "--state-dir", "")
		if !strings.HasPrefix(p.url, "http://"+nsIP+":") {
			t.Fatalf("serve in the namespace listens on %s, want %s", p.url, nsIP)
		}
		return p.url
	}
	t.Fatal("no free network namespace name ts-expose-N")
	return ""
}

// trimOut is out as text, trimmed.
func trimOut(out []byte) string { return strings.TrimSpace(string(out)) }

// exposeSite is the client's site, on 127.0.0.1 alone: a page to tap,
// type into and snapshot, whose script echoes a message over a WebSocket
// of the same port (/ws), and a page held on /gate until release.
type exposeSite struct {
	port    string
	reached <-chan struct{} // closed when a page first asks for /gate
	release func()
}

// exposePage is the site's page: a text, an input, a button, and the
// echo of its WebSocket. The input's caret is transparent: a blinking
// caret would differ between two snapshots.
const exposePage = `<!doctype html><html><head><style>
body { margin: 0; padding: 12px; font: 16px sans-serif; background: #fff }
input { caret-color: transparent }
</style></head><body>
<p>The client's own site</p>
<input id="name" aria-label="name">
<button onclick="document.getElementById('out').textContent = 'tapped ' + document.getElementById('name').value">Go</button>
<p id="out">not yet</p>
<p id="echo">no echo</p>
<script>
const ws = new WebSocket('ws://localhost:{{PORT}}/ws');
ws.onopen = () => ws.send('hello through the tunnel');
ws.onmessage = (e) => { document.getElementById('echo').textContent = 'echo: ' + e.data; };
</script>
</body></html>`

// heldSitePage is the site's page that waits for /gate, which answers when
// the test releases it.
const heldSitePage = `<!doctype html><p id="gate">holding</p>
<script>fetch('/gate').then((r) => r.text()).then((t) => { document.getElementById('gate').textContent = t; });</script>`

func newExposeSite(t *testing.T) *exposeSite {
	t.Helper()
	released, asked := make(chan struct{}), make(chan struct{})
	var releaseOnce, askOnce sync.Once
	s := &exposeSite{reached: asked, release: func() { releaseOnce.Do(func() { close(released) }) }}
	// The hijacked WebSocket connections: httptest's Close does not wait
	// for them, so the test closes them and waits for their handlers.
	var mu sync.Mutex
	var conns []net.Conn
	closed := false
	var wg sync.WaitGroup
	mux := http.NewServeMux()
	mux.HandleFunc("/{$}", func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, strings.ReplaceAll(exposePage, "{{PORT}}", s.port))
	})
	mux.HandleFunc("/held", func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, heldSitePage) })
	mux.HandleFunc("/gate", func(w http.ResponseWriter, r *http.Request) {
		askOnce.Do(func() { close(asked) })
		select {
		case <-released:
			io.WriteString(w, "gate open")
		case <-r.Context().Done():
		}
	})
	// What the WebSocket endpoint saw, for the log of a failed test: an
	// echo that never arrived says here whether its connection did.
	var seen syncBuffer
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("the site's WebSocket endpoint saw:\n%s", seen.String())
		}
	})
	note := func(format string, args ...any) {
		fmt.Fprintf(&seen, "%s "+format+"\n", append([]any{time.Now().Format("15:04:05.000")}, args...)...)
	}
	mux.HandleFunc("/ws", func(w http.ResponseWriter, r *http.Request) {
		wg.Add(1)
		defer wg.Done()
		note("%s %s from %s", r.Method, r.URL, r.RemoteAddr)
		conn, rw, ok := wsAccept(w, r)
		if !ok {
			note("the handshake failed")
			return
		}
		defer conn.Close()
		mu.Lock()
		if closed {
			mu.Unlock()
			return
		}
		conns = append(conns, conn)
		mu.Unlock()
		// A bound on a connection the page never closes; never reached
		// when the test goes as it should.
		conn.SetDeadline(time.Now().Add(10 * time.Minute))
		msg, err := wsReadText(rw.Reader)
		if err != nil {
			note("reading the message: %v", err)
			return
		}
		if err := wsWriteText(conn, msg); err != nil {
			note("echoing %q: %v", msg, err)
			return
		}
		note("echoed %q", msg)
		// Hold the connection until the page (or the cleanup) closes it.
		io.Copy(io.Discard, rw)
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(func() {
		s.release()
		// Once Close returns every handler has ended or taken its
		// connection over (and counted itself in wg before that).
		srv.Close()
		mu.Lock()
		closed = true
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	_, s.port, _ = net.SplitHostPort(srv.Listener.Addr().String())
	if h, _, _ := net.SplitHostPort(srv.Listener.Addr().String()); h != "127.0.0.1" {
		t.Fatalf("the client's site listens on %s, want 127.0.0.1", h)
	}
	return s
}

// wsAccept answers a WebSocket opening handshake (RFC 6455, section 4.2)
// and takes the connection over.
func wsAccept(w http.ResponseWriter, r *http.Request) (net.Conn, *bufio.ReadWriter, bool) {
	key := r.Header.Get("Sec-WebSocket-Key")
	if !strings.EqualFold(r.Header.Get("Upgrade"), "websocket") || key == "" {
		http.Error(w, "a WebSocket endpoint", http.StatusBadRequest)
		return nil, nil, false
	}
	// The accept value: SHA-1 of the key and the protocol's GUID.
	sum := sha1.Sum([]byte(key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"))
	conn, rw, err := http.NewResponseController(w).Hijack()
	if err != nil {
		return nil, nil, false
	}
	fmt.Fprintf(rw, "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: %s\r\n\r\n", base64.StdEncoding.EncodeToString(sum[:]))
	if err := rw.Flush(); err != nil {
		conn.Close()
		return nil, nil, false
	}
	return conn, rw, true
}

// wsReadText reads one frame from the browser, a masked text frame in
// one piece, and returns its payload.
func wsReadText(r *bufio.Reader) (string, error) {
	var h [2]byte
	if _, err := io.ReadFull(r, h[:]); err != nil {
		return "", err
	}
	if h[0] != 0x81 || h[1]&0x80 == 0 {
		return "", fmt.Errorf("a frame %#x %#x: want a final, masked text frame", h[0], h[1])
	}
	n := uint64(h[1] & 0x7f)
	switch n {
	case 126:
		var ext [2]byte
		if _, err := io.ReadFull(r, ext[:]); err != nil {
			return "", err
		}
		n = uint64(binary.BigEndian.Uint16(ext[:]))
	case 127:
		return "", fmt.Errorf("a frame of over 64 KiB")
	}
	var mask [4]byte
	if _, err := io.ReadFull(r, mask[:]); err != nil {
		return "", err
	}
	p := make([]byte, n)
	if _, err := io.ReadFull(r, p); err != nil {
		return "", err
	}
	for i := range p {
		p[i] ^= mask[i%4]
	}
	return string(p), nil
}

// wsWriteText writes msg as one unmasked text frame (a server's frames
// are not masked).
func wsWriteText(w io.Writer, msg string) error {
	if len(msg) > 125 {
		return fmt.Errorf("a message of %d bytes: the test's frames are short", len(msg))
	}
	_, err := w.Write(append([]byte{0x81, byte(len(msg))}, msg...))
	return err
}

// exposeRun runs the CLI with args and the environment e, and fails the
// test when it does not return within exposeRunTimeout.
func exposeRun(t *testing.T, e env, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr syncBuffer
	done := runAsync(args, testStreams(t, e, &stdout, &stderr))
	select {
	case code := <-done:
		return code, stdout.String(), stderr.String()
	case <-time.After(exposeRunTimeout):
		t.Fatalf("%v did not return\nstdout:\n%s\nstderr:\n%s", args, stdout.String(), stderr.String())
		return 0, "", ""
	}
}

// TestExposeNetns: flow run --expose from a client whose site listens on
// its own 127.0.0.1, to a tool-server in a network namespace of its own,
// whose browser really cannot reach that loopback: without --expose the
// launch fails and names --expose; with it a flow taps, types, gets a
// WebSocket echo and snapshots; a port not exposed stays out of reach
// (and --expose-only says so); another client's calls on the same server
// get nothing of the tunnel while it is open; and a relative launch path
// is refused without --expose and served by the client with it.
//
// It runs alone, not in parallel: the veth pair it adds to this namespace
// (and removes at its end) is a change of the machine's network, and
// Chromium aborts every page load then in flight with
// net::ERR_NETWORK_CHANGED, a failure of whichever other test was
// launching (TestReplicasBehindNginx failed so on a clean clone). A test
// without t.Parallel runs while the parallel ones wait.
func TestExposeNetns(t *testing.T) {
	const token = "expose-netns"
	u := netnsServer(t, token)
	site := newExposeSite(t)
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `<!doctype html><p>another port of the client</p>`)
	}))
	t.Cleanup(other.Close)
	_, otherPort, _ := net.SplitHostPort(other.Listener.Addr().String())

	siteURL := "http://localhost:" + site.port + "/"
	root := writeProject(t, map[string]string{
		"site.yaml": "steps:\n  - launch: \"" + siteURL + "\"\n" +
			"  - await: { visible: { text: The client's own site }, timeout: 60000 }\n" +
			"  - type: { into: { id: name }, text: ada, submit: false }\n" +
			"  - tap: Go\n" +
			"  - assert: { text: { in: { id: out }, equals: tapped ada } }\n" +
			"  - await: { visible: { text: \"echo: hello through the tunnel\" }, timeout: 60000 }\n" +
			"  - snapshot: { name: page, maxMismatch: 0 }\n",
		"other.yaml": "steps:\n  - launch: \"http://localhost:" + otherPort + "/\"\n  - await: { visible: { text: another port }, timeout: 60000 }\n",
		// The gate opens only when the test says: the run is in progress,
		// with its tunnel open, until then.
		"held.yaml": "steps:\n  - launch: \"" + siteURL + "held\"\n  - await: { visible: { text: gate open }, timeout: 300000 }\n",
		"b.yaml":    "steps:\n  - launch: \"" + siteURL + "\"\n  - await: { visible: { text: The client's own site }, timeout: 60000 }\n",
		"rel.yaml":  "steps:\n  - launch: ../../site/index.html\n  - await: { visible: { text: served by the client }, timeout: 60000 }\n",
	})
	if err := os.MkdirAll(filepath.Join(root, "site"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "site", "index.html"), []byte(`<!doctype html><p>A file served by the client</p>`), 0o644); err != nil {
		t.Fatal(err)
	}
	e := env{envAuthToken: token}
	flowRun := func(t *testing.T, device string, args ...string) (int, string) {
		t.Helper()
		code, out, errOut := exposeRun(t, e, append([]string{"flow", "run", "--project", root, "--link", u, "--device", device}, args...)...)
		t.Logf("flow run %v: exit %d\n%s%s", args, code, out, errOut)
		return code, out + errOut
	}
	exposeSite := "--expose=localhost:" + site.port

	t.Run("without --expose the client's localhost is out of reach", func(t *testing.T) {
		code, out := flowRun(t, exposeDeviceA, "site")
		if code == 0 || !strings.Contains(out, "--expose localhost:"+site.port) {
			t.Fatalf("got exit %d\n%s\nwant a failed launch that names --expose localhost:%s", code, out, site.port)
		}
	})

	baseline := filepath.Join(root, ".argent", "flows", "__baselines__", "site", "page__chromium-420x300.png")
	t.Run("with --expose the flow runs on the client's site", func(t *testing.T) {
		code, out := flowRun(t, exposeDeviceA, "site", exposeSite, "--update-baselines")
		if code != 0 || !strings.Contains(out, "PASS site") {
			t.Fatalf("update: got exit %d\n%s\nwant PASS site", code, out)
		}
		f, err := os.Open(baseline)
		if err != nil {
			t.Fatalf("the baseline in the client's project: %v", err)
		}
		cfg, err := png.DecodeConfig(f)
		f.Close()
		if err != nil || cfg.Width != 420 || cfg.Height != 300 {
			t.Fatalf("the baseline: got %dx%d (%v), want a 420x300 PNG", cfg.Width, cfg.Height, err)
		}
		code, out = flowRun(t, exposeDeviceA, "site", exposeSite)
		if code != 0 || !strings.Contains(out, "PASS site") {
			t.Fatalf("compare: got exit %d\n%s\nwant PASS site", code, out)
		}
	})

	t.Run("a port not exposed", func(t *testing.T) {
		code, out := flowRun(t, exposeDeviceA, "other", exposeSite)
		if code == 0 || !strings.Contains(out, "localhost:"+otherPort+" is not one of the targets this run exposes") {
			t.Fatalf("got exit %d\n%s\nwant a failed launch: localhost:%s is not exposed", code, out, otherPort)
		}
		code, out = flowRun(t, exposeDeviceA, "other", exposeSite, "--expose-only")
		if code == 0 || !strings.Contains(out, "(--expose-only)") {
			t.Fatalf("--expose-only: got exit %d\n%s\nwant a failed launch naming --expose-only", code, out)
		}
	})

	t.Run("another client gets nothing of the tunnel", func(t *testing.T) {
		var stdout, stderr syncBuffer
		done := runAsync([]string{"flow", "run", "--project", root, "--link", u, "--device", exposeDeviceA, "held", exposeSite}, testStreams(t, e, &stdout, &stderr))
		select {
		case <-site.reached:
		case code := <-done:
			t.Fatalf("A's run ended (exit %d) before its page reached the gate\n%s\n%s", code, stdout.String(), stderr.String())
		case <-time.After(exposeRunTimeout):
			t.Fatalf("A's page never reached the gate\n%s\n%s", stdout.String(), stderr.String())
		}
		call := func(args map[string]any) (int, string, string) {
			t.Helper()
			b, _ := json.Marshal(args)
			return exposeRun(t, e, "call", "flow-execute", "--link", u, "--args", string(b))
		}
		// (a) No tunnel named: the server's own loopback has no such site.
		b := map[string]any{"name": "b", "project_root": root, "device": exposeDeviceB}
		code, out, errOut := call(b)
		var res struct {
			Data struct {
				OK    bool `json:"ok"`
				Steps []struct {
					Status string `json:"status"`
					Reason string `json:"reason"`
				} `json:"steps"`
			} `json:"data"`
		}
		if err := json.NewDecoder(strings.NewReader(out)).Decode(&res); err != nil || res.Data.OK || len(res.Data.Steps) == 0 ||
			res.Data.Steps[0].Status != "error" || !strings.Contains(res.Data.Steps[0].Reason, "ERR_CONNECTION_REFUSED") {
			t.Errorf("B without a tunnel: got exit %d (%v)\n%s\n%s\nwant its launch failed: connection refused", code, err, out, errOut)
		}
		// (b) A made-up tunnel id: refused.
		b["tunnel"] = strings.Repeat("ab", 32)
		code, out, errOut = call(b)
		if code == 0 || !strings.Contains(out+errOut, "no tunnel with this id is open") {
			t.Errorf("B with a made-up tunnel: got exit %d\n%s\n%s\nwant it refused", code, out, errOut)
		}
		site.release()
		if code := waitExit(t, done, &stdout, &stderr); code != 0 || !strings.Contains(stdout.String(), "PASS held") {
			t.Fatalf("A's run: got exit %d\n%s\n%s\nwant PASS held", code, stdout.String(), stderr.String())
		}
	})

	t.Run("a relative launch path", func(t *testing.T) {
		code, out := flowRun(t, exposeDeviceA, "rel")
		if code == 0 || !strings.Contains(out, "run flow run with --expose so that the client serves its files") {
			t.Fatalf("without --expose: got exit %d\n%s\nwant it refused, naming --expose", code, out)
		}
		if strings.Contains(out, "✓") {
			t.Errorf("without --expose: got\n%s\nwant it refused before the first step", out)
		}
		code, out = flowRun(t, exposeDeviceA, "rel", "--expose=localhost")
		if code != 0 || !strings.Contains(out, "PASS rel") {
			t.Fatalf("with --expose localhost: got exit %d\n%s\nwant PASS rel", code, out)
		}
	})
}
