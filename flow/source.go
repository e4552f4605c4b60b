package flow

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/toolserver/toolserver/internal/atomicfile"
	"github.com/toolserver/toolserver/internal/clientpath"
)

// Spelling tells how the directory of a file lists its name (link seed,
// "Spelling"): listed as written, listed with another case, or absent.
type Spelling struct {
	State       string `json:"state"` // "listed", "case_folded" or "absent"
	Actual      string `json:"actual,omitempty"`
	Addressable *bool  `json:"addressable,omitempty"`
}

// The states of a Spelling.
const (
	SpellListed     = "listed"
	SpellCaseFolded = "case_folded"
	SpellAbsent     = "absent"
)

// File is one flow file as a Source answers for it.
type File struct {
	// Path is the naming directory, a separator and the target as written.
	Path string
	// Canonical is the file's real path on the machine that has it; for a
	// missing file, the real path of the nearest existing directory plus
	// the rest. Over a link it is only a key and a message.
	Canonical string
	Spelling  Spelling
	// Data is the file's bytes; nil when Err is set.
	Data []byte
	// Err is why there are no bytes: wrapping fs.ErrNotExist when nothing
	// is there, or a *RefusedError when the client would not send it.
	Err error
}

// RefusedError is a file the client refused to send, with its reason.
type RefusedError struct{ Reason string }

func (e *RefusedError) Error() string { return e.Reason }

// Source is where a run reads its files: the local disk, or the members a
// linked client sent with the call. The runner never opens a path itself.
type Source interface {
	// Open returns the file that target (as written in a run: step, or
	// <name>.yaml of a nested flow) names in dir, the real directory of
	// the file naming it. An error is for the source failing, not for a
	// missing file (that is File.Err).
	Open(dir, target string) (*File, error)
	// ReadBaseline returns the baseline at path; an error wrapping
	// fs.ErrNotExist when there is none, a *RefusedError when refused.
	ReadBaseline(path string) ([]byte, error)
	// WriteBaseline keeps a new baseline for path: on disk for a local
	// run, for the result (baselineWrites) over a link. updated tells that
	// a baseline was at path before.
	WriteBaseline(path string, png []byte) (updated bool, err error)
}

// Dir returns the directory a file's run: targets resolve in: the
// directory of its canonical path.
func (f *File) Dir() string { return clientpath.Dir(f.Canonical) }

// Disk is the Source of a local run: the files on this machine.
type Disk struct{}

// Open implements Source.
func (d Disk) Open(dir, target string) (*File, error) {
	p := filepath.Join(dir, filepath.FromSlash(target))
	f := &File{Path: dir + string(filepath.Separator) + target}
	f.Canonical = RealPath(p)
	f.Spelling = SpellingOf(filepath.Dir(p), filepath.Base(p))
	st, err := os.Stat(p)
	switch {
	case err != nil:
		f.Err = err
	case st.IsDir():
		f.Err = fmt.Errorf("EISDIR: illegal operation on a directory, read")
	default:
		f.Data, f.Err = os.ReadFile(p)
	}
	return f, nil
}

// OpenFile opens the entry flow of a local run by its path.
func (d Disk) OpenFile(path string) (*File, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	return d.Open(filepath.Dir(abs), filepath.Base(abs))
}

// ReadBaseline implements Source.
func (d Disk) ReadBaseline(path string) ([]byte, error) { return os.ReadFile(path) }

// WriteBaseline implements Source.
func (d Disk) WriteBaseline(path string, png []byte) (bool, error) {
	_, err := os.Stat(path)
	updated := err == nil
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return false, err
	}
	// Through a temp file and one rename: a crash never leaves half a PNG.
	return updated, atomicfile.WriteFile(path, png)
}

// RealPath returns the real path of p: symlinks resolved, or for a path
// that does not exist, the real path of its nearest existing directory
// with the rest of p appended (seed, member canonical).
func RealPath(p string) string {
	abs, err := filepath.Abs(p)
	if err != nil {
		return p
	}
	if r, err := filepath.EvalSymlinks(abs); err == nil {
		return r
	}
	rest := []string{}
	cur := abs
	for {
		parent := filepath.Dir(cur)
		rest = append([]string{filepath.Base(cur)}, rest...)
		if parent == cur {
			return abs
		}
		if r, err := filepath.EvalSymlinks(parent); err == nil {
			return filepath.Join(append([]string{r}, rest...)...)
		}
		cur = parent
	}
}

// SpellingOf tells how dir lists name, from a real directory listing. An
// unreadable directory counts as listed (seed, "Spelling").
func SpellingOf(dir, name string) Spelling {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return Spelling{State: SpellListed}
	}
	var folded string
	for _, e := range ents {
		if e.Name() == name {
			return Spelling{State: SpellListed}
		}
		if folded == "" && strings.EqualFold(e.Name(), name) {
			folded = e.Name()
		}
	}
	if folded != "" {
		ok := ValidName(strings.TrimSuffix(folded, ".yaml")) && strings.HasSuffix(folded, ".yaml")
		return Spelling{State: SpellCaseFolded, Actual: folded, Addressable: &ok}
	}
	return Spelling{State: SpellAbsent}
}

// IsMissing reports whether err means no file was there.
func IsMissing(err error) bool { return errors.Is(err, fs.ErrNotExist) }
