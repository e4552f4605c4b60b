package link

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// The client's side of "Client policy": which directories a call may send
// files from, and the refusal texts of the seed's table. The checks run on
// real paths, so a symbolic link never widens what a call sends.

// eisdirText is the seed's text for a member that is a directory (Node's
// read error, which clients of this protocol quote).
const eisdirText = "EISDIR: illegal operation on a directory, read"

// outsideRoots is the refusal of a file whose real path is under no root.
func outsideRoots(target string, roots []string) string {
	return fmt.Sprintf("%s is outside every root this client serves (%s)", target, strings.Join(roots, ", "))
}

// clientRoots returns the directories a call may send files from (seed,
// "Client policy"), each by its real location: project_root and its
// .argent/flows, the directory of the flow file as spelled and of its real
// file, and the project <P> of a flow file under <P>/.argent/flows/ by
// either path. A directory that does not exist is no root; a root inside
// another adds nothing, so a refusal names the outermost ones.
func clientRoots(flowPath, flowCanonical string, projectRoot any) []string {
	var cands []string
	if pr, ok := projectRoot.(string); ok && filepath.IsAbs(pr) {
		cands = append(cands, pr, filepath.Join(pr, ".argent", "flows"))
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
		if !inList(real, r) {
			real = append(real, r)
		}
	}
	out := real[:0:0]
	for _, r := range real {
		inner := false
		for _, o := range real {
			if o != r && underDir(r, o) {
				inner = true
				break
			}
		}
		if !inner {
			out = append(out, r)
		}
	}
	return out
}

// savedFlowProject returns <P> for a file under <P>/.argent/flows/, the
// innermost such <P>.
func savedFlowProject(file string) (string, bool) {
	parts := strings.Split(file, string(filepath.Separator))
	for i := len(parts) - 3; i >= 0; i-- {
		if parts[i] == ".argent" && parts[i+1] == "flows" {
			p := strings.Join(parts[:i], string(filepath.Separator))
			if p == "" {
				p = string(filepath.Separator)
			}
			return p, true
		}
	}
	return "", false
}

// underDir reports whether p is dir or lies under it; both are clean
// absolute paths.
func underDir(p, dir string) bool {
	if p == dir {
		return true
	}
	if !strings.HasSuffix(dir, string(filepath.Separator)) {
		dir += string(filepath.Separator)
	}
	return strings.HasPrefix(p, dir)
}

// underAnyRoot reports whether the real path p is under one of roots.
func underAnyRoot(p string, roots []string) bool {
	for _, r := range roots {
		if underDir(p, r) {
			return true
		}
	}
	return false
}

func inList(list []string, s string) bool {
	for _, e := range list {
		if e == s {
			return true
		}
	}
	return false
}

// landing is where a spelled path lands on this client (seed, a member's
// canonical): its real path, or, when a component is missing, the real
// path of the nearest existing directory with the rest appended. errText
// is the operating system's refusal other than a missing component (a link
// loop, a file used as a directory, no permission), as Node words it.
//
// The path is not cleaned first: "dir/link/../x" resolves ".." after the
// link, as the kernel does.
func landing(spelled string) (canonical, errText string) {
	p := spelled
	if !filepath.IsAbs(p) {
		abs, err := filepath.Abs(p)
		if err != nil {
			return p, err.Error()
		}
		p = abs
	}
	_, err := os.Stat(p)
	if err == nil {
		r, rerr := filepath.EvalSymlinks(p)
		if rerr == nil {
			return r, ""
		}
		err = rerr
	}
	canonical = nearestReal(p)
	if errors.Is(err, fs.ErrNotExist) {
		return canonical, ""
	}
	return canonical, osErrorText(err, "realpath", p)
}

// nearestReal returns the real path of p's nearest existing ancestor with
// the rest of p appended.
func nearestReal(p string) string {
	var rest []string
	at := p
	for {
		i := strings.LastIndexByte(at, filepath.Separator)
		if i < 0 {
			return p
		}
		parent := at[:i]
		if i == 0 {
			parent = at[:1]
		}
		rest = append([]string{at[i+1:]}, rest...)
		if parent == at {
			return p
		}
		if r, err := filepath.EvalSymlinks(parent); err == nil {
			return filepath.Join(append([]string{r}, rest...)...)
		}
		at = parent
	}
}

// nodeErrnos are the errors a client reports as Node does (code, libuv
// text), so a refusal reads the same from every client of the protocol.
var nodeErrnos = map[syscall.Errno][2]string{
	syscall.ENOENT:       {"ENOENT", "no such file or directory"},
	syscall.EACCES:       {"EACCES", "permission denied"},
	syscall.EPERM:        {"EPERM", "operation not permitted"},
	syscall.ELOOP:        {"ELOOP", "too many symbolic links encountered"},
	syscall.ENOTDIR:      {"ENOTDIR", "not a directory"},
	syscall.EISDIR:       {"EISDIR", "illegal operation on a directory"},
	syscall.ENAMETOOLONG: {"ENAMETOOLONG", "name too long"},
	syscall.EIO:          {"EIO", "i/o error"},
	syscall.EMFILE:       {"EMFILE", "too many open files"},
	syscall.ENFILE:       {"ENFILE", "file table overflow"},
}

// osErrorText renders err as "<CODE>: <text>, <op> '<path>'", Node's form,
// or as Go words it when it carries no known errno.
func osErrorText(err error, op, path string) string {
	var errno syscall.Errno
	if errors.As(err, &errno) {
		if n, ok := nodeErrnos[errno]; ok {
			return fmt.Sprintf("%s: %s, %s '%s'", n[0], n[1], op, path)
		}
	}
	return err.Error()
}

// spelledDir returns the directory part of a spelled path without
// cleaning it, so "dir/../x.yaml" lists the directory the kernel finds.
func spelledDir(p string) string {
	i := strings.LastIndexByte(p, filepath.Separator)
	switch {
	case i < 0:
		return "."
	case i == 0:
		return p[:1]
	}
	return p[:i]
}

// isYAMLName reports whether a real file name is a YAML file's: a flow
// may be a link to a .yml file, never to a .env.
func isYAMLName(p string) bool {
	l := strings.ToLower(filepath.Base(p))
	return strings.HasSuffix(l, ".yaml") || strings.HasSuffix(l, ".yml")
}

// sentToolExts are the endings of a file a client sends for a tool: step
// ("Tool files"), in any case.
var sentToolExts = []string{".png", ".yaml"}

func hasSentToolExt(p string) bool {
	l := strings.ToLower(p)
	for _, e := range sentToolExts {
		if strings.HasSuffix(l, e) {
			return true
		}
	}
	return false
}
