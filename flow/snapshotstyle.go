package flow

import (
	"io/fs"
	"strings"
)

// ReadStyle implements Source: the file that ReadStyleFile finds, its
// bytes or why there are none.
func (d Disk) ReadStyle(dir, target string) ([]byte, error) {
	f, _ := d.ReadStyleFile(dir, target)
	return f.Data, styleError(f)
}

// styleError is the error of a stylePath file without bytes: a missing
// file as Node words it (ENOENT …, open '<canonical>'), a refusal as is.
func styleError(f *File) error {
	if f.Err != nil && IsMissing(f.Err) {
		return &OpenError{Path: f.Canonical, Err: fs.ErrNotExist}
	}
	return f.Err
}

// ReadStyleFile returns the CSS file a stylePath names beside dir, as Read
// returns a flow file: the path (dir, a separator, the target as written),
// the canonical of the clean path, and the bytes with their modification
// time in epoch milliseconds. A linked client sends it with what this
// gives. Without bytes, Err wraps fs.ErrNotExist for a missing file and is
// a *RefusedError for anything else: outside the policy's roots (checked
// first, as for a flow), a .css name that links to a file of another
// kind (with a policy), a directory, a file over MaxStyleBytes, one that
// cannot be read.
func (d Disk) ReadStyleFile(dir, target string) (f *File, mtimeMs float64) {
	return d.readKind(dir, target, cssFile)
}

var cssFile = fileKind{
	what:     "a CSS file",
	named:    func(canonical string) bool { return strings.HasSuffix(strings.ToLower(canonical), ".css") },
	max:      MaxStyleBytes,
	tooLarge: styleTooLarge,
}

// styleTooLarge is the refusal of a stylePath file over MaxStyleBytes.
func styleTooLarge(canonical string) string {
	return canonical + " is larger than the 64 KiB cap on a stylePath file"
}
