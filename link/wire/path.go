package wire

import "strings"

// IsAbs reports whether p is absolute on its client: a POSIX path from the
// root, or a Windows drive path such as C:\proj or C:/proj. A link carries
// paths of the client's machine, and the file-input rules (SetFileInputs)
// need this one; package clientpath, which owns the other rules of such
// paths, answers with it.
func IsAbs(p string) bool {
	if strings.HasPrefix(p, "/") {
		return true
	}
	return len(p) >= 3 && isLetter(p[0]) && p[1] == ':' && (p[2] == '/' || p[2] == '\\')
}

func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
