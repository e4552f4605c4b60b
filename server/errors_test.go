package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolserver/toolserver/fault"
	"github.com/toolserver/toolserver/server"
	"github.com/toolserver/toolserver/tool"
)

// syncBuffer is a log the handlers write while the test reads it; each
// write wakes whoever waits for a line.
type syncBuffer struct {
	mu      sync.Mutex
	buf     bytes.Buffer
	written chan struct{} // closed and replaced at each write
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.written != nil {
		close(b.written)
		b.written = nil
	}
	return b.buf.Write(p)
}

// snapshot returns the log so far and a channel closed at the next write.
func (b *syncBuffer) snapshot() (string, <-chan struct{}) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.written == nil {
		b.written = make(chan struct{})
	}
	return b.buf.String(), b.written
}

func (b *syncBuffer) String() string {
	s, _ := b.snapshot()
	return s
}

// waitLog waits until a line of the log holds every part, or fails after
// a deadline.
func waitLog(t *testing.T, log *syncBuffer, parts ...string) string {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		text, next := log.snapshot()
		for line := range strings.Lines(text) {
			all := true
			for _, p := range parts {
				all = all && strings.Contains(line, p)
			}
			if all {
				return line
			}
		}
		select {
		case <-next:
		case <-deadline:
			t.Fatalf("log: got\n%s\nwant a line with %q", log.String(), parts)
		}
	}
}

var internalMsg = regexp.MustCompile(`^internal error \(request ([0-9a-f]{16})\); see the tool-server's log$`)

// TestInternalFaultNamesRequestID: a tool that fails with an internal
// fault (a raw error, or a *fault.Error of kind internal) is answered 500
// with a stable message naming the request id, as a JSON answer and as
// the error line of a stream; the raw text is only in the server's log,
// on a line with the same id, and the access log line carries it too.
func TestInternalFaultNamesRequestID(t *testing.T) {
	const raw = "Runtime.evaluate: -32000 Cannot find context with specified id (secret detail)"
	reg := tool.NewRegistry()
	reg.Add(&tool.Tool{Name: "raw-fault", Description: "test: fails with a raw error",
		Run: func(ctx context.Context, call *tool.Call) (any, error) {
			call.Progress("working")
			return nil, errors.New(raw)
		}})
	reg.Add(&tool.Tool{Name: "kind-fault", Description: "test: fails with a tool error of kind internal",
		Run: func(ctx context.Context, call *tool.Call) (any, error) {
			call.Progress("working")
			return nil, &fault.Error{Kind: fault.Internal, Message: raw}
		}})
	var log syncBuffer
	srv := server.New(server.Config{Addr: "127.0.0.1:0", Tools: reg, Log: slog.New(slog.NewTextHandler(&log, nil))})
	ts := httptest.NewServer(srv.Handler())
	defer ts.Close()

	for _, name := range []string{"raw-fault", "kind-fault"} {
		for _, stream := range []bool{false, true} {
			t.Run(name+map[bool]string{false: "/json", true: "/ndjson"}[stream], func(t *testing.T) {
				hdr := []string{"Content-Type", "application/json"}
				if stream {
					hdr = append(hdr, "Accept", "application/x-ndjson")
				}
				resp, body := do(t, "POST", ts.URL+"/tools/"+name, `{}`, hdr...)
				wantStatus := http.StatusInternalServerError
				if stream {
					// The progress line started the stream: the error is in band.
					wantStatus = http.StatusOK
					lines := strings.Split(strings.TrimSpace(string(body)), "\n")
					body = []byte(lines[len(lines)-1])
				}
				var e struct {
					Event, Error string
					Kind         string `json:"error_kind"`
				}
				if err := json.Unmarshal(body, &e); err != nil {
					t.Fatalf("answer: got %s, want JSON: %v", body, err)
				}
				if resp.StatusCode != wantStatus || e.Kind != "internal" || (stream && e.Event != "error") {
					t.Fatalf("answer: got %d %s, want %d with an internal error", resp.StatusCode, body, wantStatus)
				}
				m := internalMsg.FindStringSubmatch(e.Error)
				if m == nil {
					t.Fatalf("message: got %q, want %q", e.Error, internalMsg)
				}
				id := m[1]
				if got := resp.Header.Get("X-Request-Id"); got != id {
					t.Errorf("X-Request-Id: got %q, want %q", got, id)
				}
				if strings.Contains(string(body), "secret detail") {
					t.Errorf("answer: got %s, want no raw error text", body)
				}
				waitLog(t, &log, "level=ERROR", "request_id="+id, "secret detail")
				waitLog(t, &log, `msg=request`, "request_id="+id, "path=/tools/"+name)
			})
		}
	}
}

// TestErrorKindMatchesStatus: every error the server answers names the
// kind its status stands for (401 unauthorized, 403 forbidden, 405
// method_not_allowed, 413 too_large, 507 insufficient_storage, ...),
// never validation beside a status that is not 400.
func TestErrorKindMatchesStatus(t *testing.T) {
	r := newRig(t, "s3cret")
	auth := []string{"Authorization", "Bearer s3cret"}
	for _, tc := range []struct {
		name, method, path, body string
		hdr                      []string
		status                   int
		kind                     fault.Kind
	}{
		{"no token", "GET", "/tools", "", nil, 401, fault.Unauthorized},
		{"foreign host", "GET", "/tools", "", append([]string{"Host", "evil.example"}, auth...), 403, fault.Forbidden},
		{"wrong method", "DELETE", "/tools", "", auth, 405, fault.MethodNotAllowed},
		{"unknown tool", "POST", "/tools/nope", "{}", auth, 404, fault.NotFound},
		{"bad arguments", "POST", "/tools/describe", "[1]", auth, 400, fault.Validation},
		{"upload not gzip", "POST", "/upload", "plain", auth, 400, fault.Validation},
		{"upload over the cap", "POST", "/upload", gz(t, 2<<20), auth, 413, fault.TooLarge},
		{"call over the cap", "POST", "/tools/describe", overCap(`{"device":"`, `"}`), auth, 413, fault.TooLarge},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp, body := do(t, tc.method, r.url+tc.path, tc.body, tc.hdr...)
			var e struct {
				Kind fault.Kind `json:"error_kind"`
			}
			_ = json.Unmarshal(body, &e)
			if resp.StatusCode != tc.status || e.Kind != tc.kind {
				t.Fatalf("got %d %s, want %d with error_kind %q", resp.StatusCode, body, tc.status, tc.kind)
			}
			if server.Status(e.Kind) != resp.StatusCode {
				t.Fatalf("kind %q stands for %d, answered %d", e.Kind, server.Status(e.Kind), resp.StatusCode)
			}
		})
	}
	// Over the pending total: 507.
	do(t, "POST", r.url+"/upload", gz(t, 700<<10), auth...)
	resp, body := do(t, "POST", r.url+"/upload", gz(t, 900<<10), auth...)
	if !strings.Contains(string(body), `"error_kind":"insufficient_storage"`) || resp.StatusCode != 507 {
		t.Fatalf("over the pending total: got %d %s, want 507 insufficient_storage", resp.StatusCode, body)
	}
}
