package link

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
)

// BaselinePlan is a baseline of a result that a dry run (CallOptions.DryRun)
// would have written: it takes the place of the directive in the result.
type BaselinePlan struct {
	Path string `json:"path"`
	// Bytes is the size of the PNG.
	Bytes int `json:"bytes"`
	// Updated tells that a file is at Path already.
	Updated bool `json:"updated"`
	// DryRun is always true; it tells a plan from a refusal.
	DryRun bool `json:"dryRun"`
}

// planBaseline applies the rules of writeBaseline to a directive and
// writes nothing: not the file, not its directory. An existing file goes
// through the same checks as for a write (directiveTarget creates nothing
// then); a missing one has its nearest existing directory checked
// against the roots.
func (st *callState) planBaseline(p, content string) any {
	png, roots, why := st.checkBaseline(p, content)
	if why == "" {
		_, err := os.Lstat(p)
		switch {
		case err == nil:
			_, why = directiveTarget(p, roots, ".png", "a PNG file")
		case errors.Is(err, fs.ErrNotExist):
			if real, _ := landing(filepath.Dir(p)); !underAnyRoot(real, roots) {
				why = outsideRoots(p, roots)
			}
		default:
			why = osErrorText(err, "lstat", p)
		}
		if why == "" {
			return BaselinePlan{Path: p, Bytes: len(png), Updated: err == nil, DryRun: true}
		}
	}
	return map[string]any{"path": p, "error": why}
}
