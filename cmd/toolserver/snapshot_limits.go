package main

import (
	"fmt"
	"math"
	"strconv"

	"github.com/spf13/pflag"

	"github.com/toolserver/toolserver/flow"
)

// snapshotLimitFlags are the flags of flow run that set the project's
// snapshot limits over its config file (.argent/toolserver.yaml); a
// snapshot's own options win over both.
type snapshotLimitFlags struct {
	maxMismatch, threshold *float64
	maxDiffPixels          *int
}

// register adds --max-mismatch, --max-diff-pixels and --threshold to f.
func (l *snapshotLimitFlags) register(f *pflag.FlagSet) {
	f.Var(&floatLimit{v: &l.maxMismatch, max: flow.MaxMismatchPercent, want: fmt.Sprintf("a percent of pixels from 0 to %d, e.g. 0.01", flow.MaxMismatchPercent)}, "max-mismatch",
		"`PERCENT` of pixels a snapshot may differ by, over "+flow.ConfigFile+" (built-in default: strict, 0 px allowed, on chromium-cdp-* devices; 0.5 once a count is set)")
	f.Var(&intLimit{v: &l.maxDiffPixels}, "max-diff-pixels",
		"`N` pixels a snapshot may differ by, over "+flow.ConfigFile+" (built-in default: 0 on chromium-cdp-* devices when no --max-mismatch is set either)")
	f.Var(&floatLimit{v: &l.threshold, max: flow.MaxThreshold, want: fmt.Sprintf("a number from 0 to %d (pixelmatch's colour threshold)", flow.MaxThreshold)}, "threshold",
		"pixelmatch's colour threshold `T` (0..1) of every snapshot, over "+flow.ConfigFile+" (built-in default 0.1; 0.01 under the strict default)")
}

// defaults are the limits the flags set, each with its source.
func (l snapshotLimitFlags) defaults() flow.SnapshotDefaults {
	d := flow.SnapshotDefaults{MaxMismatch: l.maxMismatch, MaxDiffPixels: l.maxDiffPixels, Threshold: l.threshold}
	for key, flag := range map[string]bool{"maxMismatch": l.maxMismatch != nil, "maxDiffPixels": l.maxDiffPixels != nil, "threshold": l.threshold != nil} {
		if !flag {
			continue
		}
		if d.Sources == nil {
			d.Sources = map[string]string{}
		}
		d.Sources[key] = "flag " + flagOf[key]
	}
	return d
}

// flagOf names the flag of each limit.
var flagOf = map[string]string{"maxMismatch": "--max-mismatch", "maxDiffPixels": "--max-diff-pixels", "threshold": "--threshold"}

// snapshotDefaults are the snapshot limits of a run of the project at
// root: its config file, under the flags. A config file that does not
// parse is a usage error (exit 2): no flow of the project runs with it.
func (l snapshotLimitFlags) snapshotDefaults(root string) (flow.SnapshotDefaults, error) {
	d, err := flow.LoadConfig(root)
	if err != nil {
		return flow.SnapshotDefaults{}, badInput(err)
	}
	return d.Over(l.defaults()), nil
}

// floatLimit is a flag whose value is a number in [0, max]; unset, it
// leaves *v nil.
type floatLimit struct {
	v    **float64
	max  float64
	want string
}

func (f *floatLimit) Set(s string) error {
	x, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(x) || math.IsInf(x, 0) || x < 0 || x > f.max {
		return fmt.Errorf("want %s, got %q", f.want, s)
	}
	*f.v = &x
	return nil
}

func (f *floatLimit) String() string {
	if *f.v == nil {
		return ""
	}
	return strconv.FormatFloat(**f.v, 'g', -1, 64)
}

func (f *floatLimit) Type() string { return "number" }

// intLimit is a flag whose value is a count of pixels; unset, it leaves
// *v nil.
type intLimit struct{ v **int }

func (f *intLimit) Set(s string) error {
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 || n > flow.MaxPixelCount {
		return fmt.Errorf("want a whole number of pixels from 0 to %d, got %q", flow.MaxPixelCount, s)
	}
	v := int(n)
	*f.v = &v
	return nil
}

func (f *intLimit) String() string {
	if *f.v == nil {
		return ""
	}
	return strconv.Itoa(**f.v)
}

func (f *intLimit) Type() string { return "int" }
