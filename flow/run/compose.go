package run

import (
	"context"
	"fmt"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/toolserver/toolserver/flow"
	"github.com/toolserver/toolserver/snapshot"
	"github.com/toolserver/toolserver/wire"
)

// baselineDir is the link protocol's rule (docs/link-protocol.md,
// "Baselines"): <dir of canonical>/__baselines__/<stem>,
// the fallback stem when the canonical's is not a valid flow name.
func baselineDir(canonical, fallback string) string {
	return snapshot.BaselineDir(canonical, fallback)
}

// displayFor names a fragment in the report: its file's stem, or the
// target as written when that stem is the root flow's own name, so a
// fragment's lines never carry the root's name.
func (r *Runner) displayFor(d *flow.Run) string {
	stem := strings.TrimSuffix(path.Base(d.File()), ".yaml")
	if stem != r.rep.Flow {
		return stem
	}
	t := strings.TrimSuffix(d.Target, ".yaml")
	if !strings.Contains(t, "/") {
		return "./" + t
	}
	return t
}

// enter checks the cycle guard and the depth limit for a file about to be
// run as the next level; both count run: fragments and nested flows.
func (r *Runner) enter(canonical, display string) string {
	return enterCheck(r.stack, r.displays, canonical, display)
}

// enterCheck is enter for the files of stack (canonical paths, root
// first) and their displays.
func enterCheck(stack, displays []string, canonical, display string) string {
	if slices.Contains(stack, canonical) {
		return "cyclic flow reference: " + strings.Join(append(slices.Clone(displays), display), " → ")
	}
	// The flow the call names is level 0; level wire.MaxDepth is the
	// deepest that runs.
	if len(stack) > wire.MaxDepth {
		return "max run depth exceeded"
	}
	return ""
}

// runFragment runs a run: step: its file resolved beside the real file
// that names it, then its steps inline, one level deeper.
func (r *Runner) runFragment(ctx context.Context, fr *frame, d *flow.Run, sr flow.StepReport, depth int) {
	start := time.Now()
	target := d.File()
	done := func(status, reason string) {
		sr.Status, sr.Reason, sr.DurationMs = status, reason, ms(time.Since(start))
		r.emit(sr)
	}
	f, err := r.opts.Source.Open(fr.file.Dir(), target)
	if err != nil {
		done(flow.StatusError, fmt.Sprintf("could not load fragment %q: %v", target, err))
		return
	}
	if msg := r.enter(f.Canonical, sr.Flow); msg != "" {
		done(flow.StatusError, msg)
		return
	}
	if f.Spelling.State == wire.SpellCaseFolded {
		done(flow.StatusError, misCased(target, f.Spelling))
		return
	}
	if f.Err != nil {
		done(flow.StatusError, fmt.Sprintf("could not load fragment %q: %v", target, openError(f)))
		return
	}
	fl, err := r.parse(f)
	if err != nil {
		done(flow.StatusError, fmt.Sprintf("could not load fragment %q: %v", target, err))
		return
	}
	done(flow.StatusPass, "")
	r.runFile(ctx, &frame{file: f, flow: fl, display: sr.Flow, depth: depth + 1, scope: fr.scope})
}

// misCased is the message of a run: target whose directory lists it with
// another case.
func misCased(target string, sp wire.Spelling) string {
	base := path.Base(target)
	prefix := strings.TrimSuffix(target, base)
	recovery := fmt.Sprintf("rename %q to %q to compose it — flow files must be lowercase .yaml", sp.Actual, base)
	if sp.Addressable != nil && *sp.Addressable {
		recovery = fmt.Sprintf("reference it as %q", prefix+sp.Actual)
	}
	return fmt.Sprintf("mis-cased fragment reference %q: no directory entry is named %q (this filesystem matched it case-insensitively to %q), so the fragment name keying its step reports is one nothing on disk carries and a case-sensitive checkout could not find the file at all — %s", target, base, sp.Actual, recovery)
}

// nested runs a tool: flow-execute step as a run of its own: its own
// baselines beside its canonical keyed by the step's name, its steps in
// the same report one level deeper.
func (r *Runner) nested(ctx context.Context, fr *frame, s *flow.Step, d *flow.Tool, sr flow.StepReport, depth int) {
	start := time.Now()
	done := func(status, reason string) {
		sr.Status, sr.Reason, sr.DurationMs = status, reason, ms(time.Since(start))
		r.emit(sr)
	}
	n := flow.NestedOf(d.Args)
	name, dir, file, msg := n.Target(r.opts.Linked)
	if msg != "" {
		done(flow.StatusError, msg)
		return
	}
	f, err := r.opts.Source.Open(dir, file)
	sr.Target = name
	if err != nil {
		done(flow.StatusError, err.Error())
		return
	}
	if msg := r.enter(f.Canonical, name); msg != "" {
		done(flow.StatusError, msg)
		return
	}
	if f.Spelling.State == wire.SpellCaseFolded {
		done(flow.StatusError, caseFoldedNameError(name, f.Spelling).Error())
		return
	}
	if f.Err != nil {
		done(flow.StatusError, openError(f).Error())
		return
	}
	fl, err := r.parse(f)
	if err != nil {
		done(flow.StatusError, fmt.Sprintf("could not load flow %q: %v", name, err))
		return
	}
	if fl.ExecutionPrerequisite != "" && !n.PrerequisiteAcknowledged {
		done(flow.StatusError, fmt.Sprintf("flow %q did not run — its execution prerequisite was not acknowledged: %s. Add prerequisiteAcknowledged: true to the step's args, or compose with run: instead.", name, fl.ExecutionPrerequisite))
		return
	}
	// A nested run updates baselines when its step says so, or when the step is
	// silent and the run that starts it updates (docs/link-protocol.md,
	// "Baselines").
	update := nestedUpdate(fr.scope.update, n.UpdateBaselines)
	done(flow.StatusPass, "")
	sc := &runScope{name: name, baselineDir: baselineDir(f.Canonical, name), update: update}
	r.runFile(ctx, &frame{file: f, flow: fl, display: name, depth: depth + 1, scope: sc})
	if d.Delay > 0 && !r.stopped {
		sleep(ctx, d.Delay)
	}
}

// sleep waits d or until ctx ends, and reports whether it waited it out.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
