package client

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/toolserver/toolserver/flow"
	"github.com/toolserver/toolserver/internal/clientfs"
)

// planBaseline applies the rules of writeBaseline to a directive and
// writes nothing: not the file, not its directory. An existing file goes
// through the same checks as for a write (directiveTarget creates nothing
// then); a missing one has its nearest existing directory checked
// against the baseline directory's policy.
func (st *callState) planBaseline(p, content string) any {
	png, policy, why := st.checkBaseline(p, content)
	if why == "" {
		_, err := os.Lstat(p)
		switch {
		case err == nil:
			_, why = directiveTarget(p, policy, ".png", "a PNG file")
		case errors.Is(err, fs.ErrNotExist):
			if !policy.Serves(clientfs.RealPath(filepath.Dir(p))) {
				why = policy.Outside(p)
			}
		default:
			why = clientfs.ErrorText(err, "lstat", p)
		}
		if why == "" {
			return flow.BaselineWrite{Path: p, Plan: &flow.BaselinePlan{Bytes: len(png), Updated: err == nil}}
		}
	}
	return map[string]any{"path": p, "error": why}
}
