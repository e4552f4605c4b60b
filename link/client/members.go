package client

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"strconv"

	"github.com/toolserver/toolserver/flow"
	flowrun "github.com/toolserver/toolserver/flow/run"
	"github.com/toolserver/toolserver/internal/clientfs"
	"github.com/toolserver/toolserver/snapshot"
	"github.com/toolserver/toolserver/wire"
)

// memberCollector gathers the members of one file input (docs/link-protocol.md,
// "Members"): each flow by its key, each tool file by its path, then the
// baselines of the runs, in the order found. Members get their bytes from the
// call's sender, so the inline budget is the call's.
type memberCollector struct {
	st     *callState
	policy *clientfs.Policy

	members []wire.Member
	// flows are the flow members by key; each pair of directory and
	// target is resolved once.
	flows map[string]*walkedFlow
	// toolPaths are the tool files sent, by path as written.
	toolPaths map[string]bool
	// styles are the stylePath files sent, by key (styles.go).
	styles map[string]bool
	// runs are the runs walked: a flow reached again as the same run adds
	// nothing.
	runs map[string]bool
	// baselineDirs are the baseline directories of the runs, in order.
	baselineDirs []*baselineSet
}

// walkedFlow is a flow member as the walk knows it.
type walkedFlow struct {
	canonical string
	// flow is the parsed file; nil when it was not sent or does not parse
	// (the runner reports it then).
	flow *flow.Flow
}

// memberRun is one run whose files a call sends: the flow the call names
// or one a nested tool: flow-execute step runs.
type memberRun struct {
	canonical string
	fl        *flow.Flow
	// name keys the run's baselines when the canonical's stem is not a
	// valid flow name: the stem of the path, or the nested step's name.
	name string
	// hop is the run's level in the run: chain, the call's flow being 0.
	hop    int
	update bool
	// narrow tells that the run updates only what it compares
	// (flow-execute's updateOnly): it reads its baselines as a comparing
	// run does, and its directory takes writes as an updating one's.
	narrow   bool
	platform string
}

func (st *callState) newCollector(policy *clientfs.Policy) *memberCollector {
	return &memberCollector{st: st, policy: policy, members: []wire.Member{}, flows: map[string]*walkedFlow{},
		toolPaths: map[string]bool{}, styles: map[string]bool{}, runs: map[string]bool{}}
}

// emit adds a member and prints its [flow-files] line.
func (c *memberCollector) emit(m wire.Member, sent string) {
	c.members = append(c.members, m)
	c.st.members++
	c.st.log(memberLogLine(&m, sent))
}

// walk collects the files of the runs and of each run they nest: per run,
// every run: target of its flow and of each file it reaches, in all steps
// and when: blocks, breadth first, each resolution once per run and as
// deep as the runner goes (wire.MaxDepth, nested runs counted); the stylePath
// files of their snapshots (styles.go); the file arguments of their tool:
// steps; and each flow a followable nested
// tool: flow-execute step names, walked as a run of its own. The snapshot
// names of a run select its baselines (sendBaselines).
func (c *memberCollector) walk(ctx context.Context, start ...memberRun) error {
	queue := append([]memberRun(nil), start...)
	for len(queue) > 0 {
		run := queue[0]
		queue = queue[1:]
		id := run.canonical + "\x00" + run.name + "\x00" + strconv.FormatBool(run.update) + strconv.FormatBool(run.narrow) + "\x00" + run.platform
		if c.runs[id] {
			continue
		}
		c.runs[id] = true
		var snaps []string
		visited := map[string]bool{}
		type item struct {
			canonical string
			fl        *flow.Flow
			hop       int
		}
		files := []item{{run.canonical, run.fl, run.hop}}
		for len(files) > 0 {
			f := files[0]
			files = files[1:]
			for _, n := range f.fl.SnapshotNames() {
				if !slices.Contains(snaps, n) {
					snaps = append(snaps, n)
				}
			}
			if err := c.styleFiles(ctx, f.canonical, f.fl); err != nil {
				return err
			}
			for _, ts := range f.fl.ToolSteps() {
				if err := c.toolFiles(ctx, ts.Tool.Name, ts.Tool.Args); err != nil {
					return err
				}
			}
			// Targets resolve beside the real file that names them, as the
			// runner resolves them (File.Dir of the canonical).
			dir := filepath.Dir(f.canonical)
			for _, rt := range f.fl.RunTargets() {
				target := (&flow.Run{Target: rt.Target}).File()
				key := wire.Key(dir, target)
				if visited[key] {
					continue
				}
				visited[key] = true
				ff, err := c.flowMember(ctx, dir, target)
				if err != nil {
					return err
				}
				if ff.flow != nil && f.hop+1 < wire.MaxDepth {
					files = append(files, item{ff.canonical, ff.flow, f.hop + 1})
				}
			}
			for _, n := range f.fl.NestedFlows() {
				if !n.Followable() {
					continue
				}
				// The runner: the step's updateBaselines, else the run's.
				update, narrow := run.update, run.narrow
				if n.UpdateBaselines != nil {
					update, narrow = *n.UpdateBaselines, false
				}
				// A nested run compares on the platform of the call; the
				// runner binds its own device into the step.
				next, err := c.nestedRun(ctx, n, f.hop+1, update, run.platform)
				if err != nil {
					return err
				}
				if next != nil {
					next.narrow = narrow
					queue = append(queue, *next)
				}
			}
		}
		if len(snaps) > 0 {
			c.noteBaselines(snapshot.BaselineDir(run.canonical, run.name), snaps, run.update, run.narrow, run.platform)
		}
	}
	return nil
}

// nestedRun sends the flow a nested step names, by the directory
// <project_root>/.argent/flows and the target <name>.yaml, and returns its
// run when the flow was sent, parses, and is not past the depth limit.
func (c *memberCollector) nestedRun(ctx context.Context, n flow.NestedFlow, hop int, update bool, platform string) (*memberRun, error) {
	f, err := c.flowMember(ctx, n.FlowsDir(), n.FileName())
	if err != nil || f.flow == nil || hop >= wire.MaxDepth {
		return nil, err
	}
	return &memberRun{canonical: f.canonical, fl: f.flow, name: n.Name, hop: hop, update: update, platform: platform}, nil
}

// flowMember sends the flow that target names beside dir, once per key: with
// its bytes when it is a YAML file under the roots within the cap, else missing
// or refused with the reason of the policy table of docs/link-protocol.md
// ("Client policy"). The file is read as a local run reads it (flowrun.Disk),
// under the call's policy, so both ends agree on what it is.
func (c *memberCollector) flowMember(ctx context.Context, dir, target string) (*walkedFlow, error) {
	key := wire.Key(dir, target)
	if f, ok := c.flows[key]; ok {
		return f, nil
	}
	file, mt := flowrun.Disk{Policy: c.policy}.Read(dir, target)
	sp := file.Spelling
	m := wire.Member{Role: wire.RoleFlow, Key: key, Path: file.Path, Canonical: file.Canonical, Spelling: &sp}
	f := &walkedFlow{canonical: file.Canonical}
	c.flows[key] = f
	var refused *flow.RefusedError
	switch {
	case errors.As(file.Err, &refused):
		m.State, m.Error = wire.StateRefused, refused.Reason
		c.emit(m, sentRefused(refused.Reason))
		return f, nil
	case file.Err != nil:
		m.State = wire.StateMissing
		c.emit(m, wire.StateMissing)
		return f, nil
	}
	sent, err := c.st.send.place(ctx, &m, file.Canonical, file.Data, mt)
	if err != nil {
		return nil, err
	}
	if fl, perr := flow.Parse(file.Canonical, file.Data); perr == nil {
		f.flow = fl
	}
	c.emit(m, sent)
	return f, nil
}

// sendBytes reads a member's bytes from its real path and places them
// inline or as an upload. A file it cannot read, or one over the cap,
// leaves m refused with the reason and no bytes.
func (c *memberCollector) sendBytes(ctx context.Context, m *wire.Member, real string) ([]byte, string, error) {
	data, mt, why := clientfs.ReadRegular(real, wire.MaxFileBytes)
	if why != "" {
		m.State, m.Error = wire.StateRefused, why
		return nil, sentRefused(why), nil
	}
	sent, err := c.st.send.place(ctx, m, real, data, mt)
	if err != nil {
		return nil, "", err
	}
	return data, sent, nil
}
