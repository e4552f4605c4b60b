// Package linked runs a suite's flows on a tool-server over a link, the
// way toolserver flow run --link does: each flow goes with its call
// (by name with the project's root, or by path with its members), its
// progress streams back, the images of its failed snapshots can be
// kept on this machine, and the result's baseline writes are checked
// (Run). Several tool-servers share one suite through Spread.
//
// What a run shows as it goes is the caller's: it hands a Printer. The
// package reads no flag and no environment, and prints nothing itself.
package linked

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/toolserver/toolserver/fault"
	"github.com/toolserver/toolserver/flow"
	flowrun "github.com/toolserver/toolserver/flow/run"
	"github.com/toolserver/toolserver/internal/atomicfile"
	linkclient "github.com/toolserver/toolserver/link/client"
	"github.com/toolserver/toolserver/suite"
	"github.com/toolserver/toolserver/wire"
)

// Options are what a linked run asks of the tool-server, as the flags
// of flow run set them.
type Options struct {
	// Project is the project the flows belong to; Run sends it absolute.
	Project string
	// Device is the device of a target that names none.
	Device string
	// Snapshot is the snapshotDefaults argument; nil sends none.
	Snapshot *wire.SnapshotDefaults
	// BaseURL and Strict are sent only when set.
	BaseURL string
	Strict  bool
	Update  flowrun.Update
	DryRun  bool
	// Artifacts, when set, is the directory the images of failed
	// snapshots are downloaded to.
	Artifacts string
	// FilesLog asks for a line for each file the call reads or writes
	// (the link client's [flow-files] lines).
	FilesLog bool
	// Expose and ExposeOnly open a tunnel to the tool-server (flow run
	// --expose, --expose-only); without targets there is none.
	Expose     wire.Targets
	ExposeOnly bool
}

// Printer is what a linked run shows as it goes; the caller decides how
// (lines, or objects with -o json).
type Printer interface {
	// Start heads a flow, once, before it is called.
	Start(name, device string)
	// Progress is one step as the tool-server reports it.
	Progress(s flow.StepReport)
	// Waiting says the run waits for its device on the tool-server.
	Waiting(message string)
	// Warn is a line to show as it is; it may hold the tool-server's
	// words.
	Warn(line string)
	// Kept says an image of step (from 1) was downloaded to path.
	Kept(step int, role, path string)
	// Resent says the tool-server from refused the flow before running
	// it, and it goes to the one at to (Spread).
	Resent(name, from, to string, err error)
}

// Run runs flows on one tool-server.
type Run struct {
	client  *linkclient.Client
	opts    Options
	project string // absolute
	byName  bool   // the argument named a flow, not a file or directory
	p       Printer
	tunnel  *tunnel // nil without Expose
}

// New prepares a linked run of the flows arg names (a flow's name, a
// file or a directory) on the tool-server c calls.
func New(c *linkclient.Client, arg string, o Options, p Printer) (*Run, error) {
	project, err := filepath.Abs(o.Project)
	if err != nil {
		return nil, err
	}
	r := &Run{client: c, opts: o, project: project, byName: ByName(arg), p: p}
	r.tunnel = newTunnel(o, p.Warn)
	return r, nil
}

// ByName reports whether arg names a flow by its name rather than a file
// or directory: no such path here, no .yaml, and a valid flow name. Such
// a flow is sent by name, for the tool-server to find in the project.
func ByName(arg string) bool {
	_, err := os.Stat(arg)
	return err != nil && !strings.HasSuffix(arg, ".yaml") && flow.ValidName(arg)
}

// Args are flow-execute's arguments for one target: the flow by name
// (with project_root) or by its absolute path.
func (r *Run) Args(t suite.Target) map[string]any {
	a := wire.ExecuteArgs{
		ProjectRoot:              r.project,
		Device:                   t.DeviceOr(r.opts.Device),
		PrerequisiteAcknowledged: true,
		SnapshotDefaults:         r.opts.Snapshot,
		// Our extension: sent only when set, as strict is.
		BaseURL: r.opts.BaseURL,
		// Sent only when set: a tool-server without strict mode refuses
		// the unknown argument rather than running the flow leniently.
		Strict: r.opts.Strict,
	}
	switch u := r.opts.Update; u {
	case flowrun.UpdateAll:
		all := true
		a.UpdateBaselines = &all
	case flowrun.UpdateNone:
	default:
		// Our extension (docs/link.md, "Our extensions"): alone, so a
		// tool-server that does not know it refuses the argument or
		// compares, and never adopts every capture.
		a.UpdateOnly = string(u)
	}
	if r.byName {
		a.Name = t.Name
	} else {
		a.FlowPath = t.Path
	}
	return a.Map()
}

// Prepare returns the arguments of t as a call sends them, its members
// included (flow run --detach starts a run of the tool-server with
// them).
func (r *Run) Prepare(ctx context.Context, t suite.Target) (map[string]any, error) {
	return r.client.Prepare(ctx, flow.ToolFlowExecute, r.Args(t))
}

// Flow runs one flow over the link and returns its report, how many of
// its baselines were not written and, in a dry run, the baselines it
// would have written. A flow the tool-server rejected is an error; a
// failure of the link or the server matches fault.ErrInfrastructure (the
// link client classifies its errors).
func (r *Run) Flow(ctx context.Context, t suite.Target) (*flow.Report, int, []flowrun.Plan, error) {
	opts := linkclient.CallOptions{Progress: func(data json.RawMessage) {
		var s flow.StepReport
		if err := json.Unmarshal(data, &s); err == nil {
			r.p.Progress(s)
		}
	}, DryRun: r.opts.DryRun, Waiting: r.p.Waiting}
	if t.Data != nil {
		opts.Flow = &linkclient.FlowBytes{Path: t.Path, Data: t.Data}
	}
	if r.opts.FilesLog {
		opts.FilesLog = r.p.Warn
	}
	r.p.Start(t.Name, t.DeviceOr(r.opts.Device))
	tun, err := r.useTunnel(ctx)
	if err != nil {
		return nil, 0, nil, err
	}
	// Our extension: the tunnel is named only with --expose.
	opts.Tunnel = tun
	res, err := r.client.Call(ctx, flow.ToolFlowExecute, r.Args(t), opts)
	if err != nil {
		return nil, 0, nil, err
	}
	var rep flow.Report
	if err := json.Unmarshal(res, &rep); err != nil {
		return nil, 0, nil, fault.Infrastructure(fmt.Errorf("%s: the result is not a flow report: %w", t.Name, err))
	}
	if rep.Steps == nil {
		// No report: the tool-server answered something else (a notice).
		return nil, 0, nil, fmt.Errorf("%s: the tool-server did not run the flow: %s", t.Name, bytes.TrimSpace(res))
	}
	if r.opts.Artifacts != "" {
		r.keepArtifacts(ctx, t, &rep)
	}
	if t.Data != nil {
		// A flow held in memory is named by its target (a story id), not
		// by the stem of the path it stands at, which the server names it
		// by.
		rep.Flow = t.Name
	}
	var plans []flowrun.Plan
	if r.opts.DryRun {
		flowrun.MarkDryRun(&rep)
		plans = flowrun.PlansOf(rep.BaselineWrites)
	}
	return &rep, WarnRefusals(rep.BaselineWrites, r.p.Warn), plans, nil
}

// keepArtifacts downloads the images of failed snapshots to
// DIR/<flow>/<key>-<role>.png, as a local run writes them, and puts the
// local paths in the report. Names from the tool-server are used only
// when they are plain flow and file names.
func (r *Run) keepArtifacts(ctx context.Context, t suite.Target, rep *flow.Report) {
	for i := range rep.Steps {
		s := &rep.Steps[i]
		for _, role := range []string{"baseline", "current", "diff"} {
			h := s.Artifacts[role].Handle
			if h == nil || h.ID == "" {
				continue
			}
			dst, ok := artifactPath(r.opts.Artifacts, t.Name, rep.Flow, s.SnapshotKey, role, h.Filename)
			if !ok {
				continue
			}
			data, err := r.client.Artifact(ctx, h.ID)
			if err == nil {
				err = os.MkdirAll(filepath.Dir(dst), 0o755)
			}
			if err == nil {
				err = atomicfile.WriteFile(dst, data)
			}
			if err != nil {
				r.p.Warn(fmt.Sprintf("--artifacts: %s of step %d: %v", role, s.Index+1, err))
				continue
			}
			s.Artifacts[role] = flow.Artifact{Path: dst}
			r.p.Kept(s.Index+1, role, dst)
		}
	}
}

// artifactPath is where the image of role, which the tool-server stores
// as filename, goes under dir: <dir>/<flow>/<key>-<role>.png, the flow
// being target unless filename names another valid flow than the
// report's (a nested run's images go under its own name, as locally).
// It is false when the names would not make a plain file name.
func artifactPath(dir, target, reportFlow, key, role, filename string) (string, bool) {
	name := filepath.Base(filename)
	if key != "" {
		name = strings.TrimSuffix(key, ".png") + "-" + role + ".png"
	}
	if !filepath.IsLocal(name) || filepath.Base(name) != name {
		return "", false
	}
	// The store names an artifact <run>-<key>-<role>.png.
	sub := target
	if run := strings.TrimSuffix(filename, "-"+name); run != filename && run != reportFlow && flow.ValidName(run) {
		sub = run
	}
	return filepath.Join(dir, filepath.FromSlash(sub), name), true
}

// WarnRefusals warns "✗ baseline not written: <path>: <reason>" for each
// entry of a baselineWrites list that carries an error, and counts them;
// the paths written and a dry run's plans are not refusals.
func WarnRefusals(writes []flow.BaselineWrite, warn func(string)) int {
	n := 0
	for _, w := range writes {
		if w.Error == "" {
			continue
		}
		warn(fmt.Sprintf("✗ baseline not written: %s: %s", w.Path, w.Error))
		n++
	}
	return n
}
