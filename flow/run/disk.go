package run

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/toolserver/toolserver/flow"
	"github.com/toolserver/toolserver/internal/atomicfile"
	"github.com/toolserver/toolserver/internal/clientfs"
	"github.com/toolserver/toolserver/wire"
)

// Disk is the Source of a local run: the files on this machine. It is also how
// a client of the link reads the flow files and stylesheets it sends, so a file
// reads the same on both ends of a link (docs/link-protocol.md, "Members": the
// runner resolves a target by the client's rule). It lives with the runner, not
// the language: parsing a flow reads and writes no file.
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
func (d Disk) Open(dir, target string) (*flow.File, error) {
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
func (d Disk) Read(dir, target string) (f *flow.File, mtimeMs float64) {
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
func (d Disk) readKind(dir, target string, k fileKind) (f *flow.File, mtimeMs float64) {
	spelled := dir + string(filepath.Separator) + target
	canonical, landErr := clientfs.Land(spelled)
	spelling := wire.Spelling{State: wire.SpellListed}
	if k.spelled != nil {
		spelling = k.spelled(spelled)
	}
	f = &flow.File{Path: spelled, Canonical: canonical, Spelling: spelling}
	refuse := func(why string) (*flow.File, float64) {
		f.Err = &flow.RefusedError{Reason: why}
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
func (d Disk) OpenFile(path string) (*flow.File, error) {
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
	return spellingOf(filepath.Dir(p), filepath.Base(p))
}

// spellingOf tells how dir lists name, from a real directory listing. An
// unreadable directory counts as listed (docs/link-protocol.md, "Spelling").
func spellingOf(dir, name string) wire.Spelling {
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
		ok := flow.ValidFileName(folded)
		return wire.Spelling{State: wire.SpellCaseFolded, Actual: folded, Addressable: &ok}
	}
	return wire.Spelling{State: wire.SpellAbsent}
}

// ReadStyle implements Source: the file that ReadStyleFile finds, its
// bytes or why there are none.
func (d Disk) ReadStyle(dir, target string) ([]byte, error) {
	f, _ := d.ReadStyleFile(dir, target)
	return f.Data, styleError(f)
}

// styleError is the error of a stylePath file without bytes: a missing
// file as Node words it (ENOENT …, open '<canonical>'), a refusal as is.
func styleError(f *flow.File) error {
	if f.Err != nil && flow.IsMissing(f.Err) {
		return &flow.OpenError{Path: f.Canonical, Err: fs.ErrNotExist}
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
// kind (with a policy), a directory, a file over flow.MaxStyleBytes, one that
// cannot be read.
func (d Disk) ReadStyleFile(dir, target string) (f *flow.File, mtimeMs float64) {
	return d.readKind(dir, target, cssFile)
}

var cssFile = fileKind{
	what:     "a CSS file",
	named:    func(canonical string) bool { return strings.HasSuffix(strings.ToLower(canonical), ".css") },
	max:      flow.MaxStyleBytes,
	tooLarge: styleTooLarge,
}

// styleTooLarge is the refusal of a stylePath file over flow.MaxStyleBytes.
func styleTooLarge(canonical string) string {
	return canonical + " is larger than the 64 KiB cap on a stylePath file"
}
