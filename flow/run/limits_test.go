package run_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/toolserver/toolserver/flow"
	"github.com/toolserver/toolserver/flow/run"
)

// writeFanOut writes f1 … f5 under the project's flows: each of f1 … f4
// runs the next one eight times, f5 says one line, so a run of f1 is 8,777
// lines. A few hundred bytes; twice that passes MaxRunSteps.
func writeFanOut(p *project) {
	for i := 1; i <= 4; i++ {
		p.write(fmt.Sprintf(".argent/flows/f%d.yaml", i), "steps:\n"+strings.Repeat(fmt.Sprintf("  - run: f%d\n", i+1), 8))
	}
	p.write(".argent/flows/f5.yaml", "steps:\n  - echo: leaf\n")
}

// execute runs <flows>/<name>.yaml from the disk with opts, without a
// device unless opts has one (echo, wait, run: and tool: steps need none).
func (p *project) execute(ctx context.Context, name string, opts run.Options) (*flow.Report, error) {
	f, err := run.Disk{}.Open(p.flows(), name+".yaml")
	if err != nil {
		return nil, err
	}
	opts.Source = run.Disk{}
	return run.Execute(ctx, opts, run.Entry{File: f, Name: name, StemFallback: name})
}

// TestRunFanOutRefused: a run: fan-out over five fragments that would
// report 17,554 steps is refused before its first step, naming the step
// of the flow, the limit and the chain of fragments.
func TestRunFanOutRefused(t *testing.T) {
	t.Parallel()
	p := newProject(t)
	writeFanOut(p)
	p.write(".argent/flows/fan.yaml", "steps:\n  - run: f1\n  - run: f1\n")
	lines := 0
	rep, err := p.execute(context.Background(), "fan", run.Options{Progress: func(flow.StepReport) { lines++ }})
	if rep != nil || lines != 0 {
		t.Fatalf("got a report of %d steps and %d progress lines, want a refusal before the first step", len(rep.Steps), lines)
	}
	errs := flow.Errors(err)
	if len(errs) != 1 || !errors.Is(err, flow.ErrInvalid) {
		t.Fatalf("got %v, want one *flow.Error", err)
	}
	e := errs[0]
	if e.Problem != flow.ProblemSize || e.File != p.flows()+"/fan.yaml" || e.Step.String() != "2" || e.Line != 3 || e.Directive != flow.KindRun {
		t.Errorf("got %s problem, file %q, step %s, line %d, directive %q; want size, %s/fan.yaml, step 2, line 3, run", e.Problem, e.File, e.Step, e.Line, e.Directive, p.flows())
	}
	for _, want := range []string{"more than 10000 steps", "reached through fan → f1 → f2 → f3"} {
		if !strings.Contains(e.Msg, want) {
			t.Errorf("message: got %q, want it to contain %q", e.Msg, want)
		}
	}

	// A smaller fan-out runs to its end.
	p.write(".argent/flows/small.yaml", "steps:\n  - run: f2\n  - run: f2\n")
	rep, err = p.execute(context.Background(), "small", run.Options{})
	if err != nil || !rep.OK || len(rep.Steps) != 2*1097 {
		t.Fatalf("smaller fan-out: got %v, %d steps, want an ok run of %d", err, len(rep.Steps), 2*1097)
	}
}

// TestRunStepLimitAtRunTime: the runner's own bound holds when a fragment
// grows after the run was counted: the report ends with one error line at
// MaxRunSteps and nothing after it.
func TestRunStepLimitAtRunTime(t *testing.T) {
	t.Parallel()
	p := newProject(t)
	p.write(".argent/flows/grow.yaml", "steps:\n  - echo: start\n  - run: more\n")
	p.write(".argent/flows/more.yaml", "steps:\n  - echo: small for now\n")
	lines := 0
	rep, err := p.execute(context.Background(), "grow", run.Options{Progress: func(s flow.StepReport) {
		if lines++; s.Message == "start" {
			// The run was counted already; the fragment it runs next
			// now holds as many steps as a file may, two lines too many
			// for this run.
			more := "steps:\n" + strings.Repeat("  - echo: more\n", flow.MaxRunSteps)
			if err := os.WriteFile(p.flows()+"/more.yaml", []byte(more), 0o644); err != nil {
				t.Error(err)
			}
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Steps) != flow.MaxRunSteps+1 || lines != len(rep.Steps) {
		t.Fatalf("got %d steps and %d progress lines, want %d of each", len(rep.Steps), lines, flow.MaxRunSteps+1)
	}
	// The last line is an echo's, the 9,999th of more.yaml: it says why
	// the run ended where an echo line shows it, and counts as an error.
	last := rep.Steps[flow.MaxRunSteps]
	if last.Status != flow.StatusError || last.Line != flow.MaxRunSteps || !errors.Is(last.Err, flow.ErrTooManySteps) ||
		!strings.Contains(last.Reason, "reached its limit of 10000 steps") || last.Message != last.Reason {
		t.Errorf("last line: got %s at line %d, reason %q, message %q (%v); want the step-limit error", last.Status, last.Line, last.Reason, last.Message, last.Err)
	}
	if rep.OK || rep.Errored != 1 || rep.Passed != 1 {
		t.Errorf("got ok %v, %d passed, %d errored; want a failed run with the run: line passed and one error", rep.OK, rep.Passed, rep.Errored)
	}
}

// TestRunCancelledEndsWithOneLine: a run whose caller went away (its
// context cancelled) reports the step it cut short, or the first that did
// not start, and no line for each step after it.
func TestRunCancelledEndsWithOneLine(t *testing.T) {
	t.Parallel()
	p := newProject(t)
	writeFanOut(p)
	rest := strings.Repeat("  - echo: after\n", 50) + "  - when: { platform: chromium }\n    steps:\n      - echo: inside\n  - run: f4\n"
	p.write(".argent/flows/during.yaml", "steps:\n  - echo: start\n  - tool: hold\n"+rest)
	p.write(".argent/flows/between.yaml", "steps:\n  - echo: start\n  - echo: next\n"+rest)
	for _, tc := range []struct{ flow, want string }{
		// The caller goes away while the tool: step runs.
		{"during", "echo:pass tool:skip"},
		// The caller goes away between two steps.
		{"between", "echo:pass echo:skip"},
	} {
		t.Run(tc.flow, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			progress := 0
			opts := run.Options{
				Progress: func(s flow.StepReport) {
					if progress++; tc.flow == "between" && s.Message == "start" {
						cancel()
					}
				},
				// hold is a tool that runs until its caller goes away.
				Tools: func(ctx context.Context, name string, _ map[string]any) (any, error) {
					cancel()
					<-ctx.Done()
					return nil, ctx.Err()
				},
			}
			rep, err := p.execute(ctx, tc.flow, opts)
			if err != nil {
				t.Fatal(err)
			}
			if got := lines(rep); got != tc.want || progress != len(rep.Steps) {
				t.Fatalf("got %s (%d progress lines), want %s", got, progress, tc.want)
			}
			if last := rep.Steps[len(rep.Steps)-1]; last.Reason != "run aborted" || !rep.Aborted || rep.OK {
				t.Fatalf("got reason %q, aborted %v, ok %v; want run aborted, aborted, not ok", last.Reason, rep.Aborted, rep.OK)
			}
		})
	}
}
