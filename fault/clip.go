package fault

import "unicode/utf8"

// MaxMessageBytes bounds an error's message as an answer carries it: a
// message may quote a value from outside (a name, a path, a device id), and
// whatever a caller sent, the answer stays small.
const MaxMessageBytes = 8 << 10

// ellipsis marks a cut.
const ellipsis = "…"

// A ClipOption changes how Clip measures max and where it cuts. The
// callers that quote a value in a message each kept their own measure
// when they came to share Clip, so that no message changed.
type ClipOption uint8

const (
	// Runes counts max in characters, not bytes.
	Runes ClipOption = 1 << iota
	// Beyond keeps max of s and puts the ellipsis after it, so a cut
	// string is longer than max by the ellipsis; without it the ellipsis
	// is counted in max.
	Beyond
	// Bytewise, with Beyond and without Runes, cuts at byte max even
	// inside a character: the cut's last bytes are then not UTF-8, and the
	// caller prints them escaped (as printable.String or %q do).
	Bytewise
)

// Clip returns s cut to at most max bytes at a character boundary, a cut
// one ending in "…". Options measure in characters (Runes), keep max and
// add the ellipsis beyond it (Beyond), or cut inside a character
// (Bytewise).
func Clip(s string, max int, opts ...ClipOption) string {
	var o ClipOption
	for _, opt := range opts {
		o |= opt
	}
	if o&Runes != 0 {
		return clipRunes(s, max, o&Beyond != 0)
	}
	if len(s) <= max {
		return s
	}
	cut := max
	if o&Beyond == 0 {
		cut -= len(ellipsis)
	} else if o&Bytewise != 0 {
		return s[:cut] + ellipsis
	}
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + ellipsis
}

// clipRunes is Clip counting characters (a byte that is not UTF-8 counts
// as one); the ellipsis is one of the max unless beyond.
func clipRunes(s string, max int, beyond bool) string {
	if utf8.RuneCountInString(s) <= max {
		return s
	}
	keep := max
	if !beyond {
		keep--
	}
	i := 0
	for k := range s {
		if i == keep {
			return s[:k] + ellipsis
		}
		i++
	}
	return s
}
