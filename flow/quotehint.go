package flow

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

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

// at is a 1-based line and column of the YAML.
type at struct{ line, column int }

// quoteHint returns "; quote values …: key: "a: b"" and where that value
// starts when problem is one an unquoted colon causes and a value on line
// (1-based) of data, or on the lines of a { } or [ ] collection that opens
// there, holds ": ". It returns "" otherwise: an unclosed { with no such
// value gets no hint.
func quoteHint(data []byte, line int, problem string) (at, string) {
	if line < 1 || !slices.Contains(colonProblems, problem) {
		return at{}, ""
	}
	lines := strings.Split(string(data), "\n")
	depth := 0
	for i := line - 1; i < len(lines) && i < line-1+maxHintLines; i++ {
		text := stripComment(lines[i])
		if fix, val := colonValue(text); fix != "" {
			where := at{line: i + 1}
			if k := strings.Index(text, val); k >= 0 {
				where.column = utf8.RuneCountInString(text[:k]) + 1
			}
			return where, fmt.Sprintf("; %s: %s", quoteAdvice, fix)
		}
		depth += strings.Count(text, "{") + strings.Count(text, "[") - strings.Count(text, "}") - strings.Count(text, "]")
		if depth <= 0 {
			break
		}
	}
	return at{}, ""
}

// stripComment drops a " #" comment from a line of YAML.
func stripComment(s string) string {
	if i := strings.Index(s, " #"); i >= 0 {
		return s[:i]
	}
	return s
}

// colonValue finds, in one line of YAML, an entry whose plain value holds
// ": " (or ends in ":") and returns it quoted, text: "Time: 10:00", and
// the value as written.
func colonValue(text string) (fix, val string) {
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
		return fmt.Sprintf("%s: %q", key, val), val
	}
	return "", ""
}

// commaHint returns "; quote values …" for an unknown key e of a { } map
// that has no value: what "{ text: Hello, world }" makes of "world".
func commaHint(o *object, e entry) string {
	if o.node.Style&yaml.FlowStyle == 0 || !isNull(e.val) || resolve(e.val).Value != "" {
		return ""
	}
	return fmt.Sprintf("; %q looks like the end of a value cut at a comma: %s", e.name, quoteAdvice)
}

// indicatorAdvice is the hint for a plain value in a { } or [ ] that holds
// one of the characters that end a plain value there (YAML's flow
// indicators): "Is it ok? yes", "a{b}".
const indicatorAdvice = "in a { } or [ ], quote values that contain '?', '{', '}', '[' or ']'"

// indicatorProblems are the YAML errors such a value produces: the
// parser finds the rest of the value where it wants the next entry.
var indicatorProblems = []string{
	"did not find expected ',' or '}'",
	"did not find expected ',' or ']'",
	"did not find expected key",
	"did not find expected node content",
}

// indicatorHint returns "; in a { } …: key: "a? b"" and where that value
// starts when problem is one of indicatorProblems and a plain value of the
// { } or [ ] collection that opens on line (1-based) of data, on that line
// or the ones after it, is cut short by a flow indicator. It returns ""
// otherwise.
func indicatorHint(data []byte, line int, problem string) (at, string) {
	if line < 1 || !slices.Contains(indicatorProblems, problem) {
		return at{}, ""
	}
	lines := strings.Split(string(data), "\n")
	sc := flowScanner{}
	for i := line - 1; i < len(lines) && i < line-1+maxHintLines; i++ {
		col, fix, done := sc.scanLine([]rune(lines[i]))
		switch {
		case fix != "":
			return at{line: i + 1, column: col + 1}, fmt.Sprintf("; %s: %s", indicatorAdvice, fix)
		case done:
			return at{}, ""
		}
	}
	return at{}, ""
}

// flowScanner reads a { } or [ ] collection line by line, as far as the
// hint needs YAML: quotes, nesting, keys and plain values.
type flowScanner struct {
	depth int
	// quote is the quote a scalar spread over lines is open with, or 0.
	quote rune
	// key is the last key read in the collection, for the fix; "" in a
	// [ ] or before a key.
	key string
}

// scanLine reads one line. It returns the 0-based column where a plain
// value cut short by a flow indicator starts, with that value quoted as
// the fix, or done when the collection closed without one.
func (sc *flowScanner) scanLine(l []rune) (col int, fix string, done bool) {
	i := 0
	if sc.quote != 0 {
		i = sc.closeQuote(l, 0)
	}
	for ; i < len(l); i++ {
		c := l[i]
		switch {
		case c == ' ' || c == '\t':
		case c == '#' && (i == 0 || l[i-1] == ' ' || l[i-1] == '\t'):
			return 0, "", false // a comment to the end of the line
		case sc.depth == 0:
			// The block part of the line before the collection opens.
			if c == '{' || c == '[' {
				sc.depth = 1
			}
		case c == '"' || c == '\'':
			sc.quote = c
			i = sc.closeQuote(l, i+1) - 1
		case c == '{' || c == '[':
			sc.depth++
			sc.key = ""
		case c == '}' || c == ']':
			if sc.depth--; sc.depth == 0 {
				return 0, "", true
			}
		case c == ',':
			sc.key = ""
		case c == ':':
		case c == '?' && (i+1 == len(l) || l[i+1] == ' '):
			// An explicit key: "? key".
		default:
			end, stop, cut := plainEnd(l, i)
			if cut {
				return i, sc.fixOf(l, i), false
			}
			if stop < len(l) && l[stop] == ':' {
				sc.key = string(l[i:end])
			}
			i = stop - 1
		}
	}
	return 0, "", false
}

// closeQuote returns the index after the quote sc.quote that closes a
// quoted scalar in l from i on, clearing sc.quote, or len(l) when the
// scalar goes on past the line.
func (sc *flowScanner) closeQuote(l []rune, i int) int {
	for ; i < len(l); i++ {
		switch {
		case sc.quote == '"' && l[i] == '\\':
			i++
		case l[i] == sc.quote && sc.quote == '\'' && i+1 < len(l) && l[i+1] == '\'':
			i++ // '' is a quote inside single quotes
		case l[i] == sc.quote:
			sc.quote = 0
			return i + 1
		}
	}
	return len(l)
}

// plainEnd reads the plain value that starts at l[start] in a flow
// collection: it returns where the value ends (trailing blanks left
// out), where the reading stopped (at the ':', ',', bracket or comment
// that ends it, or the end of the line), and whether a flow indicator cut
// it short: '?', '{' or '[' inside it (a '?' at its start too), or a '}'
// or ']' with more of the value right after it.
func plainEnd(l []rune, start int) (end, stop int, cut bool) {
	if l[start] == '?' {
		return start, start, true
	}
	end = start
	for i := start; i < len(l); i++ {
		c := l[i]
		switch {
		case c == ':' && (i+1 == len(l) || strings.ContainsRune(" \t,[]{}", l[i+1])):
			return end, i, false
		case c == ',' || (c == '#' && (l[i-1] == ' ' || l[i-1] == '\t')):
			return end, i, false
		case c == '?' || c == '{' || c == '[':
			return end, i, true
		case c == '}' || c == ']':
			return end, i, valueGoesOn(l, i+1)
		case c != ' ' && c != '\t':
			end = i + 1
		}
	}
	return end, len(l), false
}

// valueGoesOn reports whether l[i] goes on with a value right after a
// closing bracket, as in "a}b": what no bracket of the collection's own
// is followed by.
func valueGoesOn(l []rune, i int) bool {
	return i < len(l) && !strings.ContainsRune(" \t,]}:#", l[i])
}

// fixOf is the value cut short at l[start] quoted, with its key: what the
// author meant runs on to the next ',' or the bracket that closes the
// collection, the brackets inside it balanced.
func (sc *flowScanner) fixOf(l []rune, start int) string {
	inner, end := 0, start
	for i := start; i < len(l); i++ {
		c := l[i]
		switch {
		case c == '{' || c == '[':
			inner++
		case (c == '}' || c == ']') && inner > 0:
			inner--
		case (c == '}' || c == ']') && !valueGoesOn(l, i+1):
			// The collection's own close.
			return sc.keyed(string(l[start:end]))
		case c == ',' && inner == 0:
			return sc.keyed(string(l[start:end]))
		}
		if c != ' ' && c != '\t' {
			end = i + 1
		}
	}
	return sc.keyed(string(l[start:end]))
}

// keyed writes value quoted, after its key when it has one.
func (sc *flowScanner) keyed(value string) string {
	if sc.key == "" {
		return strconv.Quote(value)
	}
	return sc.key + ": " + strconv.Quote(value)
}
