package flow

import (
	"errors"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// TestMarshalRoundTrip checks, for every valid testdata flow, that
// Parse → Marshal → Parse gives the same steps (compared through
// FormatStep and a second Marshal, which ignore YAML positions).
func TestMarshalRoundTrip(t *testing.T) {
	files, err := filepath.Glob("testdata/valid/*.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range files {
		t.Run(filepath.Base(path), func(t *testing.T) {
			f := mustParse(t, path)
			out, err := Marshal(f)
			if err != nil {
				t.Fatalf("Marshal: %v", err)
			}
			g, err := Parse("again.yaml", out)
			if err != nil {
				t.Fatalf("Parse(Marshal): %v\n%s", err, out)
			}
			if g.ExecutionPrerequisite != f.ExecutionPrerequisite {
				t.Errorf("prerequisite: got %q, want %q", g.ExecutionPrerequisite, f.ExecutionPrerequisite)
			}
			if got, want := formatAll(g), formatAll(f); !slices.Equal(got, want) {
				t.Errorf("steps after the round trip:\ngot  %q\nwant %q", got, want)
			}
			again, err := Marshal(g)
			if err != nil {
				t.Fatal(err)
			}
			if string(again) != string(out) {
				t.Errorf("second Marshal:\ngot\n%s\nwant\n%s", again, out)
			}
			if !reflect.DeepEqual(specs(g), specs(f)) {
				t.Errorf("selector specs differ after the round trip")
			}
		})
	}
}

func formatAll(f *Flow) []string {
	var out []string
	for s := range f.All() {
		out = append(out, s.Path.String()+" "+FormatStep(s))
	}
	return out
}

func specs(f *Flow) []any {
	var out []any
	for s := range f.All() {
		switch d := s.Directive.(type) {
		case *Tap:
			out = append(out, d.On.Spec(), d.X, d.Y, d.Times)
		case *Type:
			out = append(out, d.Into.Spec(), d.Text, d.Submit)
		case *Await:
			out = append(out, d.Condition.Selector.Spec(), d.Timeout, d.Condition.StableFor)
		case *Tool:
			out = append(out, d.Args)
		}
	}
	return out
}

func TestMarshalHandBuilt(t *testing.T) {
	steps := []*Step{
		{Directive: &Launch{URL: "http://127.0.0.1:8080/"}},
		{Directive: &Tap{On: &Selector{ID: "save"}}},
		{Directive: &Tap{Point: true, X: 0.25, Y: 0.5}},
		{Directive: &Type{Into: &Selector{Text: "Email", Loose: true}, Text: "a@b.c", Submit: true}},
		{Directive: &Await{Condition: Condition{Kind: CondVisible, Selector: &Selector{Role: "dialog"}}}},
		{Directive: &Echo{Message: "line one\n  line two"}},
		{Directive: &Tool{Name: "keyboard", Args: map[string]any{"text": "hi", "keys": []any{"Enter"}}}},
		{Directive: &Snapshot{Name: "home", MaxMismatch: DefaultMaxMismatch}},
	}
	out, err := Marshal(&Flow{Steps: steps})
	if err != nil {
		t.Fatal(err)
	}
	want := `steps:
  - launch: http://127.0.0.1:8080/
  - tap: {id: save}
  - tap: {x: 0.25, y: 0.5}
  - type: {into: Email, text: a@b.c}
  - await: {visible: {role: dialog}}
  - echo: "line one\n  line two"
  - tool: keyboard
    args:
      keys:
        - Enter
      text: hi
  - snapshot: home
`
	if string(out) != want {
		t.Errorf("Marshal:\ngot\n%s\nwant\n%s", out, want)
	}
	f, err := Parse("recorded.yaml", out)
	if err != nil {
		t.Fatal(err)
	}
	if got := directive[*Echo](t, f.Steps[5]).Message; got != "line one\n  line two" {
		t.Errorf("echo after the round trip: got %q, want the two lines", got)
	}

	bad := []*Step{
		{Directive: &Tap{}},
		{Directive: &Snapshot{Name: "a b"}},
		{Directive: &Tap{On: &Selector{Text: "a", Loose: true, Role: "button"}}},
		{Directive: &Tap{On: &Selector{Text: "a", Matches: "b"}}},
		{},
	}
	for _, s := range bad {
		if _, err := Marshal(&Flow{Steps: []*Step{s}}); err == nil {
			t.Errorf("Marshal(%+v): got no error, want one", s.Directive)
		}
	}
	e2e := &Flow{ExecutionPrerequisite: "x", Steps: []*Step{{Directive: &Launch{URL: "u"}}}}
	if _, err := Marshal(e2e); !errors.Is(err, ErrInvalid) {
		t.Errorf("Marshal of an end-to-end flow with a prerequisite: got %v, want ErrInvalid", err)
	}
}

func TestMarshalYAMLInterface(t *testing.T) {
	f := mustParse(t, "testdata/valid/fragment-login.yaml")
	out, err := Marshal(f)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(out), "executionPrerequisite: The login screen is open and no user is signed in.\nsteps:\n") {
		t.Errorf("Marshal: got\n%s\nwant the prerequisite first", out)
	}
	node, err := f.MarshalYAML()
	if err != nil || node == nil {
		t.Errorf("MarshalYAML: got %v, %v, want a node", node, err)
	}
	sn, err := f.Steps[0].MarshalYAML()
	if err != nil || sn == nil {
		t.Errorf("Step.MarshalYAML: got %v, %v, want a node", sn, err)
	}
}
