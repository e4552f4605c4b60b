package client_test

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"
	"time"

	linkclient "github.com/toolserver/toolserver/link/client"
	linkserver "github.com/toolserver/toolserver/link/server"
	"github.com/toolserver/toolserver/snapshot"
	"github.com/toolserver/toolserver/store"
	"github.com/toolserver/toolserver/wire"
)

// TestMemberArchiveLevels: a PNG member's archive stores the PNG as it is
// (gzip's stored blocks: it is deflated already), any other member is
// deflated; both read back byte for byte through the upload store and
// Receive, as the tool-server reads them.
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
	ups, err := store.NewUploads(store.UploadConfig{Dir: filepath.Join(t.TempDir(), "uploads"), MaxUpload: 1 << 20, MaxPending: 2 << 20, TTL: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name   string
		data   []byte
		stored bool
	}{
		{"shot.png", png, true},
		{"flow.yaml", yaml, false},
	} {
		archive, err := linkclient.TarOneFile(c.name, c.data, 1700000000000)
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
		// The tool-server's path: the upload store takes the archive,
		// the call's member names it.
		u, err := ups.Receive(t.Context(), bytes.NewReader(archive))
		if err != nil {
			t.Fatal(err)
		}
		mem := wire.Member{Role: wire.RoleTool, Key: "/p/" + c.name, Path: "/p/" + c.name, UploadID: u.ID, ContentHash: u.SHA256}
		got, err := linkserver.Receive(t.Context(), []wire.Member{mem}, ups)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if r := got.Get(mem.Key); r == nil || !bytes.Equal(r.Data, c.data) {
			t.Errorf("%s: read back %+v; want the %d bytes sent", c.name, r, len(c.data))
		}
	}
}
