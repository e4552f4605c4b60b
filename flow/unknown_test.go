package flow

import (
	"strings"
	"testing"
)

func TestUnknownDirectiveSuggests(t *testing.T) {
	all := "; the directives are launch, tap, long-press, type, scroll-to, await, assert, wait, snapshot, run, when, echo, tool, script, pinch, rotate, press"
	cases := []struct{ key, want string }{
		{"click", `unknown directive "click" (did you mean "tap"?)` + all},
		{"Click", `unknown directive "Click" (did you mean "tap"?)`},
		{"fill", `(did you mean "type"?)`},
		{"input", `(did you mean "type"?)`},
		{"goto", `(did you mean "launch"?)`},
		{"open", `(did you mean "launch"?)`},
		{"navigate", `(did you mean "launch"?)`},
		{"screenshot", `(did you mean "snapshot"?)`},
		{"expect", `(did you mean "assert"?)`},
		{"sleep", `(did you mean "wait"?)`},
		{"key", `(did you mean "press"?)`},
		{"keyboard", `(did you mean "press"?)`},
		{"longPress", `(did you mean "long-press"?)`},
		{"scrollTo", `(did you mean "scroll-to"?)`},
		{"scroll_to", `(did you mean "scroll-to"?)`},
		{"tpa", `(did you mean "tap"?)`},
		{"asert", `(did you mean "assert"?)`},
		{"snapshto", `(did you mean "snapshot"?)`},
		{"frobnicate", `unknown directive "frobnicate"` + all},
	}
	for _, c := range cases {
		t.Run(c.key, func(t *testing.T) {
			_, err := Parse("typo.yaml", []byte("steps:\n  - echo: first\n  - "+c.key+": { text: Save }\n"))
			checkErrors(t, "typo.yaml", err, []wantErr{{"2", 3, "", ProblemUnknownDirective, c.want}})
			if c.key == "frobnicate" && strings.Contains(err.Error(), "did you mean") {
				t.Errorf("a word like no directive: got %q, want no suggestion", err)
			}
		})
	}
	_, err := Parse("typo.yaml", []byte("steps:\n  - click: Save\n"))
	if want := `typo.yaml: step 1 (line 2): unknown directive "click" (did you mean "tap"?); the directives are launch, tap,`; err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("Error(): got %v, want it to start with %s", err, want)
	}
}
