// Package clientpath owns the rules for paths as a client spells them: a
// link carries paths of the client's machine (POSIX or Windows), which this
// machine may never open, only compare, split and check.
package clientpath

import (
	"path/filepath"
	"strings"
)

// IsAbs reports whether p is absolute on its client: a POSIX path from the
// root, or a Windows drive path such as C:\proj or C:/proj. The link's
// file-input rules (wire.SetFileInputs) use it on both ends.
func IsAbs(p string) bool {
	if strings.HasPrefix(p, "/") {
		return true
	}
	return len(p) >= 3 && isLetter(p[0]) && p[1] == ':' && (p[2] == '/' || p[2] == '\\')
}

func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

// HasDotDot reports whether p has a ".." segment, with either separator.
func HasDotDot(p string) bool {
	for _, seg := range strings.FieldsFunc(p, isSep) {
		if seg == ".." {
			return true
		}
	}
	return false
}

func isSep(r rune) bool { return r == '/' || r == '\\' }

// Split splits p at its last separator, '/' or '\'; dir is "" when p has
// none.
func Split(p string) (dir, base string) {
	i := strings.LastIndexAny(p, `/\`)
	if i < 0 {
		return "", p
	}
	return p[:i], p[i+1:]
}

// Dir returns the directory of p: "/" for a file at the root, "." for a
// bare name.
func Dir(p string) string {
	i := strings.LastIndexAny(p, `/\`)
	switch {
	case i == 0:
		return p[:1]
	case i < 0:
		return "."
	}
	return p[:i]
}

// Base returns the last element of p.
func Base(p string) string { return p[strings.LastIndexAny(p, `/\`)+1:] }

// FileName returns the name of the file p names, its last element, and
// false when p names no file: it is empty, ends in a separator, ends in
// "." or "..", or the name holds a NUL or is longer than the 255 bytes a
// file name has on the machines that keep a client's bytes. A server that
// keeps a file it was sent under the client's name needs one.
func FileName(p string) (string, bool) {
	name := Base(p)
	switch {
	case name == "", name == ".", name == "..", len(name) > maxNameBytes, strings.ContainsRune(name, 0):
		return "", false
	}
	return name, true
}

// maxNameBytes is NAME_MAX of Linux and the BSDs.
const maxNameBytes = 255

// The names of a project's flows directory, <root>/.argent/flows: the
// project layout, which the client, the CLI and the tools share.
const (
	ArgentDirName = ".argent"
	FlowsDirName  = "flows"
)

// FlowsDir returns <root>/.argent/flows as a client spells it, with '/'
// after the root whatever its separator: the directory of a nested flow's
// member key and of a recording (docs/link-protocol.md, "Members").
func FlowsDir(root string) string {
	return strings.TrimRight(root, `/\`) + "/" + ArgentDirName + "/" + FlowsDirName
}

// FlowFile returns <root>/.argent/flows/<name>.yaml as a client spells it
// (FlowsDir, then '/'): the file a flow name stands for.
func FlowFile(root, name string) string { return FlowsDir(root) + "/" + name + ".yaml" }

// LocalFlowsDir returns <root>/.argent/flows as a path of this machine,
// joined and cleaned as filepath.Join does: where a flow name resolves,
// and what a command prints of it.
func LocalFlowsDir(root string) string { return filepath.Join(root, ArgentDirName, FlowsDirName) }

// IsFlowsDir reports whether dir, a path of this machine, is a project's
// .argent/flows.
func IsFlowsDir(dir string) bool {
	return filepath.Base(dir) == FlowsDirName && filepath.Base(filepath.Dir(dir)) == ArgentDirName
}
