package fault

import "unicode/utf8"

// MaxMessageBytes bounds an error's message as an answer carries it: a
// message may quote a value from outside (a name, a path, a device id), and
// whatever a caller sent, the answer stays small.
const MaxMessageBytes = 8 << 10

// Clip returns s cut to at most max bytes at a character boundary, a cut
// one ending in "…".
func Clip(s string, max int) string {
	if len(s) <= max {
		return s
	}
	cut := max - len("…")
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}
