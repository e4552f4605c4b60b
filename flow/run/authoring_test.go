package run_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/toolserver/toolserver/device/cdp"
	"github.com/toolserver/toolserver/flow"
	"github.com/toolserver/toolserver/flow/run"
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
	// Each waits out the default await timeout on a device of its own.
	var devs []run.Device
	var names []string
	for _, c := range cases {
		devs, names = append(devs, device(t, c.device)), append(names, c.flow)
	}
	wait := p.startAtOnce(t, devs, names...)
	t.Parallel()
	reps := wait()
	for i, c := range cases {
		t.Run(c.flow, func(t *testing.T) {
			rep := reps[i]
			s := rep.Steps[1]
			if s.Status != flow.StatusFail || !strings.HasPrefix(s.Reason, c.want) {
				t.Fatalf("reason: got %q, want it to start with %q", s.Reason, c.want)
			}
		})
	}
}

// runOpts runs <project>/.argent/flows/<name>.yaml with opts (its
// Device and Source set here).
func (p *project) runOpts(t *testing.T, dev run.Device, name string, opts run.Options) *flow.Report {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 90*time.Second)
	defer cancel()
	f, err := run.Disk{}.Open(p.flows(), name+".yaml")
	if err != nil {
		t.Fatal(err)
	}
	opts.Device, opts.Source = dev, run.Disk{}
	rep, err := run.Execute(ctx, opts, run.Entry{File: f, Name: name, StemFallback: name})
	if err != nil {
		t.Fatalf("run %s: %v", name, err)
	}
	return rep
}

// TestStepNamesElement: in a grid of product cards, "next: Kentia palm"
// follows reading order to the first button after the name, which is the
// Boston fern's in the row below (Argent's meaning, kept); the report
// names that button and its box, so a reader sees which card it was.
func TestStepNamesElement(t *testing.T) {
	t.Parallel()
	p := newProject(t)
	p.write(".argent/flows/grid.yaml", `steps:
  - launch: "{{URL}}/plants.html"
  - tap: { text: Add to basket, next: Kentia palm }
  - assert: { text: { in: { id: basket }, equals: "basket: Boston fern;" } }
  - long-press: { on: { text: Add to basket, after: Calathea }, duration: 50 }
`)
	p.write(".argent/flows/field.yaml", `steps:
  - launch: "{{URL}}/signup.html"
  - type: { into: { id: acct }, text: Ada, submit: false }
  - scroll-to: { target: { text: Already have an account } }
`)
	dev := device(t, "chromium-cdp-813x600")
	rep := p.run(t, dev, "grid", false)
	if rep.Steps[2].Status != flow.StatusPass {
		t.Fatalf("the tap did not add the Boston fern: %s\n%s", lines(rep), dump(rep))
	}
	tap := rep.Steps[1]
	want := &flow.StepElement{Description: `role="button" text="Add to basket"`, Box: flow.Box{X: 40, Y: 140, Width: 160, Height: 36}, Matches: 1}
	if tap.Element == nil || *tap.Element != *want || tap.Warning != "" {
		t.Errorf("tap element: got %+v (warning %q), want %+v and no warning", tap.Element, tap.Warning, want)
	}
	if got, want := tap.Element.String(), `role="button" text="Add to basket" (40, 140, 160×36)`; got != want {
		t.Errorf("String: got %q, want %q", got, want)
	}
	// "after" keeps every follower: the three buttons of the row below
	// Calathea's name; the long-press takes the first, the Snake plant's,
	// and says it had three to choose from.
	lp := rep.Steps[3]
	want = &flow.StepElement{Description: `role="button" text="Add to basket"`, Box: flow.Box{X: 40, Y: 340, Width: 160, Height: 36}, Matches: 3}
	if lp.Status != flow.StatusPass || lp.Element == nil || *lp.Element != *want {
		t.Errorf("long-press: got %s element %+v, want pass on %+v", lp.Status, lp.Element, want)
	}
	if w := `text="Add to basket" after ("Calathea") matched 3 elements; long-pressed the first: role="button" text="Add to basket" (40, 340, 160×36).`; !strings.HasPrefix(lp.Warning, w) {
		t.Errorf("long-press warning: got %q, want it to start with %q", lp.Warning, w)
	}

	rep = p.run(t, dev, "field", false)
	if !rep.OK {
		t.Fatalf("got %s\n%s", lines(rep), dump(rep))
	}
	typed, scrolled := rep.Steps[1].Element, rep.Steps[2].Element
	if typed == nil || typed.Description != `id="acct" role="textbox" text="Account name"` || typed.Box.Width <= 0 {
		t.Errorf("type element: got %+v, want the field as it was found (its placeholder)", typed)
	}
	if scrolled == nil || scrolled.Description != `text="Already have an account? Sign in"` || scrolled.Box.Height <= 0 {
		t.Errorf("scroll-to element: got %+v, want the paragraph it scrolled to", scrolled)
	}
}

// TestSeveralMatches: a text that six buttons carry taps the first, as
// Argent does, and the report warns how many matched and which was
// used; in strict mode the step fails and taps nothing. A type into a
// selector three fields match does the same.
func TestSeveralMatches(t *testing.T) {
	t.Parallel()
	p := newProject(t)
	p.write(".argent/flows/basket.yaml", `steps:
  - launch: "{{URL}}/plants.html"
  - tap: Add to basket
  - assert: { text: { in: { id: basket }, equals: "basket: Boston fern;" } }
`)
	p.write(".argent/flows/fields.yaml", `steps:
  - launch: "{{URL}}/press.html"
  - type: { into: { role: textbox }, text: typed, submit: false }
`)
	dev := device(t, "chromium-cdp-814x600")
	boston := `role="button" text="Add to basket" (40, 140, 160×36)`

	rep := p.runOpts(t, dev, "basket", run.Options{})
	if !rep.OK {
		t.Fatalf("got %s\n%s", lines(rep), dump(rep))
	}
	tap := rep.Steps[1]
	if want := `"Add to basket" matched 6 elements; tapped the first: ` + boston + `. Narrow the selector (id, within, next) to pick one; --strict makes this a failure`; tap.Warning != want {
		t.Errorf("warning: got %q, want %q", tap.Warning, want)
	}
	if tap.Element == nil || tap.Element.Matches != 6 || tap.Element.String() != boston {
		t.Errorf("element: got %+v, want the Boston fern's button of 6", tap.Element)
	}

	rep = p.runOpts(t, dev, "basket", run.Options{Strict: true})
	if got, want := lines(rep), "launch:pass tap:fail assert:skip"; got != want {
		t.Fatalf("strict: got %s, want %s\n%s", got, want, dump(rep))
	}
	if want := `"Add to basket" matched 6 elements and strict mode wants exactly one; it would have tapped the first: ` + boston; !strings.HasPrefix(rep.Steps[1].Reason, want) {
		t.Errorf("strict reason: got %q, want it to start with %q", rep.Steps[1].Reason, want)
	}
	out, err := dev.Check(t.Context(), flow.Condition{Kind: flow.CondHidden, Selector: &flow.Selector{Text: "basket:"}}, 0)
	if err != nil || !out.OK {
		t.Errorf("strict: the basket got something (%v, %+v), want nothing tapped", err, out.Element)
	}

	rep = p.runOpts(t, dev, "fields", run.Options{})
	if typed := rep.Steps[1]; !rep.OK || !strings.HasPrefix(typed.Warning, `role="textbox" matched 3 elements; typed into the first: id="first" role="textbox"`) {
		t.Errorf("type: got %s, warning %q; want a pass that warns of 3 fields", lines(rep), typed.Warning)
	}
	rep = p.runOpts(t, dev, "fields", run.Options{Strict: true})
	if s := rep.Steps[1]; s.Status != flow.StatusFail || !strings.Contains(s.Reason, "matched 3 elements and strict mode wants exactly one; it would have typed into the first") {
		t.Errorf("strict type: got %s %q, want a failure for 3 fields", s.Status, s.Reason)
	}
	out, err = dev.Check(t.Context(), flow.Condition{Kind: flow.CondText, Selector: &flow.Selector{ID: "first"}, Match: flow.MatchEquals, Expected: "one"}, 0)
	if err != nil || !out.OK {
		t.Errorf("strict type: the first field changed (%v, %+v), want nothing typed", err, out.Element)
	}
}

// TestTextCase: equals and contains ignore case, as in Argent; a strict
// run compares case, in assert, await and when: guards alike.
func TestTextCase(t *testing.T) {
	t.Parallel()
	p := newProject(t)
	p.write(".argent/flows/anycase.yaml", `steps:
  - launch: "{{URL}}/app.html"
  - assert: { text: { in: { id: out }, equals: NOT CLICKED } }
  - assert: { text: { in: { id: out }, contains: Not Click } }
  - await: { text: { in: { id: top }, equals: go NOW }, timeout: 500 }
  - when: { text: { in: { id: out }, contains: NOT } }
    steps:
      - echo: met
`)
	p.write(".argent/flows/exactcase.yaml", `steps:
  - launch: "{{URL}}/app.html"
  - assert: { text: { in: { id: out }, equals: not clicked } }
  - await: { text: { in: { id: top }, contains: Go n }, timeout: 500 }
  - when: { text: { in: { id: out }, contains: NOT } }
    steps:
      - echo: met
`)
	dev := device(t, "chromium-cdp-815x600")
	rep := p.runOpts(t, dev, "anycase", run.Options{})
	if got, want := lines(rep), "launch:pass assert:pass assert:pass await:pass when:pass echo:pass:anycase@1"; got != want || !rep.OK {
		t.Errorf("any case: got %s, want %s\n%s", got, want, dump(rep))
	}
	rep = p.runOpts(t, dev, "anycase", run.Options{Strict: true})
	if got, want := lines(rep), "launch:pass assert:fail assert:skip await:skip when:skip echo:skip:anycase@1"; got != want {
		t.Errorf("strict, any case: got %s, want %s\n%s", got, want, dump(rep))
	}
	if got, want := rep.Steps[1].Reason, `element matched id="out" but its text was "not clicked" (wanted to equal "NOT CLICKED", matching case in strict mode)`; got != want {
		t.Errorf("strict reason: got %q, want %q", got, want)
	}
	rep = p.runOpts(t, dev, "exactcase", run.Options{Strict: true})
	if got, want := lines(rep), "launch:pass assert:pass await:pass when:skip echo:skip:exactcase@1"; got != want || !rep.OK {
		t.Errorf("strict, exact case: got %s, want %s\n%s", got, want, dump(rep))
	}
	rep = p.runOpts(t, dev, "exactcase", run.Options{})
	if got, want := lines(rep), "launch:pass assert:pass await:pass when:pass echo:pass:exactcase@1"; got != want {
		t.Errorf("exact case: got %s, want %s\n%s", got, want, dump(rep))
	}
}
