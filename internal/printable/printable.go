// Package printable makes a string from outside safe to print on a
// terminal: every control character (C0, DEL and C1) and every byte that
// is not UTF-8 is written as an escape, so a run's label, a flow's name or
// a path in a report cannot forge a line of output, retitle a window or
// clear a screen.
package printable

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// String returns s with each control character written \u00XX and each
// invalid byte \xXX. A string with none is returned as it is.
func String(s string) string {
	if clean(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case control(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

// clean reports whether s holds nothing String would escape.
func clean(s string) bool {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c < 0x20 || c == 0x7f {
				return false
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if (r == utf8.RuneError && size == 1) || control(r) {
			return false
		}
		i += size
	}
	return true
}

// control reports whether r is a C0 or C1 control character or DEL.
func control(r rune) bool { return r < 0x20 || r == 0x7f || (r >= 0x80 && r <= 0x9f) }
