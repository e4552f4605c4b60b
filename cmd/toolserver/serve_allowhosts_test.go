package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"regexp"
	"strings"
	"testing"
)

// TestServeAllowHosts: --allow-hosts reaches the devices of the server: a
// URL of a host off the list answers 400 naming the host (before any
// browser starts), and a list that is not one is a usage error.
func TestServeAllowHosts(t *testing.T) {
	t.Parallel()
	t.Run("bad entry", func(t *testing.T) {
		t.Parallel()
		var stdout, stderr bytes.Buffer
		code := run(t.Context(), []string{"serve", "--addr", "127.0.0.1:0", "--allow-hosts", "example.com,http://evil.example/"}, &stdout, &stderr)
		if code != exitUsage || !strings.Contains(stderr.String(), "--allow-hosts") || !strings.Contains(stderr.String(), `"http://evil.example/"`) {
			t.Fatalf("got exit %d, stderr %q; want exit 2 naming the entry", code, stderr.String())
		}
	})
	t.Run("refused host", func(t *testing.T) {
		t.Parallel()
		ctx, cancel := context.WithCancel(t.Context())
		var stdout bytes.Buffer
		stderr := &syncBuffer{started: make(chan struct{})}
		done := make(chan int, 1)
		go func() {
			done <- run(ctx, []string{"serve", "--addr", "127.0.0.1:0", "--allow-hosts", "127.0.0.1"}, &stdout, stderr)
		}()
		defer func() {
			cancel()
			if code := <-done; code != exitOK {
				t.Errorf("serve exited %d; stderr %q", code, stderr.String())
			}
		}()
		select {
		case <-stderr.started:
		case code := <-done:
			done <- code
			t.Fatalf("serve exited %d before it listened; stderr %q", code, stderr.String())
		}
		addr := regexp.MustCompile(`listening on (http://[0-9.:]+)`).FindStringSubmatch(stderr.String())
		if addr == nil || !strings.Contains(stderr.String(), "pages only from 127.0.0.1") {
			t.Fatalf("stderr %q says neither where it listens nor the allowed hosts", stderr.String())
		}
		body := `{"device":"chromium-cdp-800x600","url":"http://localhost:1/"}`
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, addr[1]+"/tools/open-url", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		if token := os.Getenv("ARGENT_AUTH_TOKEN"); token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		raw, _ := io.ReadAll(resp.Body)
		var got struct {
			Error, Field string
			Kind         string `json:"error_kind"`
		}
		if err := json.Unmarshal(raw, &got); err != nil {
			t.Fatalf("answer %s: %v", raw, err)
		}
		if resp.StatusCode != http.StatusBadRequest || got.Kind != "validation" || got.Field != "url" || !strings.Contains(got.Error, "localhost is not one of the hosts") {
			t.Fatalf("got %d %s; want 400 validation on url naming localhost", resp.StatusCode, raw)
		}
	})
}
