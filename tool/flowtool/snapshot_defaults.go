package flowtool

import (
	"github.com/toolserver/toolserver/fault"
	"github.com/toolserver/toolserver/flow"
	"github.com/toolserver/toolserver/tool"
	"github.com/toolserver/toolserver/wire"
)

// maxSourceText bounds a source's text: it is a few words for a report
// ("flag --max-mismatch").
const maxSourceText = 200

// DefaultsArg is the snapshotDefaults argument of d, nil when d sets
// nothing. A client that does not send it (Argent's) gets the defaults of
// the flow's project on this machine when the flow is read from this
// machine's disk, and none over a link.
func DefaultsArg(d flow.SnapshotDefaults) *wire.SnapshotDefaults {
	if d.MaxMismatch == nil && d.MaxDiffPixels == nil && d.Threshold == nil && d.Metric == nil && d.WindowSize == nil && d.StopOnFailure == nil {
		return nil
	}
	return &wire.SnapshotDefaults{MaxMismatch: d.MaxMismatch, MaxDiffPixels: d.MaxDiffPixels, Threshold: d.Threshold, Metric: d.Metric, WindowSize: d.WindowSize, StopOnFailure: d.StopOnFailure, Sources: d.Sources}
}

// argDefaults returns the limits the argument a sets. A limit without a
// source is named after the argument; a source of a limit it does not set
// is dropped.
func argDefaults(a *wire.SnapshotDefaults) flow.SnapshotDefaults {
	var d flow.SnapshotDefaults
	if a == nil {
		return d
	}
	d.MaxMismatch, d.MaxDiffPixels, d.Threshold, d.StopOnFailure = a.MaxMismatch, a.MaxDiffPixels, a.Threshold, a.StopOnFailure
	d.Metric, d.WindowSize = a.Metric, a.WindowSize
	for key, set := range map[string]bool{"maxMismatch": a.MaxMismatch != nil, "maxDiffPixels": a.MaxDiffPixels != nil, "threshold": a.Threshold != nil, "metric": a.Metric != nil, "windowSize": a.WindowSize != nil} {
		if !set {
			continue
		}
		if d.Sources == nil {
			d.Sources = map[string]string{}
		}
		src := a.Sources[key]
		if src == "" {
			src = "flow-execute snapshotDefaults"
		}
		d.Sources[key] = src
	}
	return d
}

// snapshotDefaultsSchema is the argument's schema: the ranges of the
// config file's keys, sources of the limits and the comparison's keys.
func snapshotDefaultsSchema() *tool.Schema {
	source := func(what string) *tool.Schema {
		s := tool.String("Where " + what + " came from, for the report, e.g. \"flag --max-mismatch\" or \"" + flow.ConfigFile + "\".")
		n := maxSourceText
		s.MaxLength = &n
		return s
	}
	s := tool.Object(map[string]*tool.Schema{
		"maxMismatch":   tool.Number("Percent of pixels that may differ.", 0, flow.MaxMismatchPercent),
		"maxDiffPixels": tool.Integer("A count of pixels that may differ.", 0, flow.MaxPixelCount),
		"threshold":     tool.Number("Pixelmatch's colour threshold.", 0, flow.MaxThreshold),
		"metric":        tool.Enum("The colour distance: yiq (pixelmatch 7's) or oklab (pixelmatch 8's).", flow.SnapshotMetrics...),
		"windowSize":    tool.Integer("pixelmatch 8's windowSize: the count is the most differing pixels in any N×N square.", 1, flow.MaxWindowSize),
		"stopOnFailure": tool.Bool("true: a failed snapshot stops the flow, as Argent does; by default on chromium-cdp-* devices the flow goes on and fails at its end."),
		"sources": tool.Object(map[string]*tool.Schema{
			"maxMismatch":   source("maxMismatch"),
			"maxDiffPixels": source("maxDiffPixels"),
			"threshold":     source("threshold"),
			"metric":        source("metric"),
			"windowSize":    source("windowSize"),
		}),
	})
	s.Description = "The project's snapshot limits and stopOnFailure for the snapshots that set none (a snapshot's own options win): its " + flow.ConfigFile + " under the flags of toolserver flow run, as the client resolved them. Without it, a flow read from this machine's disk takes the limits of <project_root>/" + flow.ConfigFile + ", a linked flow none."
	return s
}

// snapshotDefaults are the limits of a run: the argument when the call
// sends one; else, for a flow read from this machine's disk, the config
// file of its project_root; else (a linked flow, whose project is on the
// client) none. A config file that does not parse rejects the run.
func snapshotDefaults(arg *wire.SnapshotDefaults, linked bool, projectRoot string) (flow.SnapshotDefaults, error) {
	switch {
	case arg != nil:
		return argDefaults(arg), nil
	case linked || projectRoot == "":
		return flow.SnapshotDefaults{}, nil
	}
	d, err := flow.LoadConfig(projectRoot)
	if err != nil {
		return flow.SnapshotDefaults{}, &fault.Error{Kind: fault.Validation, Code: "FLOW_CONFIG_INVALID", Field: wire.ArgProjectRoot, Message: err.Error(), Err: err}
	}
	return d, nil
}
