package suite

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/toolserver/toolserver/fault"
	"github.com/toolserver/toolserver/flow"
	flowrun "github.com/toolserver/toolserver/flow/run"
)

func targets(n int) []Target {
	var out []Target
	for i := range n {
		out = append(out, Target{Name: fmt.Sprintf("f%d", i)})
	}
	return out
}

// TestRunOrder: results come back in the targets' order, whatever the
// workers; each worker number is below workers, and several run at once.
func TestRunOrder(t *testing.T) {
	for _, workers := range []int{1, 3, 20} {
		var mu sync.Mutex
		seen := map[int]bool{}
		var running, most atomic.Int32
		ts := targets(9)
		res := Run(context.Background(), ts, workers, func(ctx context.Context, tg Target, worker int) Result {
			n := running.Add(1)
			defer running.Add(-1)
			for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
			}
			mu.Lock()
			seen[worker] = true
			mu.Unlock()
			return Result{Report: &flow.Report{Flow: tg.Name}}
		})
		for i, r := range res {
			if !r.Ran || r.Report.Flow != ts[i].Name {
				t.Errorf("workers %d: result %d: got %+v", workers, i, r)
			}
		}
		for w := range seen {
			if w < 0 || w >= max(workers, 1) {
				t.Errorf("workers %d: worker %d", workers, w)
			}
		}
		if workers == 1 && most.Load() != 1 {
			t.Errorf("one worker: %d ran at once", most.Load())
		}
	}
}

// TestRunStop: a result that stops the run leaves the targets not yet
// started, with one worker and with several; an error that does not stop
// it does not.
func TestRunStop(t *testing.T) {
	for _, workers := range []int{1, 2} {
		var started atomic.Int32
		res := Run(context.Background(), targets(50), workers, func(ctx context.Context, tg Target, worker int) Result {
			started.Add(1)
			switch tg.Name {
			case "f1":
				return Result{Err: errors.New("machinery"), Report: nil}
			case "f3":
				return Result{Err: errors.New("bad --device"), Stop: true}
			}
			return Result{Report: &flow.Report{Flow: tg.Name}}
		})
		if n := started.Load(); n < 4 || n > 4+int32(workers) {
			t.Errorf("workers %d: %d started, want 4 (and at most the workers beyond)", workers, n)
		}
		if res[49].Ran {
			t.Errorf("workers %d: the last target ran", workers)
		}
		_, err := Collect(targets(50), res, "d", false)
		if err == nil || err.Error() != "bad --device" {
			t.Errorf("workers %d: Collect: got %v, want the stopping error", workers, err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if res := Run(ctx, targets(3), 1, func(context.Context, Target, int) Result { return Result{} }); res[0].Ran {
		t.Error("an ended context: a target ran")
	}
}

// TestCollect: a rejected flow stands as a report naming it, the first
// broken flow is the run's, a baseline not written fails the run, and a
// dry run lists the plans of each flow.
func TestCollect(t *testing.T) {
	ts := []Target{{Name: "a"}, {Name: "b", Device: "dev-b"}, {Name: "c"}, {Name: "d"}, {Name: "e"}}
	plan := flowrun.Plan{Action: "write", Path: "p.png", Bytes: 3}
	res := []Result{
		{Ran: true, Report: &flow.Report{Flow: "a", OK: true}, Plans: []flowrun.Plan{plan}},
		{Ran: true, Err: errors.New("refused")},
		{Ran: true, Err: fault.Infrastructure(errors.New("gone"))},
		{Ran: true, Report: &flow.Report{Flow: "d"}, NotWritten: 1},
		{},
	}
	o, err := Collect(ts, res, "dev", true)
	if err != nil {
		t.Fatal(err)
	}
	if got := Reports(o.Reports); len(got) != 4 || got[0].Flow != "a" || got[1].Flow != "b" || got[1].Device != "dev-b" || got[2].Device != "dev" {
		t.Errorf("reports: got %+v", got)
	}
	if w := o.Reports[1].Warnings; !slices.Equal(w, []string{"not run: refused"}) || o.Reports[1].Errored != 1 {
		t.Errorf("the rejected flow: got %+v", o.Reports[1].Report)
	}
	if o.Broken == nil || o.Broken.Error() != "flow c: gone" || !fault.IsInfrastructure(o.Broken) {
		t.Errorf("broken: got %v", o.Broken)
	}
	if o.Failure == nil || o.Failure.Error() != "a baseline was not written" {
		t.Errorf("failure: got %v", o.Failure)
	}
	if !slices.Equal(o.Plans, []flowrun.Plan{plan}) || o.Reports[3].WouldWrite == nil || len(*o.Reports[3].WouldWrite) != 0 {
		t.Errorf("plans: got %v, and %v for a flow without", o.Plans, o.Reports[3].WouldWrite)
	}
	o, _ = Collect(ts[:1], res[:1], "dev", false)
	if o.Reports[0].WouldWrite != nil || o.Plans != nil {
		t.Errorf("not a dry run: got plans %v", o.Plans)
	}
}

// TestSpread: flows go to the servers in turn; one refused before it ran
// goes to the next, until each server has had it once; any other error
// stops there.
func TestSpread(t *testing.T) {
	refused := errors.New("draining")
	isRefused := func(err error) bool { return errors.Is(err, refused) }
	s := NewSpread(3)
	var got []int
	for range 4 {
		_ = s.Do(context.Background(), func(at int) error { got = append(got, at); return nil }, isRefused, nil)
	}
	if !slices.Equal(got, []int{0, 1, 2, 0}) {
		t.Errorf("in turn: got %v", got)
	}
	var moves [][2]int
	got = nil
	err := s.Do(context.Background(), func(at int) error { got = append(got, at); return refused }, isRefused,
		func(from, to int, err error) { moves = append(moves, [2]int{from, to}) })
	if !errors.Is(err, refused) || !slices.Equal(got, []int{1, 2, 0}) || len(moves) != 2 {
		t.Errorf("all refuse: got %v, tried %v, moves %v", err, got, moves)
	}
	got = nil
	other := errors.New("may have run")
	if err := s.Do(context.Background(), func(at int) error { got = append(got, at); return other }, isRefused, nil); err != other || len(got) != 1 {
		t.Errorf("an error after the call: got %v, tried %v", err, got)
	}
}

// TestArtifactDir: a failed snapshot's image goes to DIR/<flow>/<name>.
func TestArtifactDir(t *testing.T) {
	dir := t.TempDir()
	a, err := ArtifactDir(dir).Put("sub/checkout", "cart-diff.png", "image/png", []byte("png"))
	if err != nil {
		t.Fatal(err)
	}
	want := filepath.Join(dir, "sub", "checkout", "cart-diff.png")
	if got, _ := os.ReadFile(want); a.Path != want || string(got) != "png" {
		t.Errorf("got %s holding %q, want %s", a.Path, got, want)
	}
}

// TestUnused: only a recursive run of the project's flows directory,
// not a shard, tells the baselines no flow reads.
func TestUnused(t *testing.T) {
	root := tree(t, map[string]string{
		".argent/flows/a.yaml":                                 e2e,
		".argent/flows/__baselines__/a/gone__chromium-4x4.png": "png",
	})
	flows := filepath.Join(root, ".argent", "flows")
	if got := Unused(root, flows, true, Shard{}); len(got) != 1 || !strings.HasSuffix(got[0], "gone__chromium-4x4.png") {
		t.Errorf("a run of all the flows: got %v, want the unread baseline", got)
	}
	for _, c := range []struct {
		arg       string
		recursive bool
		shard     Shard
	}{{flows, false, Shard{}}, {flows, true, Shard{1, 2}}, {filepath.Join(flows, "a.yaml"), true, Shard{}}} {
		if got := Unused(root, c.arg, c.recursive, c.shard); got != nil {
			t.Errorf("%+v: got %v, want none told", c, got)
		}
	}
}
