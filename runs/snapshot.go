package runs

import (
	"bytes"
	"encoding/json"

	"github.com/toolserver/toolserver/flow"
)

// withOutcome is a SnapshotCompared payload with its outcome: one a store
// recorded before a snapshot carried its outcome gets it here, by the
// same rule (flow.SnapshotOutcome), so that every reader of a run, old
// or new, reads the field (the dashboard above all, which derives
// nothing). A payload that has it is returned as it is.
func withOutcome(p json.RawMessage) json.RawMessage {
	// A key in the payload's strings is escaped (\"outcome\"), so this
	// finds the field only.
	if bytes.Contains(p, []byte(`"outcome":`)) {
		return p
	}
	var sn Snapshot
	if json.Unmarshal(p, &sn) != nil {
		return p
	}
	sn.Outcome = flow.SnapshotOutcome(flow.StepReport{Status: sn.Status, Baseline: sn.Baseline})
	b, err := json.Marshal(sn)
	if err != nil {
		return p
	}
	return b
}
