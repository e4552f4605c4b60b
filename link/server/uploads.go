package server

import (
	"archive/tar"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"strings"

	"github.com/toolserver/toolserver/internal/clientfs"
	"github.com/toolserver/toolserver/internal/clientpath"
	"github.com/toolserver/toolserver/store"
	"github.com/toolserver/toolserver/wire"
)

// Uploads is where Receive takes uploaded members from.
type Uploads interface {
	Take(id string) (store.Upload, error)
	Remove(u store.Upload)
}

// readUpload checks an uploaded member against its contentHash and reads
// the one file of its gzipped tar, refusing absolute or ".." names, links,
// several files and anything over the cap, while reading.
func readUpload(u store.Upload, m wire.Member) ([]byte, error) {
	if m.ContentHash == "" || !strings.EqualFold(m.ContentHash, u.SHA256) {
		return nil, unprocessable("member %q: contentHash %q does not match the upload (sha256 %s)", m.Path, m.ContentHash, u.SHA256)
	}
	f, err := os.Open(u.Path)
	if err != nil {
		return nil, unprocessable("member %q: read upload: %v", m.Path, err)
	}
	defer f.Close()
	// The store hashed the archive while receiving it.
	zr, err := gzip.NewReader(f)
	if err != nil {
		return nil, unprocessable("member %q: the upload is not a gzipped tar: %v", m.Path, err)
	}
	defer zr.Close()
	// A gzip bomb stops here: at most the cap plus the tar framing of one
	// file is inflated.
	tr := tar.NewReader(io.LimitReader(zr, wire.MaxFileBytes+64<<10))
	var data []byte
	found := false
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, unprocessable("member %q: the upload is not a valid tar (or over the 32 MiB cap): %v", m.Path, err)
		}
		name := hdr.Name
		if path.IsAbs(name) || strings.HasPrefix(name, "\\") || clientpath.HasDotDot(name) {
			return nil, unprocessable("member %q: the upload holds an unsafe name %q", m.Path, name)
		}
		switch hdr.Typeflag {
		case tar.TypeDir:
			continue
		case tar.TypeReg:
		default:
			return nil, unprocessable("member %q: the upload holds %q, which is not a regular file (links are refused)", m.Path, name)
		}
		if found {
			return nil, unprocessable("member %q: the upload holds more than one file", m.Path)
		}
		if wire.OverCap(hdr.Size) {
			return nil, unprocessable("%s", clientfs.TooLarge(fmt.Sprintf("member %q", m.Path)))
		}
		// The header's size, within the cap, is the file's length (the tar
		// reader holds the entry to it): one buffer of that size, not the
		// doublings of a read to the end. The archive is on local disk
		// already, so the buffer waits on no client.
		data = make([]byte, hdr.Size)
		if _, err := io.ReadFull(tr, data); err != nil {
			return nil, unprocessable("member %q: read the upload: %v", m.Path, err)
		}
		found = true
	}
	if !found {
		return nil, unprocessable("member %q: the upload holds no file", m.Path)
	}
	return data, nil
}
