package recordtool

import (
	"strings"
	"testing"

	"github.com/toolserver/toolserver/flow"
	"github.com/toolserver/toolserver/tool/tooltest"
)

// TestRecordSnapshotStep: flow-add-step with the command snapshot records
// a snapshot: step with every option its args give, checked as a flow
// file's are; a refused one records nothing.
func TestRecordSnapshotStep(t *testing.T) {
	t.Parallel()
	reg := newRegistry(t)
	r := recName{"shots", t.TempDir()}
	tooltest.Call(t, reg, "flow-start-recording", r.args(nil))

	res := tooltest.Call(t, reg, "flow-add-step", r.step(t, "snapshot", map[string]any{"name": "home", "device": "chromium-cdp-1000x700"}))
	if got, want := res["recorded"], "1. snapshot: home"; got != want {
		t.Errorf("recorded: got %v, want %v", got, want)
	}
	if got, want := res["message"], `Step added to "shots" flow — `+snapshotNotCaptured; got != want {
		t.Errorf("message: got %v, want %v", got, want)
	}
	all := map[string]any{
		"name": "dashboard", "maxMismatch": 0.5, "maxDiffPixels": 100, "threshold": 0.2, "fullPage": true,
		"mask": []any{map[string]any{"id": "clock"}, "Avatar"}, "maskColor": "#00FF00", "hide": map[string]any{"role": "banner"},
		"style": "time { visibility: hidden }\n", "stylePath": "styles/capture.css",
	}
	res = tooltest.Call(t, reg, "flow-add-step", r.step(t, "snapshot", all))
	if got, want := res["stepCount"], 2.0; got != want {
		t.Errorf("stepCount: got %v, want %v", got, want)
	}
	crop := map[string]any{"name": "card", "cropOn": map[string]any{"id": "card"}, "hide": []any{"Ad"}}
	tooltest.Call(t, reg, "flow-add-step", r.step(t, "snapshot", crop))

	for _, c := range []struct {
		args map[string]any
		want string
	}{
		{map[string]any{"name": "a", "fullPage": true, "cropOn": "b"}, "fullPage: true captures the whole scrollable page and cropOn compares one element's frame; give one of them"},
		{map[string]any{"name": "a", "maskColor": "#000000"}, "maskColor is the colour of the mask: boxes, and this snapshot has no mask:"},
		{map[string]any{"name": "a", "threshold": 2}, "threshold must be a number from 0 to 1"},
		{map[string]any{"name": "a", "stylePath": "/abs.css"}, `a stylePath must be relative to the flow file that names it, got "/abs.css"`},
		{map[string]any{"name": "a", "mask": []any{map[string]any{"idd": "x"}}}, `mask[1]: unknown selector key "idd" (did you mean "id"?)`},
		{map[string]any{"name": "a b"}, `snapshot name "a b" may hold only letters, digits, _ and -`},
		{map[string]any{"maxMismatch": 1}, "snapshot needs a name"},
		{map[string]any{"name": "a", "clip": true}, `unknown option "clip"`},
	} {
		_, err := tooltest.Invoke(t, reg, "flow-add-step", r.step(t, "snapshot", c.args), false)
		te := tooltest.WantCode(t, err, "FLOW_FILE_INVALID")
		if !strings.HasPrefix(te.Message, "flow-add-step cannot record snapshot: ") || !strings.Contains(te.Message, c.want) || !strings.HasSuffix(te.Message, "Nothing was recorded.") || te.Field != "args" {
			t.Errorf("%v: got %q (field %s), want it to contain %q", c.args, te.Message, te.Field, c.want)
		}
	}
	args := r.step(t, "snapshot", map[string]any{"name": "late"})
	args["delayMs"] = 500
	_, err := tooltest.Invoke(t, reg, "flow-add-step", args, false)
	if te := tooltest.WantCode(t, err, "FLOW_FILE_INVALID"); !strings.Contains(te.Message, "a snapshot: step takes no delayMs") {
		t.Errorf("delayMs: got %q, want it refused", te.Message)
	}

	res = tooltest.Call(t, reg, "flow-finish-recording", r.args(nil))
	if res["steps"] != 3.0 {
		t.Fatalf("finish: got %v, want 3 steps (the refused ones not recorded)", res)
	}
	fl := parseFile(t, r.file())
	home := fl.Steps[0].Directive.(*flow.Snapshot)
	if home.Name != "home" || home.MaxMismatchSet || home.Mask != nil {
		t.Errorf("home: got %+v, want the name alone", home)
	}
	d := fl.Steps[1].Directive.(*flow.Snapshot)
	if !d.MaxMismatchSet || d.MaxMismatch != 0.5 || *d.MaxDiffPixels != 100 || *d.Threshold != 0.2 || !d.FullPage ||
		len(d.Mask) != 2 || d.Mask[0].ID != "clock" || d.Mask[1].Text != "Avatar" || d.MaskColor != "#00FF00" ||
		len(d.Hide) != 1 || d.Hide[0].Role != "banner" || d.Style != "time { visibility: hidden }\n" || d.StylePath != "styles/capture.css" {
		t.Errorf("dashboard: got %+v, want every option recorded", d)
	}
	if c := fl.Steps[2].Directive.(*flow.Snapshot); c.CropOn.ID != "card" || c.Hide[0].Text != "Ad" {
		t.Errorf("card: got %+v, want cropOn card and hide Ad", c)
	}
}

// TestRecordSnapshotClientMode: a recording that keeps its file on the
// client carries the snapshot step in the savedTo it returns.
func TestRecordSnapshotClientMode(t *testing.T) {
	t.Parallel()
	reg := newRegistry(t)
	r := recName{"linked", t.TempDir()}
	path := r.root + "/.argent/flows/linked.yaml"
	callLinked(t, reg, "flow-start-recording", r.args(nil))
	res := callLinked(t, reg, "flow-add-step", r.step(t, "snapshot", map[string]any{"name": "home", "mask": "Clock", "stylePath": "capture.css"}))
	if got := wantDirective(t, res["savedTo"], path); !strings.Contains(got, "snapshot: {name: home, mask: [Clock], stylePath: capture.css}") {
		t.Errorf("savedTo content: got %q, want the snapshot step", got)
	}
}
