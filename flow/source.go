package flow

import (
	"errors"
	"io/fs"

	"github.com/toolserver/toolserver/internal/clientfs"
	"github.com/toolserver/toolserver/internal/clientpath"
	"github.com/toolserver/toolserver/wire"
)

// File is one flow file as a source answers for it (flow/run's Source:
// the runner's Disk, or the members of a linked call).
type File struct {
	// Path is the naming directory, a separator and the target as written.
	Path string
	// Canonical is the file's real path on the machine that has it; for a
	// missing file, the real path of the nearest existing directory plus
	// the rest. Over a link it is only a key and a message.
	Canonical string
	Spelling  wire.Spelling
	// Data is the file's bytes; nil when Err is set.
	Data []byte
	// Err is why there are no bytes: wrapping fs.ErrNotExist when nothing
	// is there, or a *RefusedError when the client would not send it.
	Err error
}

// RefusedError is a file the client refused to send, with its reason.
type RefusedError struct{ Reason string }

func (e *RefusedError) Error() string { return e.Reason }

// Dir returns the directory a file's run: targets resolve in: the
// directory of its canonical path.
func (f *File) Dir() string { return clientpath.Dir(f.Canonical) }

// IsMissing reports whether err means no file was there.
func IsMissing(err error) bool { return errors.Is(err, fs.ErrNotExist) }

// OpenError is a flow file that is not there.
type OpenError struct {
	Path string
	Err  error
}

func (e *OpenError) Error() string { return clientfs.NotFoundText(e.Path) }

func (e *OpenError) Unwrap() error { return e.Err }
