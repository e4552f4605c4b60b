package flow

import (
	"strings"
	"testing"
)

func TestQuoteHint(t *testing.T) {
	cases := []struct {
		name, src string
		want      wantErr
	}{
		{"colon in a { } value", "steps:\n  - tap: { text: Time: 10:00 }\n",
			wantErr{"", 2, "", ProblemSyntax, `invalid YAML: did not find expected ',' or '}'; quote values that contain ':' or ',': text: "Time: 10:00"`}},
		{"colon in a block value", "steps:\n  - echo: start\n  - echo: Time: 10:00\n",
			wantErr{"", 3, "", ProblemSyntax, `invalid YAML: mapping values are not allowed in this context; quote values that contain ':' or ',': echo: "Time: 10:00"`}},
		{"colon in a { } spread over lines", "steps:\n  - assert: {\n      text: { in: clock, equals: Opens at: 9 } }\n",
			wantErr{"", 3, "", ProblemSyntax, `quote values that contain ':' or ',': equals: "Opens at: 9"`}},
		{"comma in a { } text", "steps:\n  - tap: { text: Hello, world }\n",
			wantErr{"1", 2, KindTap, ProblemUnknownKey, `unknown option "world" (allowed: on, times, x, y, id, identifier, text, role, any, within, after, next); "world" looks like the end of a value cut at a comma: quote values that contain ':' or ','`}},
		{"comma in a nested selector", "steps:\n  - tap: { on: { text: Hello, world }, times: 2 }\n",
			wantErr{"1", 2, KindTap, ProblemUnknownKey, `on: unknown selector key "world" (allowed: id, text, role, any, within, after, next); "world" looks like the end of a value cut at a comma`}},
		{"comma in a { } option", "steps:\n  - type: { into: name, text: Ada, Lovelace }\n",
			wantErr{"1", 2, KindType, ProblemUnknownKey, `"Lovelace" looks like the end of a value cut at a comma: quote values that contain ':' or ','`}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse("quote.yaml", []byte(c.src))
			checkErrors(t, "quote.yaml", err, []wantErr{c.want})
		})
	}
	// No hint where no colon or comma is at fault, and quoting fixes it.
	for _, src := range []string{"steps:\n  - tap: { id: save\n  - echo: x\n", "steps:\n  - tap: { id: a, roel: b }\n"} {
		_, err := Parse("quote.yaml", []byte(src))
		if err == nil || strings.Contains(err.Error(), quoteAdvice) {
			t.Errorf("%q: got %v, want an error without the quoting hint", src, err)
		}
	}
	mustParseString(t, "steps:\n  - tap: { text: \"Time: 10:00\" }\n  - tap: { text: \"Hello, world\" }\n")
}
