package client_test

import (
	"crypto/rand"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/toolserver/toolserver/link/client"
)

// BenchmarkCall50Baselines measures what the client adds to a linked run
// that compares 50 baselines of 200 KiB (about 10 MB, docs/product.md's case):
// collecting the members, reading the files, uploading all but the
// first 256 KiB to a loopback server, and the call itself.
func BenchmarkCall50Baselines(b *testing.B) {
	f := &fixture{t: b}
	f.root = b.TempDir()
	f.proj = filepath.Join(f.root, "proj")
	f.flows = filepath.Join(f.proj, ".argent", "flows")
	body := "steps:\n"
	const n, size = 50, 200 << 10
	dir := filepath.Join(f.flows, "__baselines__", "main")
	buf := make([]byte, size)
	for i := 0; i < n; i++ {
		body += fmt.Sprintf("  - snapshot: s%d\n", i)
		rand.Read(buf)
		f.putBytes(filepath.Join(dir, fmt.Sprintf("s%d__chromium-1280x800.png", i)), buf)
	}
	f.put("main.yaml", body)
	s := newStub(b)
	s.Forget = true
	c := s.Client("")
	args := map[string]any{"flow_path": f.abs("main.yaml"), "project_root": f.proj, "device": "chromium-cdp-1280x800"}
	b.SetBytes(n * size)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if _, err := c.Call(b.Context(), "flow-execute", args, client.CallOptions{}); err != nil {
			b.Fatal(err)
		}
	}
}
