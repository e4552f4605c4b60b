package flow_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/toolserver/toolserver/device/cdp"
	"github.com/toolserver/toolserver/flow"
)

// The tests of what a flow's author sees: press:, the element a step
// acted on, several matches, the similar elements of a selector that
// matched nothing, and strict mode, on real Chromium.

func TestPressRuns(t *testing.T) {
	t.Parallel()
	p := newProject(t)
	p.write(".argent/flows/keys.yaml", `steps:
  - launch: "{{URL}}/press.html"
  - press: Control+A
  - press: x
  - assert: { text: { in: { id: second }, equals: x } }
  - press: Tab
  - press: { key: q, times: 2 }
  - press: enter
  - await: { visible: { text: submitted qq } }
`)
	rep := p.run(t, device(t, "chromium-cdp-810x600"), "keys", false)
	if !rep.OK || rep.Passed != 8 {
		t.Fatalf("got %s\n%s", lines(rep), dump(rep))
	}
	var targets []string
	for _, s := range rep.Steps {
		if s.Kind == "press" {
			targets = append(targets, s.Target)
		}
	}
	if want := []string{"Control+A", "x", "Tab", "q ×2", "Enter"}; !slices.Equal(targets, want) {
		t.Errorf("press targets: got %q, want %q", targets, want)
	}
}

// TestPressKeyNamesMatchDevice keeps the names the parser accepts equal
// to the names the device presses, so a flow that parses never fails on
// an unknown key.
func TestPressKeyNamesMatchDevice(t *testing.T) {
	got, want := flow.KeyNames(), cdp.KeyNames()
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Errorf("flow.KeyNames: got %v, want cdp.KeyNames %v", got, want)
	}
	for _, n := range got {
		if !strings.Contains(string(flow.Schema()), n) {
			t.Errorf("the schema's description of press keys leaves out %s", n)
		}
	}
}

// TestSimilarRanksByText: a selector with a one-letter typo lists the
// element it meant first among the similar elements, though many others
// share its words; of two as close, the interactive one comes first.
func TestSimilarRanksByText(t *testing.T) {
	t.Parallel()
	p := newProject(t)
	p.write(".argent/flows/typo-tap.yaml", `steps:
  - launch: "{{URL}}/signup.html"
  - tap: Create acount
`)
	p.write(".argent/flows/typo-type.yaml", `steps:
  - launch: "{{URL}}/signup.html"
  - type: { into: { text: Acount nme }, text: Ada }
`)
	cases := []struct{ flow, device, want string }{
		{"typo-tap", "chromium-cdp-811x600", `no visible element matched selector "Create acount"; similar elements on the page: id="create" role="button" text="Create account", role="heading" text="Create account", `},
		{"typo-type", "chromium-cdp-812x600", `no visible element matched selector text="Acount nme"; similar elements on the page: id="acct" role="textbox" text="Account name", text="Account name", `},
	}
	for _, c := range cases {
		t.Run(c.flow, func(t *testing.T) {
			t.Parallel()
			rep := p.run(t, device(t, c.device), c.flow, false)
			s := rep.Steps[1]
			if s.Status != flow.StatusFail || !strings.HasPrefix(s.Reason, c.want) {
				t.Fatalf("reason: got %q, want it to start with %q", s.Reason, c.want)
			}
		})
	}
}
