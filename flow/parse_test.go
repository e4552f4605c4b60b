package flow

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"regexp/syntax"
	"slices"
	"strings"
	"testing"
	"time"
)

// wantErr is one expected *Error. step is the printed step path ("" for a
// file-level problem) and msg a substring of Error.Msg.
type wantErr struct {
	step      string
	line      int
	directive Kind
	problem   Problem
	msg       string
}

// checkErrors asserts that err holds exactly wants, in order, for file.
func checkErrors(t *testing.T, file string, err error, wants []wantErr) {
	t.Helper()
	if err == nil {
		t.Fatalf("Parse(%s): got no error, want %d", file, len(wants))
	}
	if !errors.Is(err, ErrInvalid) {
		t.Errorf("errors.Is(err, ErrInvalid): got false, want true (%v)", err)
	}
	got := Errors(err)
	if len(got) != len(wants) {
		t.Fatalf("Parse(%s): got %d errors, want %d:\n%v", file, len(got), len(wants), err)
	}
	for i, w := range wants {
		g := got[i]
		if g.File != file {
			t.Errorf("error %d File: got %q, want %q", i, g.File, file)
		}
		if s := g.Step.String(); s != w.step {
			t.Errorf("error %d Step: got %q, want %q (%v)", i, s, w.step, g)
		}
		if g.Line != w.line {
			t.Errorf("error %d Line: got %d, want %d (%v)", i, g.Line, w.line, g)
		}
		if g.Directive != w.directive {
			t.Errorf("error %d Directive: got %q, want %q (%v)", i, g.Directive, w.directive, g)
		}
		if g.Problem != w.problem {
			t.Errorf("error %d Problem: got %v, want %v (%v)", i, g.Problem, w.problem, g)
		}
		if !strings.Contains(g.Msg, w.msg) {
			t.Errorf("error %d Msg: got %q, want it to contain %q", i, g.Msg, w.msg)
		}
	}
}

// mustParse parses a testdata file or fails the test.
func mustParse(t *testing.T, path string) *Flow {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	f, err := Parse(filepath.Base(path), data)
	if err != nil {
		t.Fatalf("Parse(%s): %v", path, err)
	}
	return f
}

func mustParseString(t *testing.T, src string) *Flow {
	t.Helper()
	f, err := Parse("inline.yaml", []byte(src))
	if err != nil {
		t.Fatalf("Parse: %v\n%s", err, src)
	}
	return f
}

func directive[T Directive](t *testing.T, s *Step) T {
	t.Helper()
	d, ok := s.Directive.(T)
	if !ok {
		t.Fatalf("step %s: got %T, want %T", s.Path, s.Directive, *new(T))
	}
	return d
}

func TestParseValidFiles(t *testing.T) {
	checks := map[string]func(t *testing.T, f *Flow){
		"checkout.yaml": func(t *testing.T, f *Flow) {
			if got, want := len(f.Steps), 18; got != want {
				t.Fatalf("steps: got %d, want %d", got, want)
			}
			if !f.IsEndToEnd() {
				t.Errorf("IsEndToEnd: got false, want true")
			}
			if got, want := directive[*Launch](t, f.Steps[1]).URL, "http://127.0.0.1:8080/index.html"; got != want {
				t.Errorf("launch: got %q, want %q", got, want)
			}
			aw := directive[*Await](t, f.Steps[2])
			if aw.Timeout != DefaultAwaitTimeout || aw.Condition.Kind != CondVisible || aw.Condition.Selector.ID != "home-screen" {
				t.Errorf("await: got %+v, want visible home-screen with the default timeout", aw)
			}
			idle := directive[*Await](t, f.Steps[3])
			if idle.Condition.Kind != CondIdle || idle.Condition.StableFor != DefaultIdleStableFor {
				t.Errorf("idle: got %+v, want idle with the default stableFor", idle.Condition)
			}
			tap := directive[*Tap](t, f.Steps[4])
			if !tap.On.Loose || tap.On.Text != "Products" || tap.Times != 1 {
				t.Errorf("loose tap: got %+v, want loose Products", tap.On)
			}
			if got := directive[*Tap](t, f.Steps[6]).Times; got != 1 {
				t.Errorf("times: got %d, want 1", got)
			}
			ty := directive[*Type](t, f.Steps[7])
			if ty.Submit || ty.Text != "demo@example.com" || ty.Secrets != nil {
				t.Errorf("type: got %+v, want submit false, no secrets", ty)
			}
			sec := directive[*Type](t, f.Steps[8])
			if !sec.Submit || !slices.Equal(sec.Secrets, []string{"DEMO_PASSWORD"}) {
				t.Errorf("secret type: got submit %v secrets %v, want true [DEMO_PASSWORD]", sec.Submit, sec.Secrets)
			}
			if got := directive[*LongPress](t, f.Steps[10]).Duration; got != 1200*time.Millisecond {
				t.Errorf("long-press: got %v, want 1.2s", got)
			}
			as := directive[*Assert](t, f.Steps[11])
			if as.Condition.Kind != CondText || as.Condition.Match != MatchEquals || as.Condition.Expected != "$42.00" {
				t.Errorf("assert: got %+v, want text equals $42.00", as.Condition)
			}
			w := directive[*When](t, f.Steps[12])
			if len(w.Steps) != 1 || w.Steps[0].Path.String() != "13.1" || w.Steps[0].Line != 17 {
				t.Errorf("when steps: got %+v, want one step 13.1 on line 17", w.Steps)
			}
			if got := directive[*Run](t, f.Steps[13]); got.Target != "fragments/pay" || got.File() != "fragments/pay.yaml" || got.Name() != "pay" {
				t.Errorf("run: got %q %q %q, want fragments/pay fragments/pay.yaml pay", got.Target, got.File(), got.Name())
			}
			if got := directive[*Wait](t, f.Steps[14]).Duration; got != 250*time.Millisecond {
				t.Errorf("wait: got %v, want 250ms", got)
			}
			if sn := directive[*Snapshot](t, f.Steps[15]); sn.MaxMismatch != DefaultMaxMismatch || sn.CropOn != nil {
				t.Errorf("snapshot: got %+v, want defaults", sn)
			}
			if sn := directive[*Snapshot](t, f.Steps[16]); sn.MaxMismatch != 0.2 || sn.CropOn.ID != "price-card" {
				t.Errorf("snapshot: got %+v, want maxMismatch 0.2 cropOn price-card", sn)
			}
			tool := directive[*Tool](t, f.Steps[17])
			if tool.Name != "keyboard" || tool.Delay != 100*time.Millisecond || !reflect.DeepEqual(tool.Args, map[string]any{"key": "Escape"}) || tool.ArgsLine != 23 || tool.ArgLines["key"] != 23 {
				t.Errorf("tool: got %+v, want keyboard {key: Escape} delay 100ms on line 23", tool)
			}
		},
		"fragment-login.yaml": func(t *testing.T, f *Flow) {
			if f.ExecutionPrerequisite != "The login screen is open and no user is signed in." || f.PrerequisiteLine != 1 {
				t.Errorf("prerequisite: got %q on line %d, want the sentence on line 1", f.ExecutionPrerequisite, f.PrerequisiteLine)
			}
			if f.IsEndToEnd() {
				t.Errorf("IsEndToEnd: got true, want false")
			}
			sc := directive[*Script](t, f.Steps[0])
			if sc.Path != "../../scripts/seed-user.mjs" || sc.Timeout != 30*time.Second {
				t.Errorf("script: got %+v, want the path and 30s", sc)
			}
			if got := directive[*Type](t, f.Steps[2]); got.Into.ID != "password" || !slices.Equal(got.Secrets, []string{"DEMO_PASSWORD", "OTP_1"}) {
				t.Errorf("type: got into %+v secrets %v, want id password [DEMO_PASSWORD OTP_1]", got.Into, got.Secrets)
			}
		},
		"snapshot-options.yaml": checkSnapshotOptions,
		"selectors.yaml": func(t *testing.T, f *Flow) {
			if got := directive[*Tap](t, f.Steps[2]).On.ID; got != "save-button" {
				t.Errorf("identifier alias: got ID %q, want save-button", got)
			}
			m := directive[*Tap](t, f.Steps[4]).On
			if m.Matches != `^Order #\d+$` || m.Regexp == nil || !m.Regexp.MatchString("Order #12") {
				t.Errorf("matches: got %q %v, want the compiled pattern", m.Matches, m.Regexp)
			}
			a := directive[*Tap](t, f.Steps[7]).On
			if !a.Any || a.After == nil || a.After.Text != "Danger zone" {
				t.Errorf("any: got %+v, want any after Danger zone", a)
			}
			if w := directive[*Tap](t, f.Steps[9]).On.Within; w == nil || !w.Loose || w.Text != "profile-card" {
				t.Errorf("loose scope: got %+v, want loose profile-card", w)
			}
			// Six scopes deep, in the order the YAML nests them; the
			// innermost is a bare string.
			deep := directive[*Tap](t, f.Steps[10]).On
			var texts []string
			for s := range deep.all() {
				texts = append(texts, s.Text)
			}
			if want := []string{"a", "b", "c", "d", "e", "f", "g"}; !slices.Equal(texts, want) {
				t.Errorf("six scopes: got the texts %v in the tree, want %v", texts, want)
			}
			if g := deep.Within.Within.After.Next.Within.Within; g == nil || !g.Loose || g.Text != "g" {
				t.Errorf("innermost scope: got %+v, want loose g", g)
			}
		},
		"conditions.yaml": func(t *testing.T, f *Flow) {
			if got := directive[*Await](t, f.Steps[4]).Timeout; got != 2000500*time.Microsecond {
				t.Errorf("fractional timeout: got %v, want 2.0005s", got)
			}
			idle := directive[*Await](t, f.Steps[5])
			if idle.Condition.StableFor != 400*time.Millisecond || idle.Timeout != 9*time.Second {
				t.Errorf("idle: got %+v, want stableFor 400ms timeout 9s", idle)
			}
			if w := directive[*When](t, f.Steps[10]); w.Condition.Kind != CondPlatform || w.Condition.Platform != "chromium" {
				t.Errorf("platform guard: got %+v, want chromium", w.Condition)
			}
			inner := directive[*When](t, f.Steps[12])
			if got := inner.Steps[1].Path.String(); got != "13.2" {
				t.Errorf("nested path: got %q, want 13.2", got)
			}
			if got := directive[*When](t, inner.Steps[1]).Steps[0].Path.String(); got != "13.2.1" {
				t.Errorf("doubly nested path: got %q, want 13.2.1", got)
			}
		},
		"nested.yaml": func(t *testing.T, f *Flow) {
			args := directive[*Tool](t, f.Steps[2]).Args
			want := map[string]any{
				"baseline": "/work/proj/shots/a.png",
				"current":  "/work/proj/shots/b.png",
				"options": map[string]any{
					"threshold": 0.1, "includeAA": false, "tags": []any{"a", "b"}, "note": nil, "when": "2024-01-02",
				},
			}
			if !reflect.DeepEqual(args, want) {
				t.Errorf("args: got %#v, want %#v", args, want)
			}
		},
		"gestures.yaml": func(t *testing.T, f *Flow) {
			l := directive[*Launch](t, f.Steps[0])
			if target, ok := l.ChromiumTarget(); !ok || target != "../../app/index.html" || !slices.Equal(l.ChromiumArgs, []string{"--lang=en"}) || l.Native != "com.acme.app" {
				t.Errorf("launch map: got %+v, want the chromium path and args", l)
			}
			if tap := directive[*Tap](t, f.Steps[1]); !tap.Point || tap.X != 0.5 || tap.Y != 0.25 || tap.On != nil {
				t.Errorf("point tap: got %+v, want (0.5, 0.25)", tap)
			}
			if tap := directive[*Tap](t, f.Steps[2]); !tap.Point || tap.Times != 2 || tap.Y != 1 {
				t.Errorf("point double tap: got %+v, want (0, 1) twice", tap)
			}
			if lp := directive[*LongPress](t, f.Steps[3]); lp.Duration != DefaultLongPress || lp.On.Text != "Row 3" {
				t.Errorf("long-press: got %+v, want Row 3 with the default hold", lp)
			}
			if s := directive[*ScrollTo](t, f.Steps[5]); s.Direction != "down" || !s.Target.Loose {
				t.Errorf("bare scroll-to: got %+v, want loose target scrolling down", s)
			}
			if s := directive[*ScrollTo](t, f.Steps[6]); s.Direction != "up" || s.Within.ID != "list" {
				t.Errorf("scroll-to: got %+v, want up within list", s)
			}
			if p := directive[*Pinch](t, f.Steps[8]); p.On != nil || p.Scale != 0.5 {
				t.Errorf("pinch: got %+v, want scale 0.5 with no target", p)
			}
			if r := directive[*Rotate](t, f.Steps[9]); r.By != -90 || r.On.Text != "map" {
				t.Errorf("rotate: got %+v, want -90 on map", r)
			}
			if got := directive[*Echo](t, f.Steps[11]).Message; got != "42" {
				t.Errorf("numeric echo: got %q, want 42", got)
			}
			if got := directive[*Echo](t, f.Steps[12]).Message; got != "multi\nline" {
				t.Errorf("multi-line echo: got %q, want multi\\nline", got)
			}
		},
		"empty-steps.yaml": func(t *testing.T, f *Flow) {
			if f.Steps == nil || len(f.Steps) != 0 {
				t.Errorf("steps: got %#v, want an empty list", f.Steps)
			}
		},
	}
	files, err := filepath.Glob("testdata/valid/*.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range files {
		name := filepath.Base(path)
		check, ok := checks[name]
		if !ok {
			t.Errorf("%s has no check in TestParseValidFiles", path)
			continue
		}
		delete(checks, name)
		t.Run(name, func(t *testing.T) {
			f := mustParse(t, path)
			if f.Name != name {
				t.Errorf("Name: got %q, want %q", f.Name, name)
			}
			check(t, f)
		})
	}
	for name := range checks {
		t.Errorf("check for %s has no file in testdata/valid", name)
	}
}

func TestParseInvalidFiles(t *testing.T) {
	cases := map[string][]wantErr{
		"unknown-option.yaml":    {{"3", 4, KindTap, ProblemUnknownKey, `unknown option "foo" (allowed: on, times, x, y, id,`}},
		"unknown-directive.yaml": {{"2", 3, "", ProblemUnknownDirective, `unknown directive "tpa" (did you mean "tap"?)`}},
		"else.yaml":              {{"1", 5, KindWhen, ProblemElse, "when has no else"}},
		"two-directives.yaml":    {{"1", 3, "", ProblemDirectiveCount, "exactly one directive, found tap and type"}},
		"empty-step.yaml":        {{"2", 3, "", ProblemEmptyStep, "empty step"}},
		"bad-regex.yaml":         {{"1", 5, KindAssert, ProblemRegexp, `text.matches: invalid regex "^(\\d+$"`}},
		"bad-selector.yaml":      {{"1", 2, KindTap, ProblemSelector, "within only narrows where to look"}},
		"assert-timeout.yaml":    {{"1", 2, KindAssert, ProblemUnknownKey, "assert takes no timeout"}},
		"nested-when.yaml":       {{"2.2", 6, KindScrollTo, ProblemUnknownKey, `unknown option "directon" (did you mean "direction"?)`}},
		"prerequisite-e2e.yaml":  {{"", 1, "", ProblemPrerequisite, "starts with a launch step (step 2) must not declare executionPrerequisite"}},
		"bare-list.yaml":         {{"", 1, "", ProblemShape, "not a bare list of steps"}},
		"top-level-key.yaml": {
			{"", 1, "", ProblemUnknownKey, `unknown top-level key "stpes" (did you mean "steps"?)`},
			{"", 1, "", ProblemShape, "missing steps:"},
		},
		"syntax.yaml":     {{"", 2, "", ProblemSyntax, "invalid YAML: did not find expected ',' or '}'"}},
		"wrong-type.yaml": {{"1", 2, KindType, ProblemShape, "text must be a non-empty string, got the number 1234"}},
		"several.yaml": {
			{"2", 3, KindAwait, ProblemUnknownKey, `unknown option "visble" (did you mean "visible"?)`},
			{"3", 4, KindSnapshot, ProblemValue, `snapshot name "home page"`},
			{"4.1", 7, KindRun, ProblemValue, "must be relative"},
			{"5", 8, KindWait, ProblemValue, "wait needs a number of milliseconds"},
		},
		"bad-secret.yaml":      {{"1", 2, KindType, ProblemValue, "{{secret:my-password}} names no valid secret"}},
		"go-only-regex.yaml":   {{"1", 2, KindTap, ProblemRegexp, "inline flag group (?i)"}},
		"too-many-scopes.yaml": {{"1", 2, KindTap, ProblemSelector, "more than 6 scopes"}},
		"two-documents.yaml":   {{"", 3, "", ProblemSyntax, "more than one YAML document"}},
		"empty.yaml":           {{"", 0, "", ProblemShape, "the flow file is empty"}},
		"alias-bomb.yaml":      {{"5.2", 13, KindWhen, ProblemSize, "YAML aliases add more than 100000 values to this file once followed (the alias *d here repeats 37771 values)"}},
	}
	files, err := filepath.Glob("testdata/invalid/*.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range files {
		name := filepath.Base(path)
		wants, ok := cases[name]
		if !ok {
			t.Errorf("%s has no case in TestParseInvalidFiles", path)
			continue
		}
		delete(cases, name)
		t.Run(name, func(t *testing.T) {
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			f, err := Parse(name, data)
			if f != nil {
				t.Errorf("Parse: got a flow, want nil")
			}
			checkErrors(t, name, err, wants)
		})
	}
	for name := range cases {
		t.Errorf("case %s has no file in testdata/invalid", name)
	}
}

func TestErrorString(t *testing.T) {
	data, err := os.ReadFile("testdata/invalid/unknown-option.yaml")
	if err != nil {
		t.Fatal(err)
	}
	_, err = Parse("checkout.yaml", data)
	want := `checkout.yaml: step 3 (line 4): tap: unknown option "foo" (allowed: on, times, x, y, id, identifier, text, role, any, within, after, next)`
	if err == nil || err.Error() != want {
		t.Errorf("Error(): got %v, want %s", err, want)
	}
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("errors.As *Error: got false, want true")
	}
	e.Step, e.Directive = nil, ""
	if got, want := e.Error(), `checkout.yaml: line 4, column 26: unknown option "foo" (allowed: on, times, x, y, id, identifier, text, role, any, within, after, next)`; got != want {
		t.Errorf("file-level Error(): got %s, want %s", got, want)
	}
	e.Column = 0
	if got, want := e.Error(), `checkout.yaml: line 4: unknown option "foo"`; !strings.HasPrefix(got, want) {
		t.Errorf("no-column Error(): got %s, want it to start with %s", got, want)
	}
	e.Line = 0
	if got := e.Error(); !strings.HasPrefix(got, "checkout.yaml: unknown option") {
		t.Errorf("no-line Error(): got %s, want the file then the message", got)
	}
}

func TestParseSeveralErrorsJoined(t *testing.T) {
	data, err := os.ReadFile("testdata/invalid/several.yaml")
	if err != nil {
		t.Fatal(err)
	}
	_, err = Parse("several.yaml", data)
	lines := strings.Split(err.Error(), "\n")
	if len(lines) != 4 || !strings.HasPrefix(lines[2], "several.yaml: step 4.1 (line 7): run: ") {
		t.Errorf("joined message: got %q, want four lines, the third for step 4.1", lines)
	}
}

func TestParseStopsAtMaxErrors(t *testing.T) {
	src := "steps:\n" + strings.Repeat("  - tap: 1\n", 15)
	_, err := Parse("many.yaml", []byte(src))
	if got := len(Errors(err)); got != maxErrors {
		t.Errorf("errors: got %d, want %d", got, maxErrors)
	}
}

// TestParseInvalidSteps covers one rule per case on a one-step flow
// "steps:\n  - <step>", so the step is 1 and most problems sit on line 2.
func TestParseInvalidSteps(t *testing.T) {
	cases := []stepErrorCase{
		{"launch empty map", `launch: {}`, wantErr{"1", 2, KindLaunch, ProblemShape, "launch needs a URL or path"}},
		{"launch typo", `launch: { amdroid: x }`, wantErr{"1", 2, KindLaunch, ProblemUnknownKey, `unknown option "amdroid" (did you mean "android"?)`}},
		{"launch number", `launch: 42`, wantErr{"1", 2, KindLaunch, ProblemShape, "got the number 42"}},
		{"launch chromium args", `launch: { chromium: { path: x, args: a } }`, wantErr{"1", 2, KindLaunch, ProblemShape, "chromium.args must be a list of strings"}},
		{"launch chromium key", `launch: { chromium: { url: x } }`, wantErr{"1", 2, KindLaunch, ProblemUnknownKey, `chromium: unknown option "url"`}},
		{"tap null", `tap:`, wantErr{"1", 2, KindTap, ProblemSelector, "missing selector"}},
		{"tap number", `tap: 42`, wantErr{"1", 2, KindTap, ProblemSelector, `got the number 42; quote it ("42")`}},
		{"tap bool", `tap: true`, wantErr{"1", 2, KindTap, ProblemSelector, "got the boolean true"}},
		{"tap list", `tap: [a]`, wantErr{"1", 2, KindTap, ProblemSelector, "got a list"}},
		{"tap empty", `tap: ""`, wantErr{"1", 2, KindTap, ProblemSelector, "the selector text is empty"}},
		{"tap invisible", `tap: "\u200b"`, wantErr{"1", 2, KindTap, ProblemSelector, "no visible character"}},
		{"tap pixels", `tap: { x: 250, y: 0.5 }`, wantErr{"1", 2, KindTap, ProblemValue, "not pixels"}},
		{"tap half point", `tap: { x: 0.5 }`, wantErr{"1", 2, KindTap, ProblemShape, "numeric x and y"}},
		{"tap point and selector", `tap: { x: 0.5, y: 0.5, id: a }`, wantErr{"1", 2, KindTap, ProblemShape, "not both"}},
		{"tap times without on", `tap: { times: 2 }`, wantErr{"1", 2, KindTap, ProblemShape, "needs a target under on:"}},
		{"tap times range", `tap: { on: a, times: 11 }`, wantErr{"1", 2, KindTap, ProblemValue, "times must be a whole number from 1 to 10"}},
		{"tap times fraction", `tap: { on: a, times: 1.5 }`, wantErr{"1", 2, KindTap, ProblemValue, "times must be a whole number"}},
		{"tap selector beside on", `tap: { on: a, id: b }`, wantErr{"1", 2, KindTap, ProblemShape, "takes the selector under on:"}},
		{"tap point beside on", `tap: { on: a, x: 0.5 }`, wantErr{"1", 2, KindTap, ProblemShape, "takes the point under on:"}},
		{"tap typo", `tap: { id: a, roel: b }`, wantErr{"1", 2, KindTap, ProblemUnknownKey, `unknown option "roel" (did you mean "role"?)`}},
		{"selector matches at top", `type: { into: { matches: x }, text: y }`, wantErr{"1", 2, KindType, ProblemUnknownKey, "written text: { matches: <regex> }"}},
		{"selector unknown key", `type: { into: { id: a, foo: 1 }, text: y }`, wantErr{"1", 2, KindType, ProblemUnknownKey, `into: unknown selector key "foo"`}},
		{"nested selector unknown key", `tap: { on: { id: a, within: { idd: b } } }`, wantErr{"1", 2, KindTap, ProblemUnknownKey, `on.within: unknown selector key "idd" (did you mean "id"?)`}},
		{"selector id number", `tap: { id: 7 }`, wantErr{"1", 2, KindTap, ProblemSelector, "id must be a non-empty string, got the number 7"}},
		{"selector text matcher typo", `tap: { text: { match: x } }`, wantErr{"1", 2, KindTap, ProblemUnknownKey, `text: unknown option "match" (did you mean "matches"?)`}},
		{"selector empty matcher", `tap: { text: { matches: "" } }`, wantErr{"1", 2, KindTap, ProblemSelector, "needs a non-empty regex"}},
		{"any false", `tap: { any: false, after: a }`, wantErr{"1", 2, KindTap, ProblemSelector, "any takes only true"}},
		{"any alone", `tap: { any: true }`, wantErr{"1", 2, KindTap, ProblemSelector, "pair it with a scope"}},
		{"any with id", `tap: { any: true, id: a, after: b }`, wantErr{"1", 2, KindTap, ProblemSelector, "drop any or drop id"}},
		{"id and identifier", `tap: { id: a, identifier: b }`, wantErr{"1", 2, KindTap, ProblemSelector, "id or identifier (its alias), not both"}},
		{"empty selector map", `assert: { visible: {} }`, wantErr{"1", 2, KindAssert, ProblemSelector, "visible: a selector needs at least one of id, text or role"}},
		{"long-press zero", `long-press: { on: a, duration: 0 }`, wantErr{"1", 2, KindLongPress, ProblemValue, "duration needs a positive number"}},
		{"long-press without on", `long-press: { duration: 900 }`, wantErr{"1", 2, KindLongPress, ProblemShape, "needs a target under on:"}},
		{"type string", `type: hello`, wantErr{"1", 2, KindType, ProblemShape, "type needs { into"}},
		{"type no into", `type: { text: x }`, wantErr{"1", 2, KindType, ProblemSelector, "type needs into:"}},
		{"type no text", `type: { into: a }`, wantErr{"1", 2, KindType, ProblemShape, "text must be a non-empty string, got nothing"}},
		{"type submit string", `type: { into: a, text: x, submit: "no" }`, wantErr{"1", 2, KindType, ProblemShape, "submit must be true or false"}},
		{"type submit yes", `type: { into: a, text: x, submit: yes }`, wantErr{"1", 2, KindType, ProblemShape, "submit must be true or false"}},
		{"type open secret", `type: { into: a, text: "{{secret:PW" }`, wantErr{"1", 2, KindType, ProblemValue, "is not closed"}},
		{"type digit secret", `type: { into: a, text: "{{secret:1PW}}" }`, wantErr{"1", 2, KindType, ProblemValue, "not starting with a digit"}},
		{"scroll-to selector map", `scroll-to: { id: row }`, wantErr{"1", 2, KindScrollTo, ProblemShape, "under target:"}},
		{"scroll-to no target", `scroll-to: { direction: up }`, wantErr{"1", 2, KindScrollTo, ProblemSelector, "scroll-to needs target:"}},
		{"scroll-to direction", `scroll-to: { target: a, direction: sideways }`, wantErr{"1", 2, KindScrollTo, ProblemValue, "direction must be one of down, up, left, right"}},
		{"scroll-to number", `scroll-to: 3`, wantErr{"1", 2, KindScrollTo, ProblemShape, "scroll-to needs a selector"}},
		{"await string", `await: ready`, wantErr{"1", 2, KindAwait, ProblemShape, "await needs a condition"}},
		{"await no condition", `await: { timeout: 100 }`, wantErr{"1", 2, KindAwait, ProblemShape, "await needs a condition (exists, visible, hidden, text)"}},
		{"await two conditions", `await: { visible: a, hidden: b }`, wantErr{"1", 2, KindAwait, ProblemShape, "exactly one condition, got visible and hidden"}},
		{"await timeout", `await: { visible: a, timeout: -1 }`, wantErr{"1", 2, KindAwait, ProblemValue, "timeout needs a positive number"}},
		{"await timeout string", `await: { visible: a, timeout: 5s }`, wantErr{"1", 2, KindAwait, ProblemValue, `got "5s"`}},
		{"await stableFor", `await: { visible: a, stableFor: 100 }`, wantErr{"1", 2, KindAwait, ProblemShape, "stableFor belongs to await: { idle: true"}},
		{"idle false", `await: { idle: false }`, wantErr{"1", 2, KindAwait, ProblemValue, "idle takes only true"}},
		{"idle mixed", `await: { idle: true, visible: a }`, wantErr{"1", 2, KindAwait, ProblemShape, "mixes idle with visible"}},
		{"idle short timeout", `await: { idle: true, timeout: 100 }`, wantErr{"1", 2, KindAwait, ProblemValue, "at least 600ms to hold still for 250ms"}},
		{"idle long stableFor", `await: { idle: true, stableFor: 5000, timeout: 5000 }`, wantErr{"1", 2, KindAwait, ProblemValue, "at least 5200ms"}},
		{"idle fractional stableFor", `await: { idle: true, stableFor: 1.5 }`, wantErr{"1", 2, KindAwait, ProblemValue, "stableFor needs a whole number"}},
		{"text two comparators", `await: { text: { in: a, contains: x, equals: y } }`, wantErr{"1", 2, KindAwait, ProblemShape, "exactly one of contains, equals or matches"}},
		{"text no in", `await: { text: { contains: x } }`, wantErr{"1", 2, KindAwait, ProblemSelector, "text needs in:"}},
		{"text number", `assert: { text: { in: a, equals: 3 } }`, wantErr{"1", 2, KindAssert, ProblemShape, "quote numbers"}},
		{"text string", `assert: { text: Saved }`, wantErr{"1", 2, KindAssert, ProblemShape, "text needs { in: <selector>"}},
		{"text typo", `assert: { text: { in: a, contain: x } }`, wantErr{"1", 2, KindAssert, ProblemUnknownKey, `text: unknown option "contain" (did you mean "contains"?)`}},
		{"assert idle", `assert: { idle: true }`, wantErr{"1", 2, KindAssert, ProblemShape, "idle has no assert form"}},
		{"assert unknown", `assert: { visible: a, retry: 2 }`, wantErr{"1", 2, KindAssert, ProblemUnknownKey, `unknown option "retry"`}},
		{"wait string", `wait: "500"`, wantErr{"1", 2, KindWait, ProblemValue, `got "500"`}},
		{"wait negative", `wait: -1`, wantErr{"1", 2, KindWait, ProblemValue, "wait needs a number"}},
		{"wait infinite", `wait: .inf`, wantErr{"1", 2, KindWait, ProblemValue, "wait needs a number"}},
		{"snapshot map no name", `snapshot: { maxMismatch: 1 }`, wantErr{"1", 2, KindSnapshot, ProblemShape, "snapshot needs a name"}},
		{"snapshot slash", `snapshot: a/b`, wantErr{"1", 2, KindSnapshot, ProblemValue, "may hold only letters"}},
		{"snapshot mismatch", `snapshot: { name: a, maxMismatch: 150 }`, wantErr{"1", 2, KindSnapshot, ProblemValue, "maxMismatch must be a percent from 0 to 100"}},
		{"snapshot percent string", `snapshot: { name: a, maxMismatch: 5% }`, wantErr{"1", 2, KindSnapshot, ProblemValue, "maxMismatch must be a percent"}},
		{"snapshot typo", `snapshot: { name: a, maxMissmatch: 1 }`, wantErr{"1", 2, KindSnapshot, ProblemUnknownKey, `(did you mean "maxMismatch"?)`}},
		{"run null", `run:`, wantErr{"1", 2, KindRun, ProblemShape, "run needs a path"}},
		{"run backslash", `run: 'shared\login.yaml'`, wantErr{"1", 2, KindRun, ProblemValue, "forward slashes"}},
		{"run absolute", `run: /flows/login.yaml`, wantErr{"1", 2, KindRun, ProblemValue, "must be relative"}},
		{"run drive", `run: C:flows/login.yaml`, wantErr{"1", 2, KindRun, ProblemValue, "must be relative"}},
		{"run yml", `run: login.yml`, wantErr{"1", 2, KindRun, ProblemValue, "must end in .yaml"}},
		{"run upper", `run: Login.YAML`, wantErr{"1", 2, KindRun, ProblemValue, "lowercase .yaml"}},
		{"run trailing slash", `run: shared/`, wantErr{"1", 2, KindRun, ProblemValue, "must end in .yaml"}},
		{"run bad name", `run: my flow.yaml`, wantErr{"1", 2, KindRun, ProblemValue, "file name may hold only"}},
		{"echo map", `echo: { a: 1 }`, wantErr{"1", 2, KindEcho, ProblemShape, "echo needs a message, got a map"}},
		{"echo null", `echo:`, wantErr{"1", 2, KindEcho, ProblemShape, "echo needs a message, got null"}},
		{"tool empty", `tool: ""`, wantErr{"1", 2, KindTool, ProblemShape, "tool needs the tool's name"}},
		{"script bare", `script: seed.mjs`, wantErr{"1", 2, KindScript, ProblemShape, "not a bare path"}},
		{"script no path", `script: { timeout: 5 }`, wantErr{"1", 2, KindScript, ProblemShape, "script needs path:"}},
		{"script js", `script: { path: seed.js }`, wantErr{"1", 2, KindScript, ProblemValue, "must end in .mjs"}},
		{"script upper", `script: { path: seed.MJS }`, wantErr{"1", 2, KindScript, ProblemValue, "lowercase .mjs"}},
		{"script absolute", `script: { path: /tmp/seed.mjs }`, wantErr{"1", 2, KindScript, ProblemValue, "must be relative"}},
		{"script env", `script: { path: seed.mjs, env: {} }`, wantErr{"1", 2, KindScript, ProblemUnknownKey, `unknown option "env"`}},
		{"script timeout", `script: { path: seed.mjs, timeout: 0 }`, wantErr{"1", 2, KindScript, ProblemValue, "timeout needs a positive number"}},
		{"pinch bare", `pinch: map`, wantErr{"1", 2, KindPinch, ProblemShape, "pinch takes a map"}},
		{"pinch no scale", `pinch: { on: map }`, wantErr{"1", 2, KindPinch, ProblemShape, "pinch needs scale"}},
		{"pinch scale one", `pinch: { scale: 1 }`, wantErr{"1", 2, KindPinch, ProblemValue, "not 1"}},
		{"pinch selector", `pinch: { id: map, scale: 2 }`, wantErr{"1", 2, KindPinch, ProblemShape, "under on:"}},
		{"rotate zero", `rotate: { by: 0 }`, wantErr{"1", 2, KindRotate, ProblemValue, "non-zero number of degrees"}},
		{"rotate far", `rotate: { by: 3600 }`, wantErr{"1", 2, KindRotate, ProblemValue, "within ±3000"}},
		{"duplicate key", `tap: { id: a, id: b }`, wantErr{"1", 2, KindTap, ProblemShape, `duplicate key "id" (first at line 2)`}},
		{"step is a directive name", `tap`, wantErr{"1", 2, KindTap, ProblemShape, "write - tap: <value>"}},
		{"step is a string", `hello`, wantErr{"1", 2, "", ProblemShape, `got "hello"`}},
		{"step is a list", `[tap, a]`, wantErr{"1", 2, "", ProblemShape, "got a list"}},
		{"empty map step", `{}`, wantErr{"1", 2, "", ProblemEmptyStep, "empty step"}},
		{"idle directive", `idle: true`, wantErr{"1", 2, "", ProblemUnknownDirective, "write await: { idle: true }"}},
		{"else alone", `else: []`, wantErr{"1", 2, "", ProblemElse, "else without when"}},
		{"step key not a string", `? [a]
    : b`, wantErr{"1", 2, "", ProblemShape, "a map key must be a string"}},
		{"optional", "tap: a\n    optional: true", wantErr{"1", 3, "", ProblemUnknownKey, "optional is not supported"}},
		{"sibling option", "snapshot: home\n    maxMismatch: 1", wantErr{"1", 3, KindSnapshot, ProblemUnknownKey, `unknown option "maxMismatch" beside snapshot: (options go inside the snapshot: value)`}},
		{"tool sibling typo", "tool: x\n    arg: {}", wantErr{"1", 3, KindTool, ProblemUnknownKey, `unknown option "arg" (did you mean "args"?) beside tool:`}},
		{"tool args list", "tool: x\n    args: [1]", wantErr{"1", 3, KindTool, ProblemShape, "args must be a map"}},
		{"tool args nan", "tool: x\n    args: { n: .nan }", wantErr{"1", 3, KindTool, ProblemValue, "not a finite number"}},
		{"tool delay", "tool: x\n    delayMs: -1", wantErr{"1", 3, KindTool, ProblemValue, "delayMs needs a number"}},
		{"tool args cycle", "tool: x\n    args: &a { self: *a }", wantErr{"1", 3, KindTool, ProblemSize, "the alias *a sits inside the value it names"}},
		{"when no steps", `when: { visible: a }`, wantErr{"1", 2, KindWhen, ProblemShape, "when needs a non-empty steps: list"}},
		{"when empty steps", "when: { visible: a }\n    steps: []", wantErr{"1", 3, KindWhen, ProblemShape, "non-empty steps: list"}},
		{"when steps map", "when: { visible: a }\n    steps: { tap: a }", wantErr{"1", 3, KindWhen, ProblemShape, "steps must be a list"}},
		{"when idle", "when: { idle: true }\n    steps: [echo: x]", wantErr{"1", 2, KindWhen, ProblemShape, "when has no idle form"}},
		{"when timeout", "when: { visible: a, timeout: 9 }\n    steps: [echo: x]", wantErr{"1", 2, KindWhen, ProblemUnknownKey, "when takes no timeout"}},
		{"when platform", "when: { platform: windows }\n    steps: [echo: x]", wantErr{"1", 2, KindWhen, ProblemValue, "platform must be one of ios, android, chromium, vega"}},
		{"when platform and ui", "when: { platform: chromium, visible: a }\n    steps: [echo: x]", wantErr{"1", 2, KindWhen, ProblemShape, "takes no other condition"}},
		{"when secret", "when: { visible: { text: '{{secret:PW}}' } }\n    steps: [echo: x]", wantErr{"1", 2, KindWhen, ProblemValue, "when takes no {{secret:"}},
		{"when secret in scope", "when: { visible: { id: a, within: { text: '{{secret:PW}}' } } }\n    steps: [echo: x]", wantErr{"1", 2, KindWhen, ProblemValue, "when takes no {{secret:"}},
		{"when string", "when: ready\n    steps: [echo: x]", wantErr{"1", 2, KindWhen, ProblemShape, "when needs one condition"}},
		{"when typo", "when: { visibel: a }\n    steps: [echo: x]", wantErr{"1", 2, KindWhen, ProblemUnknownKey, `(did you mean "visible"?)`}},
		{"when else key", "when: { visible: a }\n    steps: [echo: x]\n    else: [echo: y]", wantErr{"1", 4, KindWhen, ProblemElse, "when has no else"}},
		{"when bad child", "when: { visible: a }\n    steps: [echo: x, tap: 5]", wantErr{"1.2", 3, KindTap, ProblemSelector, "got the number 5"}},
		{"regex backreference", `tap: { text: { matches: '(a)\1' } }`, wantErr{"1", 2, KindTap, ProblemRegexp, "invalid regex"}},
		{"regex lookahead", `tap: { text: { matches: 'a(?=b)' } }`, wantErr{"1", 2, KindTap, ProblemRegexp, "invalid regex"}},
		{"regex Go named group", `tap: { text: { matches: '(?P<n>a)' } }`, wantErr{"1", 2, KindTap, ProblemRegexp, "(?P<name>"}},
		{"condition regex", `await: { text: { in: a, matches: '[a-' } }`, wantErr{"1", 2, KindAwait, ProblemRegexp, "text.matches: invalid regex"}},
	}
	checkStepErrors(t, cases)
}

func TestParseFileShapes(t *testing.T) {
	cases := []struct {
		name string
		src  string
		want wantErr
	}{
		{"scalar file", "hello\n", wantErr{"", 1, "", ProblemShape, `a flow file is a map with steps:, got "hello"`}},
		{"null steps", "steps:\n", wantErr{"", 1, "", ProblemShape, "steps must be a list of steps, got null"}},
		{"map steps", "steps: { tap: a }\n", wantErr{"", 1, "", ProblemShape, "steps must be a list"}},
		{"prerequisite number", "executionPrerequisite: 3\nsteps: []\n", wantErr{"", 1, "", ProblemShape, "executionPrerequisite must be a string"}},
		{"duplicate steps", "steps: []\nsteps: []\n", wantErr{"", 2, "", ProblemShape, `duplicate key "steps" (first at line 1)`}},
		{"tab indentation", "steps:\n\t- tap: a\n", wantErr{"", 2, "", ProblemSyntax, "invalid YAML"}},
		{"unknown anchor", "steps:\n  - tap: *nope\n", wantErr{"", 0, "", ProblemSyntax, "unknown anchor"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse("shape.yaml", []byte(c.src))
			checkErrors(t, "shape.yaml", err, []wantErr{c.want})
		})
	}
}

func TestParseAliases(t *testing.T) {
	src := `steps:
  - tap: &save { id: save, role: button }
  - assert: { visible: *save }
`
	f := mustParseString(t, src)
	a := directive[*Assert](t, f.Steps[1]).Condition.Selector
	if a.ID != "save" || a.Role != "button" {
		t.Errorf("aliased selector: got %+v, want id save role button", a)
	}
	cyclic := "steps:\n  - tap: &s { text: a, within: *s }\n"
	_, err := Parse("cyclic.yaml", []byte(cyclic))
	checkErrors(t, "cyclic.yaml", err, []wantErr{{"1", 2, KindTap, ProblemSize, "the alias *s sits inside the value it names (anchored at line 2), so it would expand without end"}})
}

func TestParseWhenDepthLimit(t *testing.T) {
	build := func(levels int) string {
		var b strings.Builder
		b.WriteString("steps:\n")
		indent := "  "
		for range levels {
			b.WriteString(indent + "- when: { platform: chromium }\n" + indent + "  steps:\n")
			indent += "    "
		}
		b.WriteString(indent + "- echo: deep\n")
		return b.String()
	}
	mustParseString(t, build(MaxWhenDepth))
	_, err := Parse("deep.yaml", []byte(build(MaxWhenDepth+1)))
	errs := Errors(err)
	if len(errs) != 1 || errs[0].Problem != ProblemShape || !strings.Contains(errs[0].Msg, "nest deeper than 20") || len(errs[0].Step) != MaxWhenDepth+1 {
		t.Errorf("depth %d: got %v, want one nesting error at depth 21", MaxWhenDepth+1, err)
	}
}

// TestParseStepLimit: a file holds at most MaxRunSteps steps, when: blocks
// included, and the step that passes the limit is named.
func TestParseStepLimit(t *testing.T) {
	t.Parallel()
	echoes := func(n int) string { return strings.Repeat("  - echo: x\n", n) }
	mustParseString(t, "steps:\n"+echoes(MaxRunSteps))

	_, err := Parse("long.yaml", []byte("steps:\n"+echoes(MaxRunSteps+1)))
	checkErrors(t, "long.yaml", err, []wantErr{{"10001", MaxRunSteps + 2, "", ProblemSize, "the file holds more than 10000 steps, when: blocks included"}})

	// A when: marker and its steps count: the block's second step is the
	// 10001st.
	src := "steps:\n" + echoes(MaxRunSteps-2) + "  - when: { platform: ios }\n    steps:\n      - echo: a\n      - echo: b\n"
	_, err = Parse("block.yaml", []byte(src))
	checkErrors(t, "block.yaml", err, []wantErr{{"9999.2", MaxRunSteps + 3, "", ProblemSize, "more than 10000 steps"}})
}

// TestParseAliasBudget: aliases may add MaxAliasValues values to a file,
// wherever they are, and not one more; the error names the alias's step
// and line.
func TestParseAliasBudget(t *testing.T) {
	t.Parallel()
	// The anchored list is 1,000 values (the list and 999 numbers), so
	// each alias of it adds 1,000.
	build := func(aliases int) string {
		var b strings.Builder
		b.WriteString("steps:\n  - tool: x\n    args: { v: &big [" + strings.Repeat("0, ", 998) + "0] }\n")
		for range aliases {
			b.WriteString("  - tool: x\n    args: { v: *big }\n")
		}
		return b.String()
	}
	f := mustParseString(t, build(MaxAliasValues/1000))
	if got := len(f.Steps[100].Directive.(*Tool).Args["v"].([]any)); got != 999 {
		t.Fatalf("aliased args: got %d values, want 999", got)
	}
	_, err := Parse("laughs.yaml", []byte(build(MaxAliasValues/1000+1)))
	checkErrors(t, "laughs.yaml", err, []wantErr{{"102", 205, KindTool, ProblemSize, "YAML aliases add more than 100000 values to this file once followed (the alias *big here repeats 1000 values)"}})
}

func TestSelectorScopeLimit(t *testing.T) {
	chain := func(n int) string {
		s := "z"
		for i := range n {
			s = "{ text: t" + string(rune('a'+i)) + ", within: " + s + " }"
		}
		return s
	}
	mustParseString(t, "steps:\n  - tap: "+chain(MaxSelectorScopes)+"\n")
	_, err := Parse("scopes.yaml", []byte("steps:\n  - tap: "+chain(MaxSelectorScopes+1)+"\n"))
	checkErrors(t, "scopes.yaml", err, []wantErr{{"1", 2, KindTap, ProblemSelector, "more than 6 scopes"}})

	// The budget is one count over the tree: siblings spend it too.
	wide := "steps:\n  - tap: { text: a, within: { text: b, after: c, next: d }, after: { text: e, within: f, next: g }, next: h }\n"
	_, err = Parse("wide.yaml", []byte(wide))
	checkErrors(t, "wide.yaml", err, []wantErr{{"1", 2, KindTap, ProblemSelector, "more than 6 scopes"}})
}

func TestRegexCompileError(t *testing.T) {
	_, err := Parse("re.yaml", []byte("steps:\n  - tap: { text: { matches: '(' } }\n"))
	var se *syntax.Error
	if !errors.As(err, &se) {
		t.Fatalf("errors.As(*syntax.Error): got false, want true (%v)", err)
	}
	if se.Code != syntax.ErrMissingParen {
		t.Errorf("syntax code: got %v, want %v", se.Code, syntax.ErrMissingParen)
	}
	es := Errors(err)
	if len(es) != 1 || es[0].Column != 29 {
		t.Errorf("column: got %v, want 29 (the pattern)", es)
	}
}

func TestSecretNames(t *testing.T) {
	cases := []struct {
		text string
		want []string
		bad  string
	}{
		{"plain", nil, ""},
		{"{{secret:A}}", []string{"A"}, ""},
		{"x{{secret:_B2}}y{{secret:A}}z{{secret:_B2}}", []string{"_B2", "A"}, ""},
		{"{{ secret:A }}", nil, ""},
		{"{{secret:}}", nil, "names no valid secret"},
		{"{{secret:A-B}}", nil, "names no valid secret"},
		{"{{secret:A", nil, "not closed"},
		{"{{secret:A}} {{secret:", nil, "not closed"},
	}
	for _, c := range cases {
		got, err := secretNames(nil, c.text)
		switch {
		case c.bad != "" && (err == nil || !strings.Contains(err.Msg, c.bad)):
			t.Errorf("secretNames(%q): got %v, want an error containing %q", c.text, err, c.bad)
		case c.bad == "" && err != nil:
			t.Errorf("secretNames(%q): got %v, want no error", c.text, err)
		case c.bad == "" && !slices.Equal(got, c.want):
			t.Errorf("secretNames(%q): got %v, want %v", c.text, got, c.want)
		}
	}
}

func TestValidName(t *testing.T) {
	for name, want := range map[string]bool{
		"checkout": true, "Check_out-2": true, "a": true,
		"": false, "a/b": false, "..": false, "a.yaml": false, "a b": false, "é": false,
	} {
		if got := ValidName(name); got != want {
			t.Errorf("ValidName(%q): got %v, want %v", name, got, want)
		}
	}
}

func TestLeading(t *testing.T) {
	f := mustParseString(t, "steps:\n  - echo: a\n  - script: { path: s.mjs }\n  - launch: x\n")
	if !f.IsEndToEnd() || f.Leading().Path.String() != "3" {
		t.Errorf("Leading: got %v, want step 3 (launch)", f.Leading())
	}
	frag := mustParseString(t, "executionPrerequisite: On the home page.\nsteps:\n  - run: start\n  - launch: x\n")
	if frag.IsEndToEnd() {
		t.Errorf("IsEndToEnd with a leading run: got true, want false")
	}
	if mustParseString(t, "steps: [echo: a]\n").Leading() != nil {
		t.Errorf("Leading of an echo-only flow: got a step, want nil")
	}
}

func TestChromiumUnsupported(t *testing.T) {
	f := mustParse(t, "testdata/valid/gestures.yaml")
	for s := range f.All() {
		err := s.ChromiumUnsupported()
		bad := s.Kind() == KindPinch || s.Kind() == KindRotate
		if got := errors.Is(err, ErrUnsupported); got != bad {
			t.Errorf("step %s %s: got unsupported %v, want %v", s.Path, s.Kind(), got, bad)
		}
		if bad && !strings.Contains(err.Error(), string(s.Kind())+" is unsupported on chromium") {
			t.Errorf("step %s: got %q, want it to name the directive", s.Path, err)
		}
	}
}

func TestWalkHelpers(t *testing.T) {
	f := mustParse(t, "testdata/valid/nested.yaml")

	nested := f.NestedFlows()
	if len(nested) != 2 {
		t.Fatalf("NestedFlows: got %d, want 2", len(nested))
	}
	n0, n1 := nested[0], nested[1]
	if n0.Name != "inner" || n0.ProjectRoot != "/work/proj" || n0.UpdateBaselines == nil || !*n0.UpdateBaselines || !n0.Followable() {
		t.Errorf("nested[0]: got %+v, want followable inner in /work/proj updating baselines", n0)
	}
	if got, want := n0.FlowsDir()+"\x00"+n0.FileName(), "/work/proj/.argent/flows\x00inner.yaml"; got != want {
		t.Errorf("member key: got %q, want %q", got, want)
	}
	if n1.FlowPath != "/work/proj/elsewhere/other.yaml" || n1.Followable() || n1.UpdateBaselines != nil || n1.Step.Path.String() != "2.1" {
		t.Errorf("nested[1]: got %+v, want an unfollowable flow_path step 2.1", n1)
	}
	for _, c := range []struct {
		n    NestedFlow
		want bool
	}{
		{NestedFlow{Name: "a", ProjectRoot: `C:\proj`}, true},
		{NestedFlow{Name: "a", ProjectRoot: "proj"}, false},
		{NestedFlow{Name: "a", ProjectRoot: "/p/../q"}, false},
		{NestedFlow{Name: "a/b", ProjectRoot: "/p"}, false},
		{NestedFlow{ProjectRoot: "/p"}, false},
	} {
		if got := c.n.Followable(); got != c.want {
			t.Errorf("Followable(%+v): got %v, want %v", c.n, got, c.want)
		}
	}

	runs := f.RunTargets()
	if len(runs) != 1 || runs[0].Target != "frag-echo" || runs[0].Step.Path.String() != "2.3" || runs[0].Step.Line != 12 {
		t.Errorf("RunTargets: got %+v, want frag-echo at step 2.3 line 12", runs)
	}
	if got, want := f.SnapshotNames(), []string{"beta-home", "home"}; !slices.Equal(got, want) {
		t.Errorf("SnapshotNames: got %v, want %v", got, want)
	}
	var tools []string
	for _, ts := range f.ToolSteps() {
		tools = append(tools, ts.Step.Path.String()+" "+ts.Tool.Name)
	}
	if want := []string{"1 flow-execute", "2.1 flow-execute", "3 screenshot-diff"}; !slices.Equal(tools, want) {
		t.Errorf("ToolSteps: got %v, want %v", tools, want)
	}

	var visits []string
	f.Walk(func(s *Step, depth int) bool {
		visits = append(visits, s.Path.String()+"@"+string(rune('0'+depth)))
		return true
	})
	if want := []string{"1@0", "2@0", "2.1@1", "2.2@1", "2.3@1", "3@0", "4@0", "5@0"}; !slices.Equal(visits, want) {
		t.Errorf("Walk: got %v, want %v", visits, want)
	}
	var first []string
	if f.Walk(func(s *Step, _ int) bool { first = append(first, s.Path.String()); return s.Path.String() != "2.1" }) {
		t.Errorf("Walk stopped early: got true, want false")
	}
	if want := []string{"1", "2", "2.1"}; !slices.Equal(first, want) {
		t.Errorf("Walk stopping at 2.1: got %v, want %v", first, want)
	}
	n := 0
	for s := range f.All() {
		n++
		if s.Depth() != len(s.Path)-1 {
			t.Errorf("Depth of %s: got %d, want %d", s.Path, s.Depth(), len(s.Path)-1)
		}
		if n == 3 {
			break
		}
	}
	if n != 3 {
		t.Errorf("All with break: got %d steps, want 3", n)
	}

	plain := mustParse(t, "testdata/valid/gestures.yaml")
	if plain.RunTargets() != nil || plain.NestedFlows() != nil || plain.SnapshotNames() != nil {
		t.Errorf("helpers on a flow without run/snapshot/tool: got non-empty results")
	}
}

func TestDirectives(t *testing.T) {
	want := []Kind{"launch", "tap", "long-press", "type", "scroll-to", "await", "assert", "wait", "snapshot", "run", "when", "echo", "tool", "script", "pinch", "rotate", "press"}
	if !slices.Equal(allKinds, want) {
		t.Errorf("directives: got %v, want %v", allKinds, want)
	}
	for _, k := range want {
		if _, ok := directiveOptions[k]; !ok {
			t.Errorf("directiveOptions[%s]: missing", k)
		}
	}
}

func BenchmarkParse(b *testing.B) {
	data, err := os.ReadFile("testdata/valid/checkout.yaml")
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Parse("checkout.yaml", data); err != nil {
			b.Fatal(err)
		}
	}
}

// stepErrorCase is a one-step flow file, "steps:\n  - <step>", and the
// one error Parse must give for it.
type stepErrorCase struct {
	name string
	step string
	want wantErr
}

// checkStepErrors parses each case's file and checks it gives no flow
// and exactly its error.
func checkStepErrors(t *testing.T, cases []stepErrorCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			src := "steps:\n  - " + c.step + "\n"
			f, err := Parse("one.yaml", []byte(src))
			if f != nil {
				t.Errorf("Parse: got a flow, want nil")
			}
			checkErrors(t, "one.yaml", err, []wantErr{c.want})
		})
	}
}
