package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/toolserver/toolserver/device/cdprun"
	flowrun "github.com/toolserver/toolserver/flow/run"
	linkclient "github.com/toolserver/toolserver/link/client"
	"github.com/toolserver/toolserver/server"
)

// BenchmarkLinkedVsLocal runs one flow with 50 snapshot steps, whose
// baselines total about 10 MB, twice per iteration on the same warm
// device: in-process from the files, and through `serve` over loopback
// with the link client sending every baseline (256 KiB inline, the rest as
// uploads). It reports both and their ratio (docs/product.md,
// "Performance, measured in benchmarks": at most 5% more;
// docs/performance.md has the figures).
func BenchmarkLinkedVsLocal(b *testing.B) {
	pages := httptest.NewServer(http.FileServer(http.Dir("../../testdata/pages")))
	defer pages.Close()
	root, _ := filepath.EvalSymlinks(b.TempDir())
	dir := filepath.Join(root, ".argent", "flows")
	os.MkdirAll(dir, 0o755)
	var sb strings.Builder
	fmt.Fprintf(&sb, "steps:\n  - launch: %q\n", pages.URL+"/noise.html")
	for i := 1; i <= 50; i++ {
		fmt.Fprintf(&sb, "  - snapshot: s%02d\n", i)
	}
	os.WriteFile(filepath.Join(dir, "bench.yaml"), []byte(sb.String()), 0o644)

	a, err := newApp(appOptions{stderr: io.Discard})
	if err != nil {
		b.Fatal(err)
	}
	defer a.Close()
	srv := server.New(server.Config{Addr: "127.0.0.1:0", Tools: a.tools, Artifacts: a.artifacts, Uploads: a.uploads, TempDir: a.tmp})
	if err := srv.Listen(); err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go srv.Serve(ctx)

	const id = "chromium-cdp-1280x800"
	d, err := a.pool.Device(ctx, id)
	if err != nil {
		b.Fatal(err)
	}
	local := func(update bool) {
		f, _ := flowrun.Disk{}.Open(dir, "bench.yaml")
		rep, err := flowrun.Execute(ctx, flowrun.Options{Device: cdprun.Device{D: d}, Source: flowrun.Disk{}, UpdateBaselines: update}, flowrun.Entry{File: f, Name: "bench", StemFallback: "bench"})
		if err != nil || !rep.OK {
			b.Fatalf("local run: %v %+v", err, rep)
		}
	}
	local(true)
	var total int64
	ents, _ := os.ReadDir(filepath.Join(dir, "__baselines__", "bench"))
	for _, e := range ents {
		if st, err := e.Info(); err == nil {
			total += st.Size()
		}
	}
	client := linkclient.NewClient("http://"+srv.Addr(), "", nil)
	linked := func() {
		res, err := client.Call(ctx, "flow-execute", map[string]any{"name": "bench", "project_root": root, "device": id}, linkclient.CallOptions{})
		if err != nil || !strings.Contains(string(res), `"ok":true`) {
			b.Fatalf("linked run: %v %.300s", err, res)
		}
	}
	linked() // warm both paths
	var tl, tk time.Duration
	for b.Loop() {
		s := time.Now()
		local(false)
		tl += time.Since(s)
		s = time.Now()
		linked()
		tk += time.Since(s)
	}
	n := float64(b.N)
	b.ReportMetric(float64(total)/1e6, "baseline-MB")
	b.ReportMetric(tl.Seconds()*1000/n, "local-ms/op")
	b.ReportMetric(tk.Seconds()*1000/n, "linked-ms/op")
	b.ReportMetric(tk.Seconds()/tl.Seconds(), "linked/local")
}
