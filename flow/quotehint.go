package flow

import (
	"fmt"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"
)

// quoteAdvice is the hint for the commonest YAML mistake in a flow: an
// unquoted value that holds ": " (a clock, a label) or, in a { } map, a
// comma.
const quoteAdvice = "quote values that contain ':' or ','"

// colonProblems are the YAML errors an unquoted "key: a: b" produces: in
// a block, a second mapping value; in a { } or [ ] collection, an entry
// the parser cannot close.
var colonProblems = []string{
	"mapping values are not allowed in this context",
	"did not find expected ',' or '}'",
	"did not find expected ',' or ']'",
	"did not find expected key",
}

// maxHintLines bounds how far quoteHint reads on from the line of the
// error, for a { } map spread over lines.
const maxHintLines = 20

// quoteHint returns "; quote values …: key: "a: b"" when problem is one
// an unquoted colon causes and a value on line (1-based) of data, or on
// the lines of a { } or [ ] collection that opens there, holds ": ". It
// returns "" otherwise: an unclosed { with no such value gets no hint.
func quoteHint(data []byte, line int, problem string) string {
	if line < 1 || !slices.Contains(colonProblems, problem) {
		return ""
	}
	lines := strings.Split(string(data), "\n")
	depth := 0
	for i := line - 1; i < len(lines) && i < line-1+maxHintLines; i++ {
		text := stripComment(lines[i])
		if fix := colonValue(text); fix != "" {
			return fmt.Sprintf("; %s: %s", quoteAdvice, fix)
		}
		depth += strings.Count(text, "{") + strings.Count(text, "[") - strings.Count(text, "}") - strings.Count(text, "]")
		if depth <= 0 {
			break
		}
	}
	return ""
}

// stripComment drops a " #" comment from a line of YAML.
func stripComment(s string) string {
	if i := strings.Index(s, " #"); i >= 0 {
		return s[:i]
	}
	return s
}

// colonValue finds, in one line of YAML, an entry whose plain value holds
// ": " (or ends in ":") and returns it quoted: text: "Time: 10:00".
func colonValue(text string) string {
	text = strings.TrimLeft(strings.TrimSpace(text), "- ")
	for _, seg := range strings.FieldsFunc(text, func(r rune) bool { return strings.ContainsRune(",{}[]", r) }) {
		seg = strings.TrimSpace(seg)
		if strings.ContainsAny(seg, `"'`) {
			continue
		}
		key, val, ok := strings.Cut(seg, ": ")
		val = strings.TrimSpace(val)
		if !ok || val == "" || !(strings.Contains(val, ": ") || strings.HasSuffix(val, ":")) {
			continue
		}
		return fmt.Sprintf("%s: %q", key, val)
	}
	return ""
}

// commaHint returns "; quote values …" for an unknown key e of a { } map
// that has no value: what "{ text: Hello, world }" makes of "world".
func commaHint(o *object, e entry) string {
	if o.node.Style&yaml.FlowStyle == 0 || !isNull(e.val) || resolve(e.val).Value != "" {
		return ""
	}
	return fmt.Sprintf("; %q looks like the end of a value cut at a comma: %s", e.name, quoteAdvice)
}
