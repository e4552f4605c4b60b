package printable

import "testing"

func TestString(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"home", "home"},
		{"héllo wörld ✓", "héllo wörld ✓"},
		{"\x1b]0;pwned\x07\x1b[2J", `\u001b]0;pwned\u0007\u001b[2J`},
		{"a\nb\tc\r", `a\u000ab\u0009c\u000d`},
		{"del\x7f", `del\u007f`},
		{"c1\u009b31m", `c1\u009b31m`},
		{"bad\xffbyte", `bad\xffbyte`},
		{"", ""},
	} {
		if got := String(c.in); got != c.want {
			t.Errorf("String(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}
