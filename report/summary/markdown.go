package summary

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/toolserver/toolserver/fault"
	"github.com/toolserver/toolserver/internal/printable"
)

// The caps, in runes, on a string from outside: a name, a selector or a
// path, and a reason (a sentence the runner or a page made).
const (
	maxString = 200
	maxReason = 400
)

// Code writes s, a string from outside, as a Markdown code span: its
// control characters escaped (a newline is \u000a, so it cannot end the
// line or the list item) and its format characters too (visible), capped at maxString runes, between backtick
// fences longer than any run of backticks in it. Inside a code span
// nothing is markup: not <script>, not a | or a *, not a link, and
// GitHub makes no mention or issue link of @team or #12 there.
func Code(s string) string {
	s = fault.Clip(visible(printable.String(s)), maxString, fault.Runes)
	if s == "" {
		return "(empty)"
	}
	fence := strings.Repeat("`", longestRun(s, '`')+1)
	// One space on both sides is stripped by the renderer, unless the
	// span is all spaces: it keeps a leading or trailing backtick off
	// the fence, and keeps the spaces of " a " that it would strip.
	if s[0] == '`' || s[len(s)-1] == '`' || s[0] == ' ' && s[len(s)-1] == ' ' && strings.Trim(s, " ") != "" {
		s = " " + s + " "
	}
	return fence + s + fence
}

// Text writes s, a short phrase from outside (where a limit came from:
// "default on chromium", "--max-mismatch", ".argent/toolserver.yaml"), as
// it is when it holds only letters, digits, spaces and punctuation that
// is not markup in running text, else as Code.
func Text(s string) string {
	if s == "" || strings.Contains(s, "://") || strings.Contains(strings.ToLower(s), "www.") || utf8.RuneCountInString(s) > maxString {
		return Code(s)
	}
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9':
		case strings.ContainsRune(" .,:/-=%", r):
		default:
			return Code(s)
		}
	}
	return s
}

// visible escapes the format characters of s (bidirectional overrides,
// zero-width joiners and spaces), which would make a name read as
// another in the comment, as \u{XXXX}.
func visible(s string) string {
	if strings.IndexFunc(s, isFormat) < 0 {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if isFormat(r) {
			fmt.Fprintf(&b, `\u{%04x}`, r)
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

func isFormat(r rune) bool { return unicode.Is(unicode.Cf, r) }

// longestRun is the length of the longest run of c in s.
func longestRun(s string, c byte) int {
	longest, run := 0, 0
	for i := 0; i < len(s); i++ {
		if s[i] != c {
			run = 0
			continue
		}
		run++
		longest = max(longest, run)
	}
	return longest
}
