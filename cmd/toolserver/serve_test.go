package main

import (
	"bytes"
	"context"
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
