package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

func TestServeRefusesWildcardWithoutToken(t *testing.T) {
	t.Setenv("ARGENT_AUTH_TOKEN", "")
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), []string{"serve", "--addr", "0.0.0.0:0"}, &stdout, &stderr)
	if code != exitUsage || !strings.Contains(stderr.String(), "without a token") || !strings.Contains(stderr.String(), "--insecure") {
		t.Fatalf("got exit %d, stderr %q; want exit 2 explaining the token rule", code, stderr.String())
	}
}

func TestServeStopsOnCancel(t *testing.T) {
	t.Setenv("ARGENT_AUTH_TOKEN", "")
	ctx, cancel := context.WithCancel(context.Background())
	var stdout bytes.Buffer
	stderr := &syncBuffer{started: make(chan struct{})}
	done := make(chan int, 1)
	go func() { done <- run(ctx, []string{"serve", "--addr", "127.0.0.1:0"}, &stdout, stderr) }()
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
	var stdout, stderr bytes.Buffer
	if code := run(context.Background(), []string{"frobnicate"}, &stdout, &stderr); code != exitUsage {
		t.Fatalf("unknown command: exit %d, want 2", code)
	}
	stdout.Reset()
	if code := run(context.Background(), []string{"version"}, &stdout, &stderr); code != exitOK || !strings.HasPrefix(stdout.String(), "toolserver ") {
		t.Fatalf("version: exit %d, %q", code, stdout.String())
	}
}
