package main

import (
	"encoding/json"
	"io"
	"net/http"
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
		code, _, stderr := runCLI(t, "serve", "--addr", "127.0.0.1:0", "--allow-hosts", "example.com,http://evil.example/")
		if code != exitUsage || !strings.Contains(stderr, "--allow-hosts") || !strings.Contains(stderr, `"http://evil.example/"`) {
			t.Fatalf("got exit %d, stderr %q; want exit 2 naming the entry", code, stderr)
		}
	})
	t.Run("refused host", func(t *testing.T) {
		t.Parallel()
		// A browser of its own: the shared one's pool has no host list.
		url := startServe(t, nil, true, "--allow-hosts", "127.0.0.1")
		body := `{"device":"chromium-cdp-800x600","url":"http://localhost:1/"}`
		req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, url+"/tools/open-url", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
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
