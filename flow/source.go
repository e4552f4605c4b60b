package flow

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/toolserver/toolserver/internal/atomicfile"
	"github.com/toolserver/toolserver/internal/clientfs"
	"github.com/toolserver/toolserver/internal/clientpath"
	"github.com/toolserver/toolserver/wire"
)

// File is one flow file as a Source answers for it.
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

// Disk is the Source of a local run: the files on this machine. It is also how
// a client of the link reads the flow files it sends, so a file reads the same
// on both ends of a link (docs/link-protocol.md, "Members": the runner resolves
// a target by the client's rule).
type Disk struct {
	// Policy, when set, is the client policy of docs/link-protocol.md: a file
	// whose real path is outside its roots, a .yaml name that links to a
	// file that is not YAML, or one over the 32 MiB cap is refused, as a
	// client refuses to send it. Nil reads every file, as a local run
	// always has: docs/link-protocol.md lists a cycle, the depth limit and a
	// case_folded spelling as the checks of a run without a link.
	Policy *clientfs.Policy
}

// Open implements Source.
func (d Disk) Open(dir, target string) (*File, error) {
	f, _ := d.Read(dir, target)
	return f, nil
}

// Read returns the file target names beside dir, with its modification
// time in epoch milliseconds when it has bytes (a client sends it with
// them). The path is dir, a separator and target as written; the
// canonical and the spelling are those of the clean path, the one the
// runner's filepath.Join and Node's path.resolve both reach. Without
// bytes, Err wraps fs.ErrNotExist for a missing file and is a
// *RefusedError, worded as Node words it, for anything else.
func (d Disk) Read(dir, target string) (f *File, mtimeMs float64) {
	return d.readKind(dir, target, yamlFile)
}

// fileKind is what a Disk reads for a client: flow files, stylesheets.
type fileKind struct {
	// what names it in a refusal ("a YAML file").
	what string
	// named tells that a canonical path has the kind's extension; with a
	// policy, a name of the kind that links to another file is refused.
	named func(canonical string) bool
	// spelled gives the file's Spelling; nil lists it as written.
	spelled func(path string) wire.Spelling
	// max caps the bytes (0: the client's cap with a policy, none
	// without); tooLarge words the refusal of a file over max.
	max      int64
	tooLarge func(canonical string) string
}

var yamlFile = fileKind{what: "a YAML file", named: clientfs.IsYAMLName, spelled: SpellingAt}

// readKind reads a file of kind k as Read describes.
func (d Disk) readKind(dir, target string, k fileKind) (f *File, mtimeMs float64) {
	spelled := dir + string(filepath.Separator) + target
	canonical, landErr := clientfs.Land(spelled)
	spelling := wire.Spelling{State: wire.SpellListed}
	if k.spelled != nil {
		spelling = k.spelled(spelled)
	}
	f = &File{Path: spelled, Canonical: canonical, Spelling: spelling}
	refuse := func(why string) (*File, float64) {
		f.Err = &RefusedError{Reason: why}
		return f, 0
	}
	// The directory check comes first: a missing file outside the roots
	// is refused, not missing (docs/link-protocol.md, "Client policy").
	if !d.Policy.Serves(canonical) {
		return refuse(d.Policy.Outside(target))
	}
	if landErr != "" {
		return refuse(landErr)
	}
	st, err := os.Stat(canonical)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		f.Err = err
		return f, 0
	case err != nil:
		return refuse(clientfs.ErrorText(err, "stat", canonical))
	case st.IsDir():
		return refuse(clientfs.EISDIRRead)
	case d.Policy != nil && !k.named(canonical):
		// A .yaml (.css) name that links to a .env would send that file.
		return refuse(clientfs.LinksToOther(target, k.what))
	case k.max > 0 && st.Size() > k.max:
		return refuse(k.tooLarge(canonical))
	}
	var max int64
	if d.Policy != nil || k.max > 0 {
		max = wire.MaxFileBytes
	}
	data, mt, why := clientfs.ReadRegular(canonical, max)
	switch {
	case why != "":
		return refuse(why)
	case k.max > 0 && int64(len(data)) > k.max:
		// It grew since the stat.
		return refuse(k.tooLarge(canonical))
	}
	f.Data = data
	return f, mt
}

// OpenFile opens the entry flow of a local run by its path.
func (d Disk) OpenFile(path string) (*File, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	return d.Open(filepath.Dir(abs), filepath.Base(abs))
}

// ReadBaseline implements Source. The policy does not apply to baselines.
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

// SpellingAt tells how the directory of the clean path p lists its base
// name (docs/link-protocol.md, "Spelling").
func SpellingAt(p string) wire.Spelling {
	p = filepath.Clean(p)
	return SpellingOf(filepath.Dir(p), filepath.Base(p))
}

// SpellingOf tells how dir lists name, from a real directory listing. An
// unreadable directory counts as listed (docs/link-protocol.md, "Spelling").
func SpellingOf(dir, name string) wire.Spelling {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return wire.Spelling{State: wire.SpellListed}
	}
	var folded string
	for _, e := range ents {
		if e.Name() == name {
			return wire.Spelling{State: wire.SpellListed}
		}
		if folded == "" && strings.EqualFold(e.Name(), name) {
			folded = e.Name()
		}
	}
	if folded != "" {
		ok := ValidFileName(folded)
		return wire.Spelling{State: wire.SpellCaseFolded, Actual: folded, Addressable: &ok}
	}
	return wire.Spelling{State: wire.SpellAbsent}
}

// IsMissing reports whether err means no file was there.
func IsMissing(err error) bool { return errors.Is(err, fs.ErrNotExist) }

// OpenError is a flow file that is not there.
type OpenError struct {
	Path string
	Err  error
}

func (e *OpenError) Error() string { return clientfs.NotFoundText(e.Path) }

func (e *OpenError) Unwrap() error { return e.Err }
