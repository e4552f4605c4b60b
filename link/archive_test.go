package link

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolserver/toolserver/snapshot"
	"github.com/toolserver/toolserver/store"
)

// TestMemberArchiveLevels: a PNG member's archive stores the PNG as it is
// (gzip's stored blocks: it is deflated already), any other member is
// deflated; both read back byte for byte as the tool-server reads an
// upload.
func TestMemberArchiveLevels(t *testing.T) {
	m := snapshot.NewImage(40, 30)
	for i := range m.Pix {
		m.Pix[i] = uint8(i * 7)
	}
	png, err := snapshot.EncodePNG(m)
	if err != nil {
		t.Fatal(err)
	}
	yaml := []byte(strings.Repeat("steps:\n  - tap: Sign in\n", 400))
	for _, c := range []struct {
		name   string
		data   []byte
		stored bool
	}{
		{"shot.png", png, true},
		{"flow.yaml", yaml, false},
	} {
		archive, err := tarOneFile(c.name, c.data, 1700000000000)
		if err != nil {
			t.Fatal(err)
		}
		// Below 64 KiB a stored file is one block: its bytes appear as
		// they are.
		if got := bytes.Contains(archive, c.data); got != c.stored {
			t.Errorf("%s: archive holds the bytes verbatim: %v, want %v (%d bytes from %d)", c.name, got, c.stored, len(archive), len(c.data))
		}
		if !c.stored && len(archive) >= len(c.data)/4 {
			t.Errorf("%s: %d bytes deflated to %d, want far fewer", c.name, len(c.data), len(archive))
		}
		path := filepath.Join(t.TempDir(), "up")
		if err := os.WriteFile(path, archive, 0o600); err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(archive)
		hash := hex.EncodeToString(sum[:])
		got, err := readUpload(store.Upload{Path: path, Size: int64(len(archive)), SHA256: hash}, Member{Path: "/p/" + c.name, ContentHash: hash})
		if err != nil || !bytes.Equal(got, c.data) {
			t.Errorf("%s: read back %d bytes, %v; want the %d sent", c.name, len(got), err, len(c.data))
		}
	}
}
