package server_test

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/toolserver/toolserver/server"
	"github.com/toolserver/toolserver/store"
	"github.com/toolserver/toolserver/tool"
)

// served runs a real server (Listen, Serve) with short timeouts and a
// "wait" tool that streams a line, then waits for release.
func served(t *testing.T, token string, idle, body time.Duration, release <-chan struct{}) string {
	t.Helper()
	dir := t.TempDir()
	ups, err := store.NewUploads(store.UploadConfig{Dir: dir + "/uploads", MaxUpload: 1 << 20, MaxPending: 1 << 21, TTL: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	reg := tool.NewRegistry()
	reg.Add(&tool.Tool{Name: "wait", Description: "test: a line, then waits for release",
		Run: func(ctx context.Context, call *tool.Call) (any, error) {
			call.Progress("started")
			select {
			case <-release:
				return "released", nil
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}})
	srv := server.New(server.Config{Addr: "127.0.0.1:0", Token: token, Tools: reg, Uploads: ups, TempDir: dir, IdleTimeout: idle, ReadTimeout: body})
	if err := srv.Listen(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	return srv.Addr()
}

// closedWithin reports whether the server closes conn (a read ends in
// EOF or a reset) within d, rather than the read timing out.
func closedWithin(t *testing.T, br *bufio.Reader, conn net.Conn, d time.Duration) bool {
	t.Helper()
	conn.SetReadDeadline(time.Now().Add(d))
	_, err := br.ReadByte()
	return err != nil && !errors.Is(err, os.ErrDeadlineExceeded)
}

// TestIdleKeepAliveClosed: a keep-alive connection that sends no next
// request is closed by the server after its idle timeout.
func TestIdleKeepAliveClosed(t *testing.T) {
	t.Parallel()
	addr := served(t, "", 200*time.Millisecond, time.Minute, nil)
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	io.WriteString(conn, "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || resp.Close {
		t.Fatalf("healthz: got %d (close %v), want 200 on a kept-alive connection", resp.StatusCode, resp.Close)
	}
	if !closedWithin(t, br, conn, 10*time.Second) {
		t.Fatal("an idle keep-alive connection was still open after 10 s, want it closed after the 200 ms idle timeout")
	}
}

// TestSlowBodyCutOff: a body that stops arriving is answered 408 after
// the body timeout, for a call and for an upload, and the connection is
// closed.
func TestSlowBodyCutOff(t *testing.T) {
	t.Parallel()
	addr := served(t, "", time.Minute, 200*time.Millisecond, nil)
	for _, head := range []string{
		"POST /tools/wait HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{",
		"POST /upload HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/gzip\r\nContent-Length: 100000\r\n\r\n\x1f\x8b",
	} {
		conn, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		io.WriteString(conn, head)
		conn.SetReadDeadline(time.Now().Add(10 * time.Second))
		br := bufio.NewReader(conn)
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatalf("%.30q: got %v, want a 408 within 10 s after a 200 ms read timeout", head, err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusRequestTimeout || !strings.Contains(string(b), "did not arrive within 200ms") {
			t.Fatalf("%.30q: got %d %s, want 408 naming the timeout", head, resp.StatusCode, b)
		}
		if !closedWithin(t, br, conn, 10*time.Second) {
			t.Fatalf("%.30q: the connection stayed open after the body was cut off", head)
		}
	}
}

// TestRefusedBodyNotAwaited: a request refused before its body is read
// (no token, here) is answered at once and its connection closed, not
// held while the body trickles in.
func TestRefusedBodyNotAwaited(t *testing.T) {
	t.Parallel()
	addr := served(t, "secret", time.Minute, time.Minute, nil)
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	io.WriteString(conn, "POST /tools/wait HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{")
	conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatalf("got %v, want a 401 at once", err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("got %d, want 401", resp.StatusCode)
	}
	if !closedWithin(t, br, conn, 10*time.Second) {
		t.Fatal("the connection of a refused request stayed open while its body was awaited (read timeout 1 min)")
	}
}

// TestBodyTimeoutSparesLongCalls: the body timeout covers the body only:
// a call that streams for many times as long keeps its context and ends
// with its result.
func TestBodyTimeoutSparesLongCalls(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	addr := served(t, "", 100*time.Millisecond, 100*time.Millisecond, release)
	resp := postNDJSON(t, "http://"+addr+"/tools/wait", `{}`)
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	if !sc.Scan() || !strings.Contains(sc.Text(), "started") {
		t.Fatalf("first line: %q %v", sc.Text(), sc.Err())
	}
	// Let both timeouts pass many times over while the call runs: this
	// wait is the duration under test, not a synchronisation.
	<-time.After(time.Second)
	close(release)
	if !sc.Scan() || !strings.Contains(sc.Text(), `"event":"result"`) || !strings.Contains(sc.Text(), "released") {
		t.Fatalf("after 1 s: got %q %v, want the call's result", sc.Text(), sc.Err())
	}
}
