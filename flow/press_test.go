package flow

import (
	"strings"
	"testing"
)

func TestParsePress(t *testing.T) {
	cases := []struct {
		step  string
		key   string
		times int
	}{
		{"press: Enter", "Enter", 1},
		{"press: enter", "Enter", 1},
		{"press: return", "Enter", 1},
		{"press: Esc", "Escape", 1},
		{"press: arrow-up", "ArrowUp", 1},
		{"press: pagedown", "PageDown", 1},
		{"press: F5", "F5", 1},
		{"press: a", "a", 1},
		{`press: "/"`, "/", 1},
		{`press: "7"`, "7", 1},
		{"press: Control+A", "Control+A", 1},
		{"press: ctrl+shift+z", "Control+Shift+z", 1},
		{"press: Shift+Tab", "Shift+Tab", 1},
		{"press: cmd+Enter", "Meta+Enter", 1},
		{"press: Control++", "Control++", 1},
		{`press: "+"`, "+", 1},
		{"press: { key: Backspace, times: 3 }", "Backspace", 3},
		{"press: { key: Tab }", "Tab", 1},
	}
	for _, c := range cases {
		t.Run(c.step, func(t *testing.T) {
			f := mustParseString(t, "steps:\n  - "+c.step+"\n")
			p := directive[*Press](t, f.Steps[0])
			if p.Key != c.key || p.Times != c.times {
				t.Errorf("got %q ×%d, want %q ×%d", p.Key, p.Times, c.key, c.times)
			}
			if got, want := Target(f.Steps[0]), c.key; c.times == 1 && got != want {
				t.Errorf("target: got %q, want %q", got, want)
			}
		})
	}
}

func TestParsePressErrors(t *testing.T) {
	cases := []struct {
		name string
		step string
		want wantErr
	}{
		{"unknown key", "press: Entr", wantErr{"1", 2, KindPress, ProblemValue, `unknown key "Entr" (did you mean "Enter"?); press takes a single character, one of Enter, Tab, Escape,`}},
		{"unknown modifier", "press: Contrl+A", wantErr{"1", 2, KindPress, ProblemValue, `"Contrl" is not a modifier (did you mean "Control"?)`}},
		{"modifier twice", "press: Shift+shift+A", wantErr{"1", 2, KindPress, ProblemValue, "Shift is named twice"}},
		{"ends in a modifier", "press: Control+Shift", wantErr{"1", 2, KindPress, ProblemValue, "ends in a modifier"}},
		{"nothing after plus", "press: Control+", wantErr{"1", 2, KindPress, ProblemValue, `names no key after its last +`}},
		{"number", "press: 7", wantErr{"1", 2, KindPress, ProblemShape, `got the number 7 (quote it: "7")`}},
		{"null", "press:", wantErr{"1", 2, KindPress, ProblemShape, "press needs a key, got null"}},
		{"two characters", "press: ab", wantErr{"1", 2, KindPress, ProblemValue, `unknown key "ab"`}},
		{"map without key", "press: { times: 2 }", wantErr{"1", 2, KindPress, ProblemShape, "press needs key:"}},
		{"map typo", "press: { key: Tab, tims: 2 }", wantErr{"1", 2, KindPress, ProblemUnknownKey, `unknown option "tims" (did you mean "times"?)`}},
		{"times zero", "press: { key: Tab, times: 0 }", wantErr{"1", 2, KindPress, ProblemValue, "times must be a whole number from 1 to 100"}},
		{"times too many", "press: { key: Tab, times: 101 }", wantErr{"1", 2, KindPress, ProblemValue, "times must be a whole number from 1 to 100"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse("keys.yaml", []byte("steps:\n  - "+c.step+"\n"))
			checkErrors(t, "keys.yaml", err, []wantErr{c.want})
		})
	}
	// The message names the file, the step and the line, as every
	// directive's does.
	_, err := Parse("keys.yaml", []byte("steps:\n  - echo: x\n  - press: Entr\n"))
	if want := `keys.yaml: step 2 (line 3): press: unknown key "Entr"`; err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("Error(): got %v, want it to start with %s", err, want)
	}
}

func TestPressSchemaAndRoundTrip(t *testing.T) {
	src := `steps:
  - press: Enter
  - press: Control+A
  - press: { key: Backspace, times: 3 }
  - press: "/"
`
	s := loadSchema(t)
	v := &validator{root: s}
	if errs := v.validate(s, yamlToJSON(t, []byte(src)), "$"); len(errs) > 0 {
		t.Errorf("schema: got errors %v, want none", errs)
	}
	if v.unknown != nil {
		t.Fatalf("the test validator does not implement %v", v.unknown)
	}
	for _, bad := range []string{"steps: [press: { key: Tab, times: 0 }]", "steps: [press: { times: 2 }]", "steps: [press: 3]"} {
		v := &validator{root: s}
		if errs := v.validate(s, yamlToJSON(t, []byte(bad)), "$"); len(errs) == 0 {
			t.Errorf("schema: %s: got no errors, want some", bad)
		}
	}
	f := mustParseString(t, src)
	out, err := Marshal(f)
	if err != nil {
		t.Fatal(err)
	}
	want := "steps:\n  - press: Enter\n  - press: Control+A\n  - press: {key: Backspace, times: 3}\n  - press: /\n"
	if string(out) != want {
		t.Errorf("Marshal: got\n%s\nwant\n%s", out, want)
	}
	back := mustParseString(t, string(out))
	for i, s := range back.Steps {
		got, orig := directive[*Press](t, s), directive[*Press](t, f.Steps[i])
		if *got != *orig {
			t.Errorf("step %d after a round trip: got %+v, want %+v", i+1, *got, *orig)
		}
	}
	if got := FormatStep(f.Steps[2]); got != "press: { key: Backspace, times: 3 }" {
		t.Errorf("FormatStep: got %q", got)
	}
}
