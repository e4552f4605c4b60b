package junit

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/toolserver/toolserver/flow"
)

// TestMarshal: a suite per flow with its counts, a case per step with
// echo lines left out, a warning as an error case, a failed snapshot's
// images as attachments, in the document's exact bytes.
func TestMarshal(t *testing.T) {
	reps := []*flow.Report{{
		Flow: "checkout", Failed: 1, DurationMs: 1234,
		Warnings: []string{"not run: first line\nsecond"},
		Steps: []flow.StepReport{
			{Kind: "launch", Flow: "checkout", Status: flow.StatusPass, Target: "/cart", DurationMs: 20},
			{Kind: string(flow.KindEcho), Flow: "checkout", Status: flow.StatusPass},
			{Kind: "snapshot", Flow: "login", Status: flow.StatusFail, Target: "cart", Reason: "3 px differ <&>", DurationMs: 500,
				Artifacts: map[string]flow.Artifact{"diff": {Path: "a/diff.png"}, "baseline": {Path: "a/base.png"}, "current": {}}},
			{Kind: "tap", Flow: "checkout", Status: flow.StatusSkip},
		},
	}}
	got, err := Marshal(reps)
	if err != nil {
		t.Fatal(err)
	}
	want := `<?xml version="1.0" encoding="UTF-8"?>
<testsuites>
  <testsuite name="checkout" tests="4" failures="1" errors="0" skipped="0" time="1.234">
    <testcase name="flow" classname="checkout" time="0">
      <error message="not run: first line">not run: first line&#xA;second</error>
    </testcase>
    <testcase name="1 launch /cart" classname="checkout.checkout" time="0.020"></testcase>
    <testcase name="2 snapshot cart" classname="checkout.login" time="0.500">
      <failure message="3 px differ &lt;&amp;&gt;">3 px differ &lt;&amp;&gt;</failure>
      <system-out>[[ATTACHMENT|a/base.png]]&#xA;[[ATTACHMENT|a/diff.png]]&#xA;</system-out>
    </testcase>
    <testcase name="3 tap" classname="checkout.checkout" time="0.000">
      <skipped></skipped>
    </testcase>
  </testsuite>
</testsuites>
`
	if string(got) != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

// TestWrite: the file's directory is made; the file holds Marshal's
// bytes.
func TestWrite(t *testing.T) {
	path := filepath.Join(t.TempDir(), "reports", "junit.xml")
	reps := []*flow.Report{{Flow: "a", Steps: []flow.StepReport{}}}
	if err := Write(path, reps); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := Marshal(reps)
	if string(got) != string(want) {
		t.Errorf("got %q, want %q", got, want)
	}
}
