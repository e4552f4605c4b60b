package flow_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/toolserver/toolserver/fault"
	"github.com/toolserver/toolserver/flow"
)

// wireReport has every typed field of a report in each of its forms.
func wireReport() *flow.Report {
	png := []byte("\x89PNG\r\n\x1a\n")
	return &flow.Report{Flow: "f<1>", Device: "d", Steps: []flow.StepReport{
		{Index: 0, Kind: "snapshot", Flow: "f", Status: "fail", SnapshotKey: "home__chromium-10x10.png",
			Artifacts: map[string]flow.Artifact{
				"diff":     {Handle: &flow.ArtifactHandle{Artifact: true, ID: "abc", Filename: "f-home-diff.png", MimeType: "image/png", Size: 12, MtimeMs: 1.5}},
				"baseline": {Handle: &flow.ArtifactHandle{Artifact: true, ID: "abd", Filename: "f-home-baseline.png", MimeType: "image/png", Size: 13, HostPath: "/tmp/a&b.png", MtimeMs: 2}},
			},
			Mismatch: &flow.Mismatch{Pixels: 3, Percent: 0.5, MaxMismatch: 0.1, Regions: []flow.ChangedRegion{{Region: flow.Region{X: 1, Y: 2, Width: 3, Height: 4, Pixels: 3}}}}},
		{Index: 1, Kind: "snapshot", Flow: "f", Status: "fail", Artifacts: map[string]flow.Artifact{"current": {Path: "/out/f/home-current.png"}}},
		{Index: 2, Kind: "tool", Flow: "f", Status: "pass", Result: json.RawMessage(`{"a":12345678901234567,"l":[1.5,null,true],"z":"<b>&\u2028"}`)},
		{Index: 3, Kind: "tool", Flow: "f", Status: "pass", Result: json.RawMessage(`null`)},
		{Index: 4, Kind: "tool", Flow: "f", Status: "pass"},
		{Index: 5, Kind: "snapshot", Flow: "f", Status: "pass", Artifacts: map[string]flow.Artifact{}},
	}, BaselineWrites: []flow.BaselineWrite{{Path: "/p/__baselines__/f/a.png", PNG: png}}}
}

// TestReportWire pins the bytes of a report on the wire. The strings are
// what the report wrote when these fields were untyped (any, []any,
// map[string]any holding store.Artifact and wire.ClientFile values), so
// the typed fields change no byte, with HTML escaping on (json.Marshal) or
// off (the tool-server's stream).
func TestReportWire(t *testing.T) {
	const escaped = `{"flow":"f\u003c1\u003e","device":"d","executionPrerequisite":"","ok":false,"passed":0,"failed":0,"skipped":0,"errored":0,"startedAt":0,"durationMs":0,"steps":[{"index":0,"kind":"snapshot","flow":"f","status":"fail","snapshotKey":"home__chromium-10x10.png","mismatch":{"pixels":3,"percent":0.5,"maxMismatch":0.1,"regions":[{"x":1,"y":2,"width":3,"height":4,"pixels":3}]},"durationMs":0,"artifacts":{"baseline":{"__argentArtifact":true,"id":"abd","filename":"f-home-baseline.png","mimeType":"image/png","size":13,"hostPath":"/tmp/a\u0026b.png","mtimeMs":2},"diff":{"__argentArtifact":true,"id":"abc","filename":"f-home-diff.png","mimeType":"image/png","size":12,"mtimeMs":1.5}}},{"index":1,"kind":"snapshot","flow":"f","status":"fail","durationMs":0,"artifacts":{"current":"/out/f/home-current.png"}},{"index":2,"kind":"tool","flow":"f","status":"pass","result":{"a":12345678901234567,"l":[1.5,null,true],"z":"\u003cb\u003e\u0026\u2028"},"durationMs":0},{"index":3,"kind":"tool","flow":"f","status":"pass","result":null,"durationMs":0},{"index":4,"kind":"tool","flow":"f","status":"pass","durationMs":0},{"index":5,"kind":"snapshot","flow":"f","status":"pass","durationMs":0}],"baselineWrites":[{"__argentClientFile":true,"path":"/p/__baselines__/f/a.png","content":"iVBORw0KGgo=","encoding":"base64"}]}`
	const plain = `{"flow":"f<1>","device":"d","executionPrerequisite":"","ok":false,"passed":0,"failed":0,"skipped":0,"errored":0,"startedAt":0,"durationMs":0,"steps":[{"index":0,"kind":"snapshot","flow":"f","status":"fail","snapshotKey":"home__chromium-10x10.png","mismatch":{"pixels":3,"percent":0.5,"maxMismatch":0.1,"regions":[{"x":1,"y":2,"width":3,"height":4,"pixels":3}]},"durationMs":0,"artifacts":{"baseline":{"__argentArtifact":true,"id":"abd","filename":"f-home-baseline.png","mimeType":"image/png","size":13,"hostPath":"/tmp/a&b.png","mtimeMs":2},"diff":{"__argentArtifact":true,"id":"abc","filename":"f-home-diff.png","mimeType":"image/png","size":12,"mtimeMs":1.5}}},{"index":1,"kind":"snapshot","flow":"f","status":"fail","durationMs":0,"artifacts":{"current":"/out/f/home-current.png"}},{"index":2,"kind":"tool","flow":"f","status":"pass","result":{"a":12345678901234567,"l":[1.5,null,true],"z":"<b>&\u2028"},"durationMs":0},{"index":3,"kind":"tool","flow":"f","status":"pass","result":null,"durationMs":0},{"index":4,"kind":"tool","flow":"f","status":"pass","durationMs":0},{"index":5,"kind":"snapshot","flow":"f","status":"pass","durationMs":0}],"baselineWrites":[{"__argentClientFile":true,"path":"/p/__baselines__/f/a.png","content":"iVBORw0KGgo=","encoding":"base64"}]}`
	for _, tc := range []struct {
		name   string
		escape bool
		want   string
	}{{"escaped", true, escaped}, {"plain", false, plain}} {
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(tc.escape)
		if err := enc.Encode(wireReport()); err != nil {
			t.Fatal(err)
		}
		if got := string(bytes.TrimSuffix(b.Bytes(), []byte("\n"))); got != tc.want {
			t.Errorf("%s:\ngot  %s\nwant %s", tc.name, got, tc.want)
		}
	}
}

// TestReportRoundTrip decodes a report as a linked client does and writes
// it again: the same bytes, and the same typed values.
func TestReportRoundTrip(t *testing.T) {
	want := wireReport()
	b, err := json.Marshal(want)
	if err != nil {
		t.Fatal(err)
	}
	var got flow.Report
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	again, err := json.Marshal(&got)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(again, b) {
		t.Errorf("re-encoded:\ngot  %s\nwant %s", again, b)
	}
	// The wire compacts a result; compare the decoded forms elsewhere.
	if !reflect.DeepEqual(got.BaselineWrites, want.BaselineWrites) {
		t.Errorf("baselineWrites: got %+v, want %+v", got.BaselineWrites, want.BaselineWrites)
	}
	if !reflect.DeepEqual(got.Steps[0].Artifacts, want.Steps[0].Artifacts) || !reflect.DeepEqual(got.Steps[1].Artifacts, want.Steps[1].Artifacts) {
		t.Errorf("artifacts: got %+v and %+v, want %+v and %+v", got.Steps[0].Artifacts, got.Steps[1].Artifacts, want.Steps[0].Artifacts, want.Steps[1].Artifacts)
	}
}

// TestBaselineWriteForms reads the forms of a baselineWrites entry: the
// tool-server's directive, and the client's path written, refusal or dry run's
// plan (docs/link-protocol.md, "Baselines in the result"), and writes each back
// as it came.
func TestBaselineWriteForms(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want flow.BaselineWrite
	}{
		{`{"__argentClientFile":true,"path":"/p/a.png","content":"AQI=","encoding":"base64"}`, flow.BaselineWrite{Path: "/p/a.png", PNG: []byte{1, 2}}},
		{`"/p/a.png"`, flow.BaselineWrite{Path: "/p/a.png"}},
		{`{"error":"/p/a.png is a symbolic link to a missing file","path":"/p/a.png"}`, flow.BaselineWrite{Path: "/p/a.png", Error: "/p/a.png is a symbolic link to a missing file"}},
		{`{"path":"/p/a.png","bytes":2,"updated":true,"dryRun":true}`, flow.BaselineWrite{Path: "/p/a.png", Plan: &flow.BaselinePlan{Bytes: 2, Updated: true}}},
	} {
		var got flow.BaselineWrite
		if err := json.Unmarshal([]byte(tc.in), &got); err != nil {
			t.Fatalf("%s: %v", tc.in, err)
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: got %+v, want %+v", tc.in, got, tc.want)
		}
		out, err := json.Marshal(got)
		if err != nil || string(out) != tc.in {
			t.Errorf("%s: written back as %s, %v", tc.in, out, err)
		}
	}
	var bad flow.BaselineWrite
	if err := json.Unmarshal([]byte(`{"__argentClientFile":true,"path":"/p/a.png","content":"not base64!"}`), &bad); err == nil {
		t.Errorf("a directive whose content is not base64: got no error, want one")
	}
}

// TestReportInfrastructureOnTheWire: a step that failed because the
// machinery failed is marked on the wire, so a report read back (as a
// linked client reads it) still says the infrastructure failed; a step
// that failed on its own is not marked.
func TestReportInfrastructureOnTheWire(t *testing.T) {
	rep := flow.Report{Flow: "f", Steps: []flow.StepReport{
		{Index: 0, Kind: "assert", Flow: "f", Status: flow.StatusFail, Reason: "no element matched", Err: errors.New("no element matched")},
		{Index: 1, Kind: "await", Flow: "f", Status: flow.StatusError, Reason: "chromium exited", Err: fault.Infrastructure(errors.New("chromium exited")), Infrastructure: true},
	}}
	b, err := json.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	if n := bytes.Count(b, []byte(`"infrastructure":true`)); n != 1 {
		t.Fatalf("got %d infrastructure marks in %s, want 1", n, b)
	}
	var got flow.Report
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	ierr := got.InfrastructureError()
	if !errors.Is(ierr, fault.ErrInfrastructure) || !strings.Contains(ierr.Error(), "step 2 (await): chromium exited") {
		t.Fatalf("got %v, want an infrastructure error naming step 2 and its reason", ierr)
	}
	got.Steps = got.Steps[:1]
	if ierr := got.InfrastructureError(); ierr != nil {
		t.Fatalf("a failed assertion alone: got %v, want nil", ierr)
	}
}
