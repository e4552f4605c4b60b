package clientfs

import (
	"errors"
	"fmt"
	"syscall"
)

// EISDIRRead is the refusal (docs/link-protocol.md, "Client policy") of a
// member that is a directory: Node's read error, which clients of this protocol
// quote.
const EISDIRRead = "EISDIR: illegal operation on a directory, read"

// nodeErrnos are the errors as Node reports them (code, libuv text), so a
// refusal reads the same from every client of the protocol.
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
	syscall.EROFS:        {"EROFS", "read-only file system"},
	syscall.ENOSPC:       {"ENOSPC", "no space left on device"},
	syscall.EEXIST:       {"EEXIST", "file already exists"},
}

// ErrorText renders err as "<CODE>: <text>, <op> '<path>'", Node's form,
// or as Go words it when it carries no errno Node names.
func ErrorText(err error, op, path string) string {
	var errno syscall.Errno
	if errors.As(err, &errno) {
		if n, ok := nodeErrnos[errno]; ok {
			return fmt.Sprintf("%s: %s, %s '%s'", n[0], n[1], op, path)
		}
	}
	return err.Error()
}

// ErrnoCode returns Node's code of the errno err carries ("EACCES"), and
// false when it carries none Node names.
func ErrnoCode(err error) (string, bool) {
	var errno syscall.Errno
	if errors.As(err, &errno) {
		if n, ok := nodeErrnos[errno]; ok {
			return n[0], true
		}
	}
	return "", false
}

// NotFoundText is Node's error of a file that is not there, the text a
// missing flow file or fragment reports on every side of the link:
// ENOENT: no such file or directory, open '<path>'.
func NotFoundText(path string) string { return ErrorText(syscall.ENOENT, "open", path) }
