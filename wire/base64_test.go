package wire

import (
	"bytes"
	"encoding/base64"
	"strings"
	"testing"
)

// TestBase64Size: the decoded size, from the text's length and padding,
// is what the decoder gives, padded or not, with line breaks, and at the
// cap's edge, where 32 MiB and 32 MiB + 1 byte encode to the same length.
func TestBase64Size(t *testing.T) {
	for n := range 10 {
		data := bytes.Repeat([]byte{0xfb}, n)
		padded := base64.StdEncoding.EncodeToString(data)
		for _, s := range []string{padded, strings.TrimRight(padded, "="), padded + "\r\n", "\n" + padded[:len(padded)/2] + "\r\n" + padded[len(padded)/2:]} {
			if got := Base64Size(s); got != int64(n) {
				t.Errorf("Base64Size(%q): got %d, want %d", s, got, n)
			}
		}
	}
	for _, n := range []int{MaxFileBytes - 1, MaxFileBytes, MaxFileBytes + 1, MaxFileBytes + 2} {
		padded := strings.Repeat("A", n/3*4) + []string{"", "AA==", "AAA="}[n%3]
		for _, s := range []string{padded, strings.TrimRight(padded, "=")} {
			if got := Base64Size(s); got != int64(n) || OverCap(got) != (n > MaxFileBytes) {
				t.Errorf("Base64Size of %d bytes (%d characters): got %d, over the cap %v", n, len(s), got, OverCap(got))
			}
		}
	}
}
