package clientfs

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/toolserver/toolserver/internal/clientpath"
)

// Policy is the client policy of docs/link-protocol.md ("Client policy"): the
// directories a client serves files from, by their real location, and
// the 32 MiB cap on a file it sends. A nil *Policy serves every file, as
// a local run always has.
type Policy struct {
	// Roots are real, clean, absolute directories, none inside another.
	Roots []string
}

// ClientRoots returns the policy of a call whose flow file is flowPath
// (as spelled) with real path flowCanonical, and whose project_root is
// projectRoot ("" when the call has none): project_root and its
// .argent/flows, the directory of the flow file as spelled and of its
// real file, and the project <P> of a flow file under <P>/.argent/flows/
// by either path. A directory that does not exist is no root; a root
// inside another adds nothing, so a refusal names the outermost ones.
func ClientRoots(flowPath, flowCanonical, projectRoot string) *Policy {
	var cands []string
	if filepath.IsAbs(projectRoot) {
		cands = append(cands, projectRoot, clientpath.LocalFlowsDir(projectRoot))
	}
	cands = append(cands, filepath.Dir(flowPath), filepath.Dir(flowCanonical))
	for _, f := range []string{flowPath, flowCanonical} {
		if p, ok := savedFlowProject(f); ok {
			cands = append(cands, p)
		}
	}
	var real []string
	for _, c := range cands {
		r, err := filepath.EvalSymlinks(c)
		if err != nil || !filepath.IsAbs(r) {
			continue
		}
		if st, err := os.Stat(r); err != nil || !st.IsDir() {
			continue
		}
		if !slices.Contains(real, r) {
			real = append(real, r)
		}
	}
	p := &Policy{Roots: []string{}}
	for _, r := range real {
		inner := slices.ContainsFunc(real, func(o string) bool { return o != r && UnderDir(r, o) })
		if !inner {
			p.Roots = append(p.Roots, r)
		}
	}
	return p
}

// savedFlowProject returns <P> for a file under <P>/.argent/flows/, the
// innermost such <P>.
func savedFlowProject(file string) (string, bool) {
	parts := strings.Split(file, string(filepath.Separator))
	for i := len(parts) - 3; i >= 0; i-- {
		if parts[i] == clientpath.ArgentDirName && parts[i+1] == clientpath.FlowsDirName {
			p := strings.Join(parts[:i], string(filepath.Separator))
			if p == "" {
				p = string(filepath.Separator)
			}
			return p, true
		}
	}
	return "", false
}

// UnderDir reports whether p is dir or lies under it; both are clean
// absolute paths.
func UnderDir(p, dir string) bool {
	if p == dir {
		return true
	}
	if !strings.HasSuffix(dir, string(filepath.Separator)) {
		dir += string(filepath.Separator)
	}
	return strings.HasPrefix(p, dir)
}

// Serves reports whether the real path p is under one of the roots; a nil
// policy serves every path.
func (pol *Policy) Serves(p string) bool {
	if pol == nil {
		return true
	}
	return slices.ContainsFunc(pol.Roots, func(r string) bool { return UnderDir(p, r) })
}

// Outside is the refusal (docs/link-protocol.md, "Client policy") of target,
// whose real path is under no root: <target> is outside every root this client
// serves (<directories>).
func (pol *Policy) Outside(target string) string {
	return fmt.Sprintf("%s is outside every root this client serves (%s)", target, strings.Join(pol.Roots, ", "))
}
