package server_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolserver/toolserver/control"
	"github.com/toolserver/toolserver/device/cdp/cdptest"
	"github.com/toolserver/toolserver/flow"
	"github.com/toolserver/toolserver/runs"
	"github.com/toolserver/toolserver/server"
	"github.com/toolserver/toolserver/store"
	"github.com/toolserver/toolserver/tool"
	"github.com/toolserver/toolserver/tool/flowtool"
)

// The load of BenchmarkRunUnderFollowers (docs/performance.md, "Runs
// under followers").
const (
	benchStoredRuns   = 100
	benchListStreams  = 50
	benchRunFollowers = 200
	benchEchoSteps    = 300
)

// BenchmarkRunUnderFollowers times a 300-step echo flow recorded as a
// run (flow-execute into the recorder POST /v1/runs would make for it),
// in a store of 100 runs, with nobody watching and with 50 followers of
// GET /v1/events (open dashboards) and 200 of the run's own event stream,
// every one of them connected and past its first frame before the run's
// first step. Each iteration runs both, in turns; it reports each one's
// mean and their ratio (the target: at most 1.5×).
func BenchmarkRunUnderFollowers(b *testing.B) {
	dir := b.TempDir()
	arts, err := store.NewArtifacts(filepath.Join(dir, "artifacts"), 100, 1<<30)
	if err != nil {
		b.Fatal(err)
	}
	st, err := runs.Open(filepath.Join(dir, "state"), 0)
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	ctx := context.Background()
	for i := range benchStoredRuns {
		rec, err := st.Start(ctx, runs.Begin{Flow: fmt.Sprintf("stored-%d", i), Source: "tools"})
		if err != nil {
			b.Fatal(err)
		}
		rec.Step(flow.StepReport{Index: 0, Kind: "echo", Flow: "stored", Status: flow.StatusPass})
		rec.End(&flow.Report{OK: true, Passed: 1}, nil, nil)
	}
	reg := tool.NewRegistry()
	(&flowtool.Tools{Pool: cdptest.Pool(b), Artifacts: arts, TempDir: dir}).Register(reg)
	plane := control.New(control.Config{Runs: st, Tools: reg, TempDir: dir})
	hs := httptest.NewServer(server.New(server.Config{Addr: "127.0.0.1:0", Tools: reg, Artifacts: arts, TempDir: dir, Runs: st, Plane: plane}).Handler())
	defer hs.Close()
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: -1}}
	defer client.CloseIdleConnections()

	root := filepath.Join(dir, "project")
	os.MkdirAll(filepath.Join(root, ".argent", "flows"), 0o755)
	var sb strings.Builder
	sb.WriteString("steps:\n")
	for i := range benchEchoSteps {
		fmt.Fprintf(&sb, "  - echo: step %d\n", i)
	}
	os.WriteFile(filepath.Join(root, ".argent", "flows", "echo.yaml"), []byte(sb.String()), 0o644)
	args := fmt.Sprintf(`{"name":"echo","project_root":%q}`, root)

	// A run of the plane: its followers join as it starts, and it is
	// timed to its end.
	run := func(followed bool) time.Duration {
		// The set-up's garbage (250 connections' buffers) is collected
		// before the clock starts, for both kinds of run alike.
		runtime.GC()
		start := time.Now()
		started, err := plane.Start(ctx, runs.StartRequest{ToolArgs: json.RawMessage(args)})
		if err != nil {
			b.Fatal(err)
		}
		f := startFollowers(b, client, hs.URL, started.Run, followed)
		plane.Wait()
		d := time.Since(start)
		if r, err := st.Run(ctx, started.Run); err != nil || r.Outcome != runs.Passed || r.StepCount != benchEchoSteps {
			b.Fatalf("the echo flow: %+v %v, want %d steps passed", r, err, benchEchoSteps)
		}
		f.stop(b)
		return d
	}
	var quiet, loaded time.Duration
	n := 0
	for b.Loop() {
		if n%2 == 0 {
			quiet += run(false)
			loaded += run(true)
		} else {
			loaded += run(true)
			quiet += run(false)
		}
		n++
	}
	b.ReportMetric(float64(quiet.Microseconds())/1000/float64(n), "quiet-ms/run")
	b.ReportMetric(float64(loaded.Microseconds())/1000/float64(n), "followed-ms/run")
	b.ReportMetric(float64(loaded)/float64(quiet), "ratio")
}

// followers are the streams open on a run: the run's own, which read to
// its end frame, and the run list's, which read until stopped.
type followers struct {
	cancel context.CancelFunc
	runs   sync.WaitGroup
	lists  sync.WaitGroup
	errs   chan error
}

// startFollowers opens the streams of one run (none unless followed) and
// returns once each has read its first frame.
func startFollowers(b *testing.B, client *http.Client, base, id string, followed bool) *followers {
	b.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	f := &followers{cancel: cancel, errs: make(chan error, benchRunFollowers+benchListStreams)}
	if !followed {
		return f
	}
	var ready sync.WaitGroup
	follow := func(wg *sync.WaitGroup, path string, toEnd bool) {
		ready.Add(1)
		wg.Add(1)
		go func() {
			defer wg.Done()
			first := true
			signal := func() {
				if first {
					first = false
					ready.Done()
				}
			}
			defer signal()
			req, _ := http.NewRequestWithContext(ctx, "GET", base+path, nil)
			resp, err := client.Do(req)
			if err != nil {
				f.errs <- err
				return
			}
			defer resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				f.errs <- fmt.Errorf("GET %s: %s", path, resp.Status)
				return
			}
			br := bufio.NewReader(resp.Body)
			for {
				line, err := br.ReadSlice('\n')
				if err != nil && err != bufio.ErrBufferFull {
					if toEnd && ctx.Err() == nil {
						f.errs <- fmt.Errorf("GET %s ended before its end frame: %v", path, err)
					}
					return
				}
				if len(line) == 1 {
					signal() // a frame ended
				}
				if toEnd && string(line) == "event: end\n" {
					return
				}
			}
		}()
	}
	for range benchListStreams {
		follow(&f.lists, "/v1/events", false)
	}
	for range benchRunFollowers {
		follow(&f.runs, "/v1/runs/"+id+"/events", true)
	}
	ready.Wait()
	return f
}

// stop waits for the run's followers to read its end frame, then closes
// the list's.
func (f *followers) stop(b *testing.B) {
	b.Helper()
	f.runs.Wait()
	f.cancel()
	f.lists.Wait()
	close(f.errs)
	for err := range f.errs {
		b.Fatal(err)
	}
}
