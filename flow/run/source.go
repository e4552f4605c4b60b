package run

import "github.com/toolserver/toolserver/flow"

// Source is where a run reads its files: the local disk, or the members a
// linked client sent with the call. The runner never opens a path itself.
type Source interface {
	// Open returns the file that target (as written in a run: step, or
	// <name>.yaml of a nested flow) names in dir, the real directory of
	// the file naming it. An error is for the source failing, not for a
	// missing file (that is File.Err).
	Open(dir, target string) (*flow.File, error)
	// ReadBaseline returns the baseline at path; an error wrapping
	// fs.ErrNotExist when there is none, a *RefusedError when refused.
	ReadBaseline(path string) ([]byte, error)
	// WriteBaseline keeps a new baseline for path: on disk for a local
	// run, for the result (baselineWrites) over a link. updated tells that
	// a baseline was at path before.
	WriteBaseline(path string, png []byte) (updated bool, err error)
	// ReadStyle returns the CSS file a snapshot's stylePath (target, as
	// written) names beside dir, the real directory of the flow file
	// that holds the step, as Open resolves a run: target: an error
	// wrapping fs.ErrNotExist when there is none, a *RefusedError when
	// refused. See snapshotstyle.go.
	ReadStyle(dir, target string) ([]byte, error)
}
