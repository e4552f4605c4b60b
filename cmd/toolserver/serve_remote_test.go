package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestServeWildcardScreenshotDiff: serve on a wildcard bind wires the
// rule that screenshot-diff reads and writes none of the server's files
// for a caller (snapshottool.Tools.Remote).
func TestServeWildcardScreenshotDiff(t *testing.T) {
	t.Setenv("ARGENT_AUTH_TOKEN", "remote-test-token")
	ctx, cancel := context.WithCancel(context.Background())
	var stdout bytes.Buffer
	stderr := &syncBuffer{started: make(chan struct{})}
	done := make(chan int, 1)
	go func() { done <- run(ctx, []string{"serve", "--addr", "0.0.0.0:0"}, &stdout, stderr) }()
	t.Cleanup(func() {
		cancel()
		if code := <-done; code != exitOK {
			t.Errorf("serve: exit %d, stderr %q", code, stderr.String())
		}
	})
	<-stderr.started
	m := regexp.MustCompile(`listening on http://\S+:(\d+) `).FindStringSubmatch(stderr.String())
	if m == nil {
		t.Fatalf("stderr %q does not say where it listens", stderr.String())
	}
	out := filepath.Join(t.TempDir(), "made")
	for _, body := range []string{
		`{"baselinePath":"/etc/passwd","currentPath":"/etc/passwd"}`,
		`{"baselinePath":"/etc/passwd","device":"chromium-cdp-800x600","outputDir":"` + out + `"}`,
	} {
		req, _ := http.NewRequest("POST", "http://127.0.0.1:"+m[1]+"/tools/screenshot-diff", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer remote-test-token")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		answer, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 400 || !strings.Contains(string(answer), "answers other machines") || strings.Contains(string(answer), "root:") {
			t.Fatalf("%s: got %d %s, want a 400 that reads no file of the server", body, resp.StatusCode, answer)
		}
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Fatalf("outputDir: got %v, want it never made", err)
	}
}
