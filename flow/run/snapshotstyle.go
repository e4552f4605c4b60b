package run

import (
	"errors"
	"fmt"
	"unicode/utf8"

	"github.com/toolserver/toolserver/flow"
)

// snapshotCSS returns the CSS a snapshot applies for its capture only: its
// style:, then the content of its stylePath file, joined by a newline; ""
// when it has neither. The file resolves beside the real file that holds
// the step, as a run: target does, and is read from the run's source: the
// disk in a local run, the members a linked client sent otherwise. The
// error names the snapshot, the stylePath as written, the flow file and
// the reason (the file's path is in the reason).
func (r *Runner) snapshotCSS(fr *frame, d *flow.Snapshot) (string, error) {
	if d.StylePath == "" {
		return d.Style, nil
	}
	fail := func(err error) (string, error) {
		return "", fmt.Errorf("snapshot %q: stylePath %q of %s: %w", d.Name, d.StylePath, fr.file.Canonical, err)
	}
	b, err := r.opts.Source.ReadStyle(fr.file.Dir(), d.StylePath)
	switch {
	case err != nil:
		return fail(err)
	case len(b) > flow.MaxStyleBytes:
		return fail(fmt.Errorf("the file is %d bytes; the CSS of a capture is at most %d bytes (64 KiB)", len(b), flow.MaxStyleBytes))
	case !utf8.Valid(b):
		return fail(errors.New("the file is not UTF-8 text"))
	}
	css := string(b)
	if d.Style != "" {
		css = d.Style + "\n" + css
	}
	return css, nil
}
