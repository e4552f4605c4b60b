package client

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolserver/toolserver/internal/clientfs"
	"github.com/toolserver/toolserver/wire"
)

// The 32 MiB cap on inline content is on the decoded bytes: 32 MiB + 1
// byte encodes to as many base64 characters as 32 MiB (both fill their
// last group of four), so a check on the text let one byte too many
// through.

// zerosBase64 is the standard base64 of n zero bytes, built without
// encoding them.
func zerosBase64(n int) string {
	return strings.Repeat("A", n/3*4) + []string{"", "AA==", "AAA="}[n%3]
}

// TestCapOnDecodedSize: on the client, a baseline of the result of
// exactly 32 MiB is written and one byte more refused, writing nothing
// (the tool-server's half is link/server's TestCapOnDecodedSize).
func TestCapOnDecodedSize(t *testing.T) {
	t.Parallel()
	atCap, over := zerosBase64(wire.MaxFileBytes), zerosBase64(wire.MaxFileBytes+1)
	t.Run("client", func(t *testing.T) {
		t.Parallel()
		writeBaselineAtCap(t, atCap, over)
	})
}

// writeBaselineAtCap: on the client, a baseline of exactly 32 MiB (atCap,
// base64) is written, one byte more (over) refused, writing nothing.
func writeBaselineAtCap(t *testing.T, atCap, over string) {
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(root, "proj", ".argent", "flows", "__baselines__", "big")
	st := &callState{writable: map[string]*clientfs.Policy{dir: nil}}
	for _, tc := range []struct {
		n       int
		zeros   string
		name    string
		refusal string
	}{
		{wire.MaxFileBytes, atCap, "cap.png", ""},
		{wire.MaxFileBytes + 1, over, "over.png", " is larger than the 32 MiB cap on a baseline"},
	} {
		p := filepath.Join(dir, tc.name)
		// The PNG signature and a zero byte are "iVBORw0KGgoA", three
		// groups; the zeros of 9 bytes fewer are the same text without
		// its first three groups.
		written, why := st.writeBaseline(p, "iVBORw0KGgoA"+tc.zeros[12:])
		if tc.refusal != "" {
			if why != p+tc.refusal {
				t.Errorf("baseline of %d bytes: got %q %q, want the refusal %q", tc.n, written, why, p+tc.refusal)
			}
			if _, err := os.Lstat(p); !os.IsNotExist(err) {
				t.Errorf("baseline of %d bytes: got %v, want nothing written", tc.n, err)
			}
			continue
		}
		fi, err := os.Stat(p)
		if why != "" || written != p || err != nil || fi.Size() != int64(tc.n) {
			t.Errorf("baseline of %d bytes: got %q %q (%v), want %s written with %d bytes", tc.n, written, why, err, p, tc.n)
		}
	}
}
