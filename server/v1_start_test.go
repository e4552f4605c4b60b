package server_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/toolserver/toolserver/runs"
	"github.com/toolserver/toolserver/tool/flowtool"
)

// list returns the runs the rig's store lists.
func (r *v1Rig) list(t *testing.T) []runs.Run {
	t.Helper()
	code, b := r.do(t, "GET", "/v1/runs", "")
	var out struct{ Runs []runs.Run }
	if err := json.Unmarshal(b, &out); code != 200 || err != nil {
		t.Fatalf("GET /v1/runs: %d %.300s", code, b)
	}
	return out.Runs
}

// TestPrerequisiteNoticeOfARecordedCall: on a server that keeps runs, a
// flow-execute call of a flow with an unacknowledged prerequisite is
// answered with the notice, as without a store; the run it recorded ends
// errored saying why it did not run.
func TestPrerequisiteNoticeOfARecordedCall(t *testing.T) {
	t.Parallel()
	r := newV1Rig(t, "", "")
	root := t.TempDir()
	writeFlow(t, root, "prereq", "executionPrerequisite: logged in\nsteps:\n  - echo: hi\n")
	code, b := r.do(t, "POST", "/tools/flow-execute", fmt.Sprintf(`{"name":"prereq","project_root":%q}`, root))
	var out struct{ Data map[string]any }
	if err := json.Unmarshal(b, &out); err != nil || code != 200 || out.Data["notice"] != flowtool.PrerequisiteNotice {
		t.Fatalf("got %d %s, want 200 with the notice", code, b)
	}
	list := r.list(t)
	if len(list) != 1 || list[0].Status != runs.Errored || list[0].Summary == nil || !strings.HasPrefix(list[0].Summary.Reason, "not run: ") {
		t.Errorf("the recorded run: %+v, want one, errored, saying why it did not run", list)
	}
}
