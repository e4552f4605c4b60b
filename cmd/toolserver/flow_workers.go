package main

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/toolserver/toolserver/flow"
	flowrun "github.com/toolserver/toolserver/flow/run"
)

// defaultMaxDevices is the in-process pool's device cap of a flow run.
const defaultMaxDevices = 4

// maxWorkers bounds --workers: each worker is a page of Chromium.
const maxWorkers = 64

// flowResult is what running one target gave.
type flowResult struct {
	ran        bool
	rep        *flow.Report
	notWritten int
	plans      []flowrun.Plan
	err        error
}

// runTargets runs the targets, workers at a time, and returns their
// results in the targets' order. With one worker each flow's lines go to
// out as they happen; with several, each flow prints to a buffer of its
// own, which goes to out whole when the flow ends, so two flows' lines
// never interleave.
func runTargets(ctx context.Context, targets []flowTarget, workers int, out *renderer, run func(ctx context.Context, t flowTarget, worker int, out *renderer) flowResult) []flowResult {
	results := make([]flowResult, len(targets))
	// A usage error (a bad --device) stops the flows not yet started; a
	// flow whose machinery failed does not stop the others (a replica
	// behind a load balancer died: the others may still run them).
	stops := func(err error) bool {
		return isUsage(err)
	}
	if workers <= 1 {
		for i, t := range targets {
			if ctx.Err() != nil {
				break
			}
			results[i] = run(ctx, t, 0, out)
			if stops(results[i].err) {
				break
			}
		}
		return results
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	next := make(chan int)
	var mu sync.Mutex // out, while a flow's block is printed
	var wg sync.WaitGroup
	for w := range min(workers, len(targets)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				var stdout, stderr bytes.Buffer
				mine := newRenderer(&stdout, &stderr, out.asJSON)
				mine.dryRun = out.dryRun
				results[i] = run(ctx, targets[i], w, mine)
				mu.Lock()
				out.stdout.Write(stdout.Bytes())
				out.stderr.Write(stderr.Bytes())
				mu.Unlock()
				if stops(results[i].err) {
					cancel()
				}
			}
		}()
	}
	for i := range targets {
		if ctx.Err() != nil {
			break
		}
		select {
		case next <- i:
		case <-ctx.Done():
		}
	}
	close(next)
	wg.Wait()
	return results
}

// shardFlag is --shard i/n.
type shardFlag struct{ i, n int }

func (s *shardFlag) String() string {
	if s.n == 0 {
		return ""
	}
	return fmt.Sprintf("%d/%d", s.i, s.n)
}

func (s *shardFlag) Set(v string) error {
	a, b, ok := strings.Cut(v, "/")
	i, err1 := strconv.Atoi(a)
	n, err2 := strconv.Atoi(b)
	if !ok || err1 != nil || err2 != nil || n < 1 || i < 1 || i > n {
		return fmt.Errorf("want i/n with 1 ≤ i ≤ n, e.g. 2/4, got %q", v)
	}
	s.i, s.n = i, n
	return nil
}

func (s *shardFlag) Type() string { return "i/n" }

// of returns the shard's part of the targets, sorted by name then path:
// Playwright's split, n contiguous parts whose sizes differ by at most
// one, the larger ones first, so n jobs cover every flow exactly once.
func (s *shardFlag) of(targets []flowTarget) []flowTarget {
	sorted := slices.Clone(targets)
	slices.SortStableFunc(sorted, func(a, b flowTarget) int {
		if c := strings.Compare(a.name, b.name); c != 0 {
			return c
		}
		return strings.Compare(a.path, b.path)
	})
	size := len(sorted) / s.n
	extra := len(sorted) - size*s.n
	k := s.i - 1
	from := size*k + min(extra, k)
	to := from + size
	if k < extra {
		to++
	}
	return sorted[from:to]
}
