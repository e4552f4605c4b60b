package run

import (
	"fmt"
	"slices"
	"strings"

	"github.com/toolserver/toolserver/flow"
	"github.com/toolserver/toolserver/wire"
)

// checkFanOut refuses, before the first step, a run whose report could
// pass MaxRunSteps: it counts the lines a run of fr would give if every
// step passed and every when: guard held, following run: fragments and
// nested flows as the runner does (a fragment that would not run, a cycle
// or a level past wire.MaxDepth counts its one line). Parse bounds each
// file; this bounds what files running each other several times multiply
// to. The count stops at the limit, so it costs at most MaxRunSteps steps
// and one read of each file it reaches.
func (r *Runner) checkFanOut(fr *frame) error {
	c := &fanOut{r: r, stack: []string{fr.file.Canonical}, displays: []string{fr.display}, files: map[string]*fanOutFile{}}
	for _, s := range fr.flow.Steps {
		if !c.count(fr.file, []*flow.Step{s}) {
			return c.refusal(fr.file, s)
		}
	}
	return nil
}

// fanOut is one checkFanOut.
type fanOut struct {
	r *Runner
	n int
	// stack and displays are the files being counted, root first, as the
	// runner's own.
	stack, displays []string
	// files holds each file reached, by directory and target as opened.
	files map[string]*fanOutFile
	// at is the step and file where the count passed the limit, and
	// chain the displays of the files that led there.
	at     *flow.Step
	atFile *flow.File
	chain  []string
}

// fanOutFile is a file the count reached; flow is nil when it would not
// run (missing, refused, mis-cased or invalid).
type fanOutFile struct {
	file *flow.File
	flow *flow.Flow
}

// count adds the lines of steps in file and reports whether the total
// stays within MaxRunSteps.
func (c *fanOut) count(file *flow.File, steps []*flow.Step) bool {
	for _, s := range steps {
		if c.n++; c.n > flow.MaxRunSteps {
			c.at, c.atFile, c.chain = s, file, slices.Clone(c.displays)
			return false
		}
		switch d := s.Directive.(type) {
		case *flow.When:
			if !c.count(file, d.Steps) {
				return false
			}
		case *flow.Run:
			if !c.enter(c.open(file.Dir(), d.File()), c.r.displayFor(d)) {
				return false
			}
		case *flow.Tool:
			if d.Name != flow.ToolFlowExecute {
				continue
			}
			if name, dir, target, msg := flow.NestedOf(d.Args).Target(c.r.opts.Linked); msg == "" && !c.enter(c.open(dir, target), name) {
				return false
			}
		}
	}
	return true
}

// enter counts the steps of a fragment or nested flow as the next level,
// when the runner would run it.
func (c *fanOut) enter(f *fanOutFile, display string) bool {
	if f == nil || f.flow == nil || enterCheck(c.stack, c.displays, f.file.Canonical, display) != "" {
		return true
	}
	c.stack, c.displays = append(c.stack, f.file.Canonical), append(c.displays, display)
	ok := c.count(f.file, f.flow.Steps)
	c.stack, c.displays = c.stack[:len(c.stack)-1], c.displays[:len(c.displays)-1]
	return ok
}

// open reads and parses the file target names in dir, once per count.
func (c *fanOut) open(dir, target string) *fanOutFile {
	key := dir + "\x00" + target
	if f, ok := c.files[key]; ok {
		return f
	}
	var out *fanOutFile
	if c.r.opts.Source == nil {
		return nil
	}
	if f, err := c.r.opts.Source.Open(dir, target); err == nil {
		out = &fanOutFile{file: f}
		if f.Err == nil && f.Spelling.State != wire.SpellCaseFolded {
			out.flow, _ = c.r.parse(f)
		}
	}
	c.files[key] = out
	return out
}

// refusal is the error of a run whose count passed the limit while
// counting the root's step s.
func (c *fanOut) refusal(root *flow.File, s *flow.Step) error {
	where := "at this step"
	switch {
	case len(c.chain) > 1:
		where = fmt.Sprintf("at step %s (line %d) of %s, reached through %s", c.at.Path, c.at.Line, c.atFile.Canonical, strings.Join(c.chain, " → "))
	case c.at != s:
		where = fmt.Sprintf("at step %s (line %d) of this file", c.at.Path, c.at.Line)
	}
	return &flow.Error{File: root.Canonical, Step: s.Path, Line: s.Line, Column: s.Column, Directive: s.Kind(), Problem: flow.ProblemSize,
		Msg: fmt.Sprintf("the run would report more than %d steps, counting the steps of its run: fragments, nested flows and when: blocks (each block as if its guard held); the count passes %d %s. A run reports at most %d steps: run fragments fewer times, or split the flow", flow.MaxRunSteps, flow.MaxRunSteps, where, flow.MaxRunSteps)}
}
