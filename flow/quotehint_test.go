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

// TestIndicatorHint: a plain value in a { } or [ ] cut short by '?', '{',
// '[' or a bracket inside it gets the line and column where it starts
// and the fix that quotes it, as a colon does.
func TestIndicatorHint(t *testing.T) {
	const advice = "in a { } or [ ], quote values that contain '?', '{', '}', '[' or ']'"
	cases := []struct {
		name, src string
		want      string
	}{
		{"a question", "steps:\n  - launch: x\n  - echo: start\n  - echo: more\n  - await: { visible: { text: Is it ok? yes } }\n",
			`q.yaml: line 5, column 31: invalid YAML: did not find expected ',' or '}'; ` + advice + `: text: "Is it ok? yes"`},
		{"a brace", "steps:\n  - tap: { text: a{b} }\n",
			`q.yaml: line 2, column 18: invalid YAML: did not find expected ',' or '}'; ` + advice + `: text: "a{b}"`},
		{"a leading question mark", "steps:\n  - tap: { text: ?x }\n",
			`q.yaml: line 2, column 18: invalid YAML: did not find expected node content; ` + advice + `: text: "?x"`},
		{"a closing brace inside", "steps:\n  - tap: { text: a}b }\n",
			`q.yaml: line 2, column 18: invalid YAML: did not find expected key; ` + advice + `: text: "a}b"`},
		{"nested, after quotes", "steps:\n  - assert: {\n      text: { in: \"a, {\", equals: what? } }\n",
			`q.yaml: line 3, column 35: invalid YAML: did not find expected ',' or '}'; ` + advice + `: equals: "what?"`},
		{"in a list", "steps:\n  - tap: { any: [ a?b, c ] }\n",
			`q.yaml: line 2, column 19: invalid YAML: did not find expected ',' or ']'; ` + advice + `: "a?b"`},
		{"the colon's hint has a column too", "steps:\n  - tap: { text: Time: 10:00 }\n",
			`q.yaml: line 2, column 18: invalid YAML: did not find expected ',' or '}'; quote values that contain ':' or ',': text: "Time: 10:00"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse("q.yaml", []byte(c.src))
			if err == nil || err.Error() != c.want {
				t.Errorf("got  %v\nwant %s", err, c.want)
			}
		})
	}
	// Quoted, each parses; an unclosed { with no such value gets no hint
	// and no column.
	mustParseString(t, "steps:\n  - tap: { text: \"Is it ok? yes\" }\n  - tap: { text: \"a{b}\" }\n  - tap: { text: '?x' }\n")
	_, err := Parse("q.yaml", []byte("steps:\n  - tap: { id: save\n  - echo: x\n"))
	if err == nil || err.Error() != "q.yaml: line 2: invalid YAML: did not find expected ',' or '}'" {
		t.Errorf("an unclosed {: got %v", err)
	}
}
