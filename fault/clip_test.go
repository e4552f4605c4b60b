package fault

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// TestClipMeasures: each option gives what the message it serves always
// printed; the references are the helpers Clip replaced, kept here as
// they were.
func TestClipMeasures(t *testing.T) {
	byteCut := func(s string, n int) string { // cmd/toolserver's shorten and clip
		if len(s) <= n {
			return s
		}
		return s[:n] + "…"
	}
	validCut := func(s string, n int) string { // cmd/toolserver's capped
		if len(s) > n {
			return strings.ToValidUTF8(s[:n], "") + "…"
		}
		return s
	}
	runeWithin := func(s string, n int) string { // report/summary's clip
		if utf8.RuneCountInString(s) <= n {
			return s
		}
		i := 0
		for k := range s {
			if i == n-1 {
				return s[:k] + "…"
			}
			i++
		}
		return s
	}
	runeBeyond := func(s string, n int) string { // tool/storybooktool's capText
		r := []rune(s)
		if len(r) > n {
			return string(r[:n]) + "…"
		}
		return s
	}
	inputs := []string{"", "a", "abcdef", "héllo wörld", "日本語のテキスト", strings.Repeat("é", 9), "ab日c"}
	for _, s := range inputs {
		for n := 1; n <= 12; n++ {
			for _, c := range []struct {
				name      string
				got, want string
			}{
				{"Beyond|Bytewise", Clip(s, n, Beyond, Bytewise), byteCut(s, n)},
				{"Beyond", Clip(s, n, Beyond), validCut(s, n)},
				{"Runes", Clip(s, n, Runes), runeWithin(s, n)},
				{"Runes|Beyond", Clip(s, n, Runes, Beyond), runeBeyond(s, n)},
			} {
				if c.got != c.want {
					t.Errorf("Clip(%q, %d, %s): got %q, want %q", s, n, c.name, c.got, c.want)
				}
			}
		}
	}
}

// TestClip: the default bounds the whole result, ellipsis included, and
// never splits a character.
func TestClip(t *testing.T) {
	for _, c := range []struct {
		s    string
		max  int
		want string
	}{
		{"short", 10, "short"},
		{"abcdefghij", 6, "abc…"},
		{"ééééé", 6, "é…"},
	} {
		got := Clip(c.s, c.max)
		if got != c.want || len(got) > c.max {
			t.Errorf("Clip(%q, %d): got %q, want %q", c.s, c.max, got, c.want)
		}
	}
}
