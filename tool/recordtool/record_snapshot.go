package recordtool

import (
	"errors"
	"fmt"
	"time"

	"github.com/toolserver/toolserver/fault"
	"github.com/toolserver/toolserver/flow"
	"github.com/toolserver/toolserver/wire"
)

// commandSnapshot is the command of flow-add-step that records a
// snapshot: step. No tool has that name: a snapshot is a directive of the
// flow format, and its options (name, maxMismatch, cropOn, and this
// project's maxDiffPixels, threshold, fullPage, mask, maskColor, hide,
// style, stylePath) are its args, as the map form spells them.
const commandSnapshot = string(flow.KindSnapshot)

// snapshotNotCaptured is the warning of a recorded snapshot step.
const snapshotNotCaptured = "recorded without a capture: a replay compares the screen with the snapshot's baseline, and a run with updateBaselines (flow run --update-baselines) adopts one"

// addSnapshot records a snapshot: step without running it, as
// flow-add-script records a script: nothing is captured while recording,
// since a recording has no baseline to compare with yet and adopting one
// belongs to a run that updates baselines. The args are checked exactly
// as a flow file's snapshot: map is; a device argument is dropped, as the
// replay binds its own device.
func addSnapshot(rc *recording, args map[string]any, delay time.Duration) (any, error) {
	refuse := func(format string, a ...any) error {
		return &fault.Error{Kind: fault.Validation, Code: wire.CodeFlowFileInvalid, Field: "args",
			Message: fmt.Sprintf("flow-add-step cannot record snapshot: "+format+" Nothing was recorded.", a...)}
	}
	if delay > 0 {
		return nil, refuse("a snapshot: step takes no delayMs (wait for the screen with await: before it).")
	}
	opts := make(map[string]any, len(args))
	for k, v := range args {
		opts[k] = v
	}
	for _, k := range deviceKeys {
		delete(opts, k)
	}
	snap, err := flow.SnapshotFromArgs(opts)
	if err != nil {
		msg := err.Error()
		var e *flow.Error
		if errors.As(err, &e) {
			msg = e.Msg
		}
		return nil, refuse("%s.", msg)
	}
	return record(rc, stepPlan{step: &flow.Step{Directive: snap}, warning: snapshotNotCaptured}, nil)
}
