// Package local runs a suite's flows in-process, on this machine's
// Chromium, the way toolserver flow run without --link does: each target
// read and parsed once (flowrun.Prepare), checked against the run's base
// URL, given a device of the pool, and run by the one flow run the
// flow-execute tool also calls (flowrun.Run).
//
// What a run shows as it goes is the caller's (a Printer), and so is the
// pool: the package reads no flag and prints nothing.
package local

import (
	"context"
	"errors"
	"path/filepath"

	"github.com/toolserver/toolserver/device/cdp"
	"github.com/toolserver/toolserver/device/cdprun"
	"github.com/toolserver/toolserver/fault"
	"github.com/toolserver/toolserver/flow"
	flowrun "github.com/toolserver/toolserver/flow/run"
	"github.com/toolserver/toolserver/suite"
)

// Pool is where a run's devices come from: device/cdp's Pool, the device
// of worker n for an id.
type Pool interface {
	Instance(ctx context.Context, id string, n int) (*cdp.Device, error)
}

// Printer is what a local run shows as it goes.
type Printer interface {
	// Start heads a flow, once its device is up.
	Start(name, device string)
	// Progress is one step as it ends.
	Progress(s flow.StepReport)
}

// Options are a local run's settings, as the flags of flow run set them.
type Options struct {
	// Device is the device of a target that names none.
	Device   string
	Update   flowrun.Update
	DryRun   bool
	Strict   bool
	Snapshot flow.SnapshotDefaults
	BaseURL  string
	// Artifacts, when set, is the directory the images of snapshots go
	// to (suite.ArtifactDir).
	Artifacts string
	// Tools calls the tool-server's tools for tool: steps.
	Tools flowrun.ToolCaller
}

// A DeviceError is a device id the pool refused as no device's
// (cdp.ErrBadID): the caller's input, not the machinery's failure.
type DeviceError struct{ Err error }

func (e *DeviceError) Error() string { return e.Err.Error() }

// Unwrap is the pool's error.
func (e *DeviceError) Unwrap() error { return e.Err }

// Flow runs the target t on a device of pool, that of worker, and
// returns its report and, in a dry run, the baselines it would have
// written. A device id the pool refuses is a *DeviceError; a device that
// does not come up matches fault.ErrInfrastructure.
func Flow(ctx context.Context, pool Pool, t suite.Target, worker int, o Options, p Printer) (*flow.Report, []flowrun.Plan, error) {
	file, err := t.Open()
	if err != nil {
		return nil, nil, err
	}
	prep, err := flowrun.Prepare(flowrun.Entry{File: file, Name: t.Name, StemFallback: filepath.Base(t.Name)})
	if err != nil {
		return nil, nil, err
	}
	if err := flowrun.CheckBaseURL(prep.Flow, t.Name, o.BaseURL, false); err != nil {
		return nil, nil, err
	}
	d, err := pool.Instance(ctx, t.DeviceOr(o.Device), worker)
	if err != nil {
		if errors.Is(err, cdp.ErrBadID) {
			return nil, nil, &DeviceError{Err: err}
		}
		// No device, no run: whatever kept it from booting is the
		// machinery's failure.
		return nil, nil, fault.Infrastructure(err)
	}
	opts := flowrun.Options{
		Device:   cdprun.Device{D: d},
		Source:   flowrun.Disk{},
		Update:   o.Update,
		DryRun:   o.DryRun,
		Strict:   o.Strict,
		Tools:    o.Tools,
		Progress: p.Progress,
		Snapshot: o.Snapshot,
		BaseURL:  o.BaseURL,
	}
	if o.Artifacts != "" {
		opts.Artifacts = suite.ArtifactDir(o.Artifacts)
	}
	p.Start(t.Name, d.ID())
	return flowrun.Run(ctx, opts, prep)
}
