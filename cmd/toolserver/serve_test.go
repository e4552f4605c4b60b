package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
)

func TestServeRefusesWildcardWithoutToken(t *testing.T) {
	t.Parallel()
	code, _, stderr := runCLI(t, "serve", "--addr", "0.0.0.0:0")
	if code != exitUsage || !strings.Contains(stderr, "without a token") || !strings.Contains(stderr, "--insecure") {
		t.Fatalf("got exit %d, stderr %q; want exit 2 explaining the token rule", code, stderr)
	}
}

func TestServeStopsOnCancel(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	var stdout bytes.Buffer
	stderr := &syncBuffer{started: make(chan struct{})}
	done := make(chan int, 1)
	s := testStreams(t, nil, &stdout, stderr)
	go func() { done <- run(ctx, []string{"serve", "--addr", "127.0.0.1:0"}, s) }()
	<-stderr.started
	cancel()
	if code := <-done; code != exitOK {
		t.Fatalf("got exit %d after cancel, want 0; stderr %q", code, stderr.String())
	}
	if !strings.Contains(stderr.String(), "listening on http://127.0.0.1:") {
		t.Fatalf("stderr %q does not say where it listens", stderr.String())
	}
}

func TestUnknownCommandAndVersion(t *testing.T) {
	t.Parallel()
	if code, _, _ := runCLI(t, "frobnicate"); code != exitUsage {
		t.Fatalf("unknown command: exit %d, want 2", code)
	}
	if code, stdout, _ := runCLI(t, "version"); code != exitOK || !strings.HasPrefix(stdout, "toolserver ") {
		t.Fatalf("version: exit %d, %q", code, stdout)
	}
}

// --max-streams caps the /v1 event streams: with 1, a second stream while
// the first is open gets 503 with Retry-After; 0 is a usage error.
func TestServeMaxStreams(t *testing.T) {
	t.Parallel()
	if code, _, stderr := runCLI(t, "serve", "--max-streams", "0"); code != exitUsage || !strings.Contains(stderr, "--max-streams 0") {
		t.Fatalf("--max-streams 0: exit %d, stderr %q; want exit 2 naming the flag", code, stderr)
	}
	base := startServe(t, nil, false, "--state-dir", t.TempDir(), "--max-streams", "1")
	first, err := http.Get(base + "/v1/events")
	if err != nil {
		t.Fatal(err)
	}
	defer first.Body.Close()
	if first.StatusCode != http.StatusOK {
		t.Fatalf("the first stream: status %d", first.StatusCode)
	}
	second, err := http.Get(base + "/v1/events")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(second.Body)
	second.Body.Close()
	if second.StatusCode != http.StatusServiceUnavailable || second.Header.Get("Retry-After") == "" || !strings.Contains(string(body), "1 event streams open") {
		t.Fatalf("a second stream past --max-streams 1: status %d, Retry-After %q, body %s; want 503 with Retry-After", second.StatusCode, second.Header.Get("Retry-After"), body)
	}
}
