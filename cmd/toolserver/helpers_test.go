package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolserver/toolserver/device/cdp/cdptest"
)

// env is the environment of a CLI run in a test: its variables alone are
// set, none of the test process's, so tests that set different ones run
// in parallel.
type env map[string]string

func (e env) get(name string) string { return e[name] }

// testStreams are the streams of an in-process CLI run in a test: the
// variables of e and the shared browser of cdptest. A test that kills its
// browser sets pool to nil, so the command starts a browser of its own.
func testStreams(t testing.TB, e env, stdout, stderr io.Writer) streams {
	t.Helper()
	return streams{stdout: stdout, stderr: stderr, getenv: e.get, pool: cdptest.Pool(t)}
}

// runCLI runs `toolserver args...` in process with no environment
// variables set, on the shared browser, and returns the exit code and
// both outputs.
func runCLI(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	return runCLIEnv(t, nil, args...)
}

// runCLIEnv is runCLI with the environment variables of e.
func runCLIEnv(t *testing.T, e env, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), args, testStreams(t, e, &stdout, &stderr))
	return code, stdout.String(), stderr.String()
}

// sharedDevice returns id, a device the test's CLI runs boot in the
// shared browser, and stops it when the test ends. Tests that run at the
// same time name different ids: two runs on one id share a page.
func sharedDevice(t *testing.T, id string) string {
	t.Helper()
	cdptest.Claim(t, id)
	t.Cleanup(func() { cdptest.Stop(t, id) })
	return id
}

// syncBuffer is a goroutine-safe writer that closes started when the
// server says it is listening.
type syncBuffer struct {
	mu      sync.Mutex
	buf     bytes.Buffer
	started chan struct{}
	once    sync.Once
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	n, err := b.buf.Write(p)
	if b.started != nil && strings.Contains(b.buf.String(), "listening on") {
		b.once.Do(func() { close(b.started) })
	}
	return n, err
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// tcpProxy forwards TCP connections to a server. Drop resets every
// connection open at that moment and goes on accepting new ones (to a
// page, the network dropped its streams once); Cut closes the listener
// too (to a client, the server went away as a crashed host would, in the
// middle of whatever it was sending).
type tcpProxy struct {
	ln    net.Listener
	mu    sync.Mutex
	conns [][2]net.Conn // each from the client, to the server
	// ended counts, by the pair's client connection, the directions of it
	// that stopped (0: it is open both ways).
	ended map[net.Conn]int
	// last is, by the pair's client connection, the request line the
	// client sent last on it ("GET /v1/events HTTP/1.1").
	last map[net.Conn]string
	// changed is closed, and replaced, whenever a connection opens, ends
	// or sends a request.
	changed chan struct{}
	cut     bool
	wg      sync.WaitGroup
	// history is what happened on the connections, for a failed test's
	// log: each line a time, the connection's number and what it did.
	history []string
	number  map[net.Conn]int
}

// note adds a line about connection in to the history.
func (p *tcpProxy) note(in net.Conn, format string, args ...any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.noteLocked(in, format, args...)
}

func (p *tcpProxy) noteLocked(in net.Conn, format string, args ...any) {
	if len(p.history) < 2000 {
		p.history = append(p.history, time.Now().Format("15:04:05.000")+fmt.Sprintf(" #%d ", p.number[in])+fmt.Sprintf(format, args...))
	}
}

// History is what happened on the proxy's connections, a line each.
func (p *tcpProxy) History() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return strings.Join(p.history, "\n")
}

// lastBytes keeps the last 400 bytes written to it.
type lastBytes struct{ b []byte }

func (l *lastBytes) Write(b []byte) (int, error) {
	l.b = append(l.b, b...)
	if len(l.b) > 400 {
		l.b = append(l.b[:0:0], l.b[len(l.b)-400:]...)
	}
	return len(b), nil
}

func newTCPProxy(t *testing.T, target string) *tcpProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &tcpProxy{ln: ln, ended: map[net.Conn]int{}, last: map[net.Conn]string{}, number: map[net.Conn]int{}, changed: make(chan struct{})}
	p.wg.Go(func() {
		for {
			in, err := ln.Accept()
			if err != nil {
				return
			}
			out, err := net.Dial("tcp", target)
			if err != nil {
				in.Close()
				continue
			}
			if !p.track(in, out) {
				return
			}
			p.wg.Go(func() {
				io.Copy(out, io.TeeReader(in, &requestLines{seen: func(line string) { p.request(in, line) }}))
				out.Close()
				p.end(in)
			})
			p.wg.Go(func() {
				tail := &lastBytes{}
				io.Copy(in, io.TeeReader(out, tail))
				in.Close()
				p.note(in, "the server's side ended; its last bytes: %q", tail.b)
				p.end(in)
			})
		}
	})
	t.Cleanup(func() {
		p.Cut()
		p.wg.Wait()
	})
	return p
}

// track keeps a connection's pair, or closes it when the proxy is cut.
func (p *tcpProxy) track(in, out net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cut {
		in.Close()
		out.Close()
		return false
	}
	p.conns = append(p.conns, [2]net.Conn{in, out})
	p.number[in] = len(p.number) + 1
	p.noteLocked(in, "opened")
	p.notifyLocked()
	return true
}

func (p *tcpProxy) notifyLocked() {
	close(p.changed)
	p.changed = make(chan struct{})
}

// request notes the request line a client connection sent.
func (p *tcpProxy) request(in net.Conn, line string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.last[in] = line
	p.noteLocked(in, "%s", line)
	p.notifyLocked()
}

// Requests are the last request lines of the connections open now, one
// each ("" for one that sent none yet).
func (p *tcpProxy) Requests() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	var open []string
	for _, pair := range p.conns {
		if p.ended[pair[0]] == 0 {
			open = append(open, p.last[pair[0]])
		}
	}
	return open
}

// AwaitRequests waits until ok holds of Requests, and says whether it
// did before d went by.
func (p *tcpProxy) AwaitRequests(d time.Duration, ok func(open []string) bool) bool {
	timeout := time.After(d)
	for {
		p.mu.Lock()
		changed := p.changed
		p.mu.Unlock()
		if ok(p.Requests()) {
			return true
		}
		select {
		case <-changed:
		case <-timeout:
			return false
		}
	}
}

// requestLines hands seen each HTTP request line written to it; other
// lines it passes over. A line of over 4 KiB (a body's) it drops.
type requestLines struct {
	partial []byte
	seen    func(line string)
}

var requestLine = regexp.MustCompile(`^[A-Z]+ \S+ HTTP/1\.[01]$`)

func (r *requestLines) Write(b []byte) (int, error) {
	r.partial = append(r.partial, b...)
	for {
		i := bytes.IndexByte(r.partial, '\n')
		if i < 0 {
			break
		}
		if line := strings.TrimSuffix(string(r.partial[:i]), "\r"); requestLine.MatchString(line) {
			r.seen(line)
		}
		r.partial = r.partial[i+1:]
	}
	if len(r.partial) > 4096 {
		r.partial = nil
	}
	return len(b), nil
}

// end notes that a direction of the pair of client connection in stopped.
func (p *tcpProxy) end(in net.Conn) {
	p.mu.Lock()
	p.ended[in]++
	p.notifyLocked()
	p.mu.Unlock()
}

// Drop resets every connection open now and returns how many were.
func (p *tcpProxy) Drop() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.dropLocked()
}

func (p *tcpProxy) dropLocked() int {
	n := 0
	for _, pair := range p.conns {
		open := false
		for _, c := range pair {
			// Reset rather than FIN: the other side sees the connection die.
			if tc, ok := c.(*net.TCPConn); ok {
				tc.SetLinger(0)
			}
			open = c.Close() == nil || open
		}
		if open {
			n++
		}
	}
	p.conns = nil
	return n
}

// Cut closes the listener and resets every connection.
func (p *tcpProxy) Cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cut = true
	p.ln.Close()
	p.dropLocked()
}

func (p *tcpProxy) URL() string { return "http://" + p.ln.Addr().String() }

// TestDeviceIDsAreTheirTestsOwn: two tests that name one device id
// share its page when they run at the same time, and cdptest fails the
// second only when they do. Every id given by name to sharedDevice or
// homeProject in this package's tests appears once.
func TestDeviceIDsAreTheirTestsOwn(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob("*_test.go")
	if err != nil {
		t.Fatal(err)
	}
	claim := regexp.MustCompile(`(?:sharedDevice|homeProject)\(t, "(chromium-cdp-[0-9]+x[0-9]+)"`)
	seen := map[string]string{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range claim.FindAllSubmatch(b, -1) {
			id := string(m[1])
			if other, ok := seen[id]; ok {
				t.Errorf("%s: device %s is claimed in %s too: give one of them an id of its own", f, id, other)
			}
			seen[id] = f
		}
	}
	if len(seen) < 10 {
		t.Fatalf("found %d claimed device ids, want the package's many: is the pattern stale?", len(seen))
	}
}
