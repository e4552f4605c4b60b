package wire

import (
	"errors"
	"strings"
)

// The limits of the link. Other packages that need one refer to it here.
const (
	// MaxFileBytes caps one file sent with a call (a member, a file input), and
	// the total of a call's flow members (the 32 MiB of docs/link-protocol.md,
	// "Client policy").
	MaxFileBytes = 32 << 20
	// MaxInlineBytes is what the client puts in the call body; other
	// members go through POST /upload, one gzipped tar each.
	MaxInlineBytes = 256 << 10
	// MaxDepth is the deepest run: chain the client follows and the runner
	// runs: the flow named by the call is level 0 and each run: fragment
	// or nested flow adds one (docs/link-protocol.md, "Members").
	MaxDepth = 20
	// MaxMembers caps the members of one call, so a call cannot make the
	// server hold an unbounded table.
	MaxMembers = 4096
)

// ErrOverCap is content whose bytes are over MaxFileBytes.
var ErrOverCap = errors.New("larger than the 32 MiB cap")

// OverCap reports whether a file of size bytes is over the cap. Every
// check of a file's size against the cap is this one, on bytes: on the
// decoded size of content sent as text (Base64Size), never on the text.
func OverCap(size int64) bool { return size > MaxFileBytes }

// Base64Size returns how many bytes the standard base64 text s decodes
// to, padded or not, from its length and padding alone, so that content
// is measured against the cap before it is decoded; line breaks, which
// the decoder skips, do not count. It is exact for text that decodes. The
// length of the text is not a measure: 32 MiB and 32 MiB + 1 byte both
// fill their last group of four and encode to the same length.
func Base64Size(s string) int64 {
	s = strings.TrimRight(s, "\r\n")
	n := int64(len(s) - strings.Count(s, "\n") - strings.Count(s, "\r"))
	switch {
	case strings.HasSuffix(s, "=="):
		n -= 2
	case strings.HasSuffix(s, "="):
		n--
	}
	return n/4*3 + n%4*3/4
}
