package clientfs

import (
	"bytes"
	"io"
	"io/fs"
	"os"
	"strings"
	"syscall"
)

// TooLarge is the refusal (docs/link-protocol.md, "Client policy") of a file
// over the cap; what names it (its canonical path on the client, "member
// <path>" on the tool-server).
func TooLarge(what string) string {
	return what + " is larger than the 32 MiB cap on a file sent to the tool-server"
}

// LinksToOther is the refusal (docs/link-protocol.md, "Client policy") of a
// name that links to a file of another kind than its own ending says: <name>
// links to a file that is not <kind> ("a YAML file", "a PNG file", "one of
// .png, .yaml").
func LinksToOther(name, kind string) string { return name + " links to a file that is not " + kind }

// LinkToMissing is the refusal of a name that is a symbolic link to
// nothing, where a write would follow it.
func LinkToMissing(name string) string { return name + " is a symbolic link to a missing file" }

// NotRegular is the refusal of a file that is neither a regular file nor
// a directory (a FIFO, a socket, a device).
func NotRegular(p string) string { return p + " is not a regular file" }

// MtimeMs is a file's modification time in epoch milliseconds, with the
// fraction, as Node's stat gives it.
func MtimeMs(fi fs.FileInfo) float64 { return float64(fi.ModTime().UnixNano()) / 1e6 }

// IsYAMLName reports whether a real file name is a YAML file's: a flow may
// be a link to a .yml file, never to a .env.
func IsYAMLName(p string) bool {
	l := strings.ToLower(p)
	return strings.HasSuffix(l, ".yaml") || strings.HasSuffix(l, ".yml")
}

// ReadRegular reads the regular file at p; why is the refusal (Node's
// wording of an OS error, EISDIRRead, NotRegular, or TooLarge past max
// bytes when max > 0) when it cannot.
func ReadRegular(p string, max int64) (data []byte, mtimeMs float64, why string) {
	// Opening a FIFO for reading blocks until it has a writer: check the
	// type first, and open without blocking in case it changed since.
	switch fi, err := os.Stat(p); {
	case err != nil:
		return nil, 0, ErrorText(err, "stat", p)
	case fi.IsDir():
		return nil, 0, EISDIRRead
	case !fi.Mode().IsRegular():
		return nil, 0, NotRegular(p)
	}
	f, err := os.OpenFile(p, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, 0, ErrorText(err, "open", p)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, 0, ErrorText(err, "fstat", p)
	}
	switch {
	case fi.IsDir():
		return nil, 0, EISDIRRead
	case !fi.Mode().IsRegular():
		return nil, 0, NotRegular(p)
	case max > 0 && fi.Size() > max:
		return nil, 0, TooLarge(p)
	}
	// Read into a buffer of the size fstat gives; a file that grew since
	// is read on, up to the cap.
	var buf bytes.Buffer
	buf.Grow(int(fi.Size()) + bytes.MinRead)
	r := io.Reader(f)
	if max > 0 {
		r = io.LimitReader(f, max+1)
	}
	if _, err := buf.ReadFrom(r); err != nil {
		return nil, 0, ErrorText(err, "read", p)
	}
	if max > 0 && int64(buf.Len()) > max {
		return nil, 0, TooLarge(p)
	}
	return buf.Bytes(), MtimeMs(fi), ""
}
