package main

import (
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestServeWildcardScreenshotDiff: serve on a wildcard bind wires the
// rule that tools read and write none of the server's files for a caller
// (tool.Registry.Remote).
func TestServeWildcardScreenshotDiff(t *testing.T) {
	t.Parallel()
	url := startServe(t, env{"ARGENT_AUTH_TOKEN": "remote-test-token"}, false, "--addr", "0.0.0.0:0")
	out := filepath.Join(t.TempDir(), "made")
	for _, body := range []string{
		`{"baselinePath":"/etc/passwd","currentPath":"/etc/passwd"}`,
		`{"baselinePath":"/etc/passwd","device":"chromium-cdp-800x600","outputDir":"` + out + `"}`,
	} {
		req, _ := http.NewRequest("POST", url+"/tools/screenshot-diff", strings.NewReader(body))
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
