package main

import (
	"strings"
	"testing"
)

// TestServeQueueFlag: --queue takes 0 or more; a negative one is a usage
// error that names it.
func TestServeQueueFlag(t *testing.T) {
	t.Parallel()
	code, _, stderr := runCLI(t, "serve", "--addr", "127.0.0.1:0", "--queue", "-1")
	if code != exitUsage || !strings.Contains(stderr, "--queue -1") {
		t.Fatalf("serve --queue -1: got exit %d, stderr %q; want exit 2 naming --queue", code, stderr)
	}
	_, stdout, _ := runCLI(t, "serve", "--help")
	if !strings.Contains(stdout, "--queue") || !strings.Contains(stdout, "Retry-After") {
		t.Errorf("serve --help: got %q, want --queue and its 503 with Retry-After", stdout)
	}
}
