package server_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/toolserver/toolserver/device/cdp/cdptest"
	"github.com/toolserver/toolserver/fault"
	linkclient "github.com/toolserver/toolserver/link/client"
	"github.com/toolserver/toolserver/runs"
	"github.com/toolserver/toolserver/tool/flowtool"
	"github.com/toolserver/toolserver/wire"
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

// runOf waits for the end of the run POST /v1/runs answered with b, and
// returns it with the payload of its run_started event.
func (r *v1Rig) runOf(t *testing.T, code int, b []byte) (runs.Detail, map[string]any) {
	t.Helper()
	var st runs.Started
	if err := json.Unmarshal(b, &st); code != http.StatusCreated || err != nil {
		t.Fatalf("POST /v1/runs: %d %.300s", code, b)
	}
	r.waitStatus(t, st.Run)
	d, err := r.store.Get(t.Context(), st.Run)
	if err != nil {
		t.Fatal(err)
	}
	evs, err := r.store.Events(t.Context(), st.Run, 0)
	if err != nil || len(evs) == 0 || evs[0].Event.Kind != runs.KindRunStarted {
		t.Fatalf("events of %s: %v %+v", st.Run, err, evs)
	}
	var started map[string]any
	json.Unmarshal(evs[0].Event.Payload, &started)
	return *d, started
}

// TestV1RefusesOverlongArguments: an argument of flow-execute over its cap
// (8 MB of a name, a device, a path, a flow file input's path) is a 400
// naming it, its length and the cap, on POST /v1/runs and on POST
// /tools/flow-execute alike, and no run is created by either.
func TestV1RefusesOverlongArguments(t *testing.T) {
	t.Parallel()
	r := newV1Rig(t, "", "")
	root := t.TempDir()
	writeFlow(t, root, "home", "steps:\n  - echo: hi\n")
	big := strings.Repeat("A", 8<<20)
	input := func(p string) string {
		return fmt.Sprintf(`{"__argentFileInput":true,"path":%q,"content":"","members":[]}`, p)
	}
	for _, tc := range []struct {
		arg, args, want string
	}{
		{"name", fmt.Sprintf(`{"name":"<%s","project_root":%q}`, big, root), fmt.Sprintf("name is %d bytes; a flow name has at most %d", len(big)+1, wire.MaxNameBytes)},
		{"device", fmt.Sprintf(`{"name":"home","project_root":%q,"device":%q}`, root, big), fmt.Sprintf("device is %d bytes; a device id has at most %d", len(big), wire.MaxDeviceBytes)},
		{"flow_path", fmt.Sprintf(`{"flow_path":"/%s.yaml","project_root":"/p"}`, big), fmt.Sprintf("flow_path is %d bytes; a path has at most %d", len(big)+6, wire.MaxPathBytes)},
		{"project_root", fmt.Sprintf(`{"name":"home","project_root":"/%s"}`, big), fmt.Sprintf("project_root is %d bytes", len(big)+1)},
		{"flow_file", fmt.Sprintf(`{"name":"home","project_root":%q,"flow_file":%s}`, root, input("/"+big+".yaml")), fmt.Sprintf("flow_file's path is %d bytes", len(big)+6)},
	} {
		code, b := r.do(t, "POST", "/v1/runs", `{"tool_args":`+tc.args+`}`)
		var env runs.ErrorBody
		json.Unmarshal(b, &env)
		if code != 400 || env.Error.Code != runs.CodeBadRequest || !strings.Contains(env.Error.Message, "tool_args: "+tc.want) || len(b) > 1000 {
			t.Errorf("POST /v1/runs with a long %s: %d %.300s, want 400 bad_request saying %q", tc.arg, code, b, tc.want)
		}
		code, b = r.do(t, "POST", "/tools/flow-execute", tc.args)
		var tools struct{ Error, Field string }
		json.Unmarshal(b, &tools)
		if code != 400 || tools.Field != tc.arg || !strings.Contains(tools.Error, tc.want) || len(b) > 1000 {
			t.Errorf("POST /tools/flow-execute with a long %s: %d %.300s, want 400 about %s", tc.arg, code, b, tc.arg)
		}
	}
	if got := r.list(t); len(got) != 0 {
		t.Errorf("the refused calls created %d runs: %+v", len(got), got[0])
	}
}

// TestV1BadDeviceBeforeTheRun: a bad device id (the longest taken) is
// refused before the run exists: 400 quoting the id within a few hundred
// bytes, and no run.
func TestV1BadDeviceBeforeTheRun(t *testing.T) {
	t.Parallel()
	r := newV1Rig(t, "", "")
	root := t.TempDir()
	writeFlow(t, root, "home", "steps:\n  - launch: \"{{URL}}/app.html\"\n")
	bad := strings.Repeat("A", wire.MaxDeviceBytes)
	code, b := r.do(t, "POST", "/v1/runs", fmt.Sprintf(`{"tool_args":{"name":"home","project_root":%q,"device":%q}}`, root, bad))
	if code != 400 || !strings.Contains(string(b), `"bad_request"`) || !strings.Contains(string(b), `bad device id \"`+bad+`\"`) || len(b) > 400 {
		t.Errorf("a bad device: %d %s; want 400 quoting the id, in at most 400 bytes", code, b)
	}
	if list := r.list(t); len(list) != 0 {
		t.Errorf("the refused start created %d runs", len(list))
	}
}

// TestV1FlowPathTooLongForTheFileSystem: a flow file whose path the file
// system refuses as too long (a name in it over 255 bytes) is the
// caller's mistake: a 400 on /tools and on /v1 that names the argument,
// not the path, and no run.
func TestV1FlowPathTooLongForTheFileSystem(t *testing.T) {
	t.Parallel()
	r := newV1Rig(t, "", "")
	long := strings.Repeat("A", 300)
	for _, tc := range []struct{ field, args string }{
		{"project_root", fmt.Sprintf(`{"name":"home","project_root":"/tmp/%s"}`, long)},
		{"flow_path", fmt.Sprintf(`{"flow_path":"/tmp/%s.yaml","project_root":"/tmp"}`, long)},
	} {
		code, b := r.do(t, "POST", "/tools/flow-execute", tc.args)
		var tools struct{ Error, Field string }
		json.Unmarshal(b, &tools)
		if code != 400 || tools.Field != tc.field || !strings.Contains(tools.Error, "ENAMETOOLONG") || strings.Contains(tools.Error, long) {
			t.Errorf("/tools with a long %s: %d %.400s, want 400 naming %s, not the path", tc.field, code, b, tc.field)
		}
		code, b = r.do(t, "POST", "/v1/runs", `{"tool_args":`+tc.args+`}`)
		if code != 400 || !strings.Contains(string(b), `"bad_request"`) || !strings.Contains(string(b), "tool_args: "+tc.field+": ") || !strings.Contains(string(b), "ENAMETOOLONG") || strings.Contains(string(b), long) {
			t.Errorf("/v1 with a long %s: %d %.400s, want 400 naming %s, not the path", tc.field, code, b, tc.field)
		}
	}
	for _, run := range r.list(t) {
		if run.Source == "v1" {
			t.Errorf("a refused start created run %+v", run)
		}
	}
}

// TestV1StartTakesJSONOnly: POST /v1/runs refuses a body not declared
// JSON with 415 in the /v1 envelope, as /tools does, and starts nothing.
func TestV1StartTakesJSONOnly(t *testing.T) {
	t.Parallel()
	r := newV1Rig(t, "", "")
	for _, ct := range []string{"text/plain", "", "application/x-www-form-urlencoded"} {
		code, b := r.do(t, "POST", "/v1/runs", `{"tool_args":{"name":"home","project_root":"/p"}}`, "Content-Type", ct)
		var env runs.ErrorBody
		if err := json.Unmarshal(b, &env); err != nil || code != http.StatusUnsupportedMediaType || env.Error.Code != runs.CodeBadRequest || !strings.Contains(env.Error.Message, "Content-Type: application/json") {
			t.Errorf("Content-Type %q: %d %s, want 415 bad_request in the /v1 envelope", ct, code, b)
		}
	}
	if got := r.list(t); len(got) != 0 {
		t.Errorf("the refused starts created %d runs", len(got))
	}
}

// TestV1RecordsLinkAndDevice: a detached linked run (its arguments
// prepared by the link's client, members under flow_file, as flow run
// --detach sends them) is recorded linked; its device is the one it
// used, omitted from run_started rather than ""; a run that needs no
// device records none.
func TestV1RecordsLinkAndDevice(t *testing.T) {
	t.Parallel()
	r := newV1Rig(t, "", "")
	root := t.TempDir()
	writeFlow(t, root, "shown", "steps:\n  - launch: \"{{URL}}/app.html\"\n  - run: part.yaml\n")
	writeFlow(t, root, "part", "steps:\n  - echo: a fragment, sent as a member\n")
	writeFlow(t, root, "bare", "steps:\n  - echo: no device\n")
	device := "chromium-cdp-904x604"
	cdptest.Claim(t, device)
	t.Cleanup(func() { cdptest.Stop(t, device) })

	lc := linkclient.NewClient(r.url, "", nil)
	for _, tc := range []struct {
		name, device string
		linked       bool
	}{
		{"shown", device, true},
		{"bare", "", true},
		{"bare", "", false},
	} {
		args := map[string]any{"name": tc.name, "project_root": root}
		if tc.device != "" {
			args["device"] = tc.device
		}
		if tc.linked {
			prepared, err := lc.Prepare(t.Context(), "flow-execute", args)
			if err != nil {
				t.Fatal(err)
			}
			args = prepared
		}
		toolArgs, _ := json.Marshal(args)
		if tc.linked && !strings.Contains(string(toolArgs), `"flow_file":{`) {
			t.Fatalf("the link's client sent no flow file input: %.300s", toolArgs)
		}
		code, b := r.do(t, "POST", "/v1/runs", `{"tool_args":`+string(toolArgs)+`}`)
		d, started := r.runOf(t, code, b)
		_, hasDevice := started["device"]
		if d.Outcome != runs.Passed || d.Linked != tc.linked || started["linked"] != tc.linked || d.Device != tc.device || hasDevice {
			t.Errorf("%s (linked %v): %+v, linked %v, device %q, RunStarted %v; want passed, linked %v, device %q, none in RunStarted",
				tc.name, tc.linked, d.Status, d.Linked, d.Device, started, tc.linked, tc.device)
		}
	}
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
	if len(list) != 1 || list[0].Status.State != runs.Failed || !strings.HasPrefix(list[0].Status.Error, "not run: ") {
		t.Errorf("the recorded run: %+v, want one, failed, saying why it did not run", list)
	}
}

// TestErrorMessagesAreBounded: a refusal that quotes the value at fault
// (here an 8 MB recording name) answers within fault.MaxMessageBytes,
// whatever the caller sent.
func TestErrorMessagesAreBounded(t *testing.T) {
	t.Parallel()
	r := newV1Rig(t, "", "")
	big := strings.Repeat("A", 8<<20)
	code, b := r.do(t, "POST", "/tools/flow-start-recording", fmt.Sprintf(`{"name":"<%s","project_root":%q}`, big, t.TempDir()))
	var tools struct{ Error string }
	json.Unmarshal(b, &tools)
	if code != 400 || !strings.HasPrefix(tools.Error, "Invalid flow name") || len(b) > fault.MaxMessageBytes+200 {
		t.Errorf("an 8 MB flow name: %d, %d bytes: %.200s; want a 400 of at most %d bytes", code, len(b), b, fault.MaxMessageBytes+200)
	}
}
