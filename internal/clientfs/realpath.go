// Package clientfs owns the rules for files on the machine that has them,
// as a client of the link reads them and as a local run reads them: the
// real path of a file (or of its nearest existing directory), the client
// policy's roots and refusals, the 32 MiB cap, a read that never blocks on
// a FIFO, and Node's wording of operating-system errors, which every
// client of the protocol quotes. flow, link and the tool adapters all call
// it, and flow may import neither of the others, hence a leaf of its own.
// Its sibling clientpath handles paths a machine may only compare, never
// open.
package clientfs

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
)

// Land returns where p lands on this machine (docs/link-protocol.md, a member's
// canonical): its real path, or, when a component is missing, the real
// path of the nearest existing directory with the rest of p appended.
// errText is the operating system's refusal other than a missing
// component (a link loop, a file used as a directory, no permission), as
// Node words it.
//
// p is made absolute and cleaned first, so "dir/sub/../x" is dir/x even
// when sub is a symbolic link: a run: target resolves as Node's
// path.resolve resolves it, lexically, and so does the runner's
// filepath.Join on the other end.
func Land(p string) (canonical, errText string) {
	abs, err := filepath.Abs(p)
	if err != nil {
		return p, err.Error()
	}
	_, err = os.Stat(abs)
	if err == nil {
		r, rerr := filepath.EvalSymlinks(abs)
		if rerr == nil {
			return r, ""
		}
		err = rerr
	}
	canonical = nearestReal(abs)
	if errors.Is(err, fs.ErrNotExist) {
		return canonical, ""
	}
	// os.Stat carries the errno (ELOOP, ENOTDIR, EACCES) that
	// EvalSymlinks words in its own way.
	return canonical, ErrorText(err, "realpath", abs)
}

// RealPath returns the real path of p: symbolic links resolved, or for a
// path that does not exist, the real path of its nearest existing
// directory with the rest of p appended. It is Land without the error.
func RealPath(p string) string {
	r, _ := Land(p)
	return r
}

// nearestReal returns the real path of the nearest existing ancestor of
// the clean absolute path p, with the rest of p appended.
func nearestReal(p string) string {
	rest := ""
	for cur := p; ; {
		parent := filepath.Dir(cur)
		if parent == cur {
			return p
		}
		rest = filepath.Join(filepath.Base(cur), rest)
		if r, err := filepath.EvalSymlinks(parent); err == nil {
			return filepath.Join(r, rest)
		}
		cur = parent
	}
}
