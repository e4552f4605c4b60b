// Package fault is the one error vocabulary of the project: the kinds of
// error a tool, the link or the server reports, each with its
// infrastructure bit, and the mark that tells a failure of the machinery
// under a call or a run (the token, a proxy's cap, Chromium, the link, the
// server) from a failure of the call or the flow itself. It imports nothing
// of ours; the tools, the runner and both ends of the link wrap it. The HTTP
// status of each kind is the server's (server/status.go); the exit code of
// each outcome is the CLI's (cmd/toolserver/exit.go).
package fault

import "errors"

// Kind classifies an error; on the wire it is error_kind of Argent's
// envelope, so the names match Argent's where it has one ("validation").
type Kind string

// The kinds.
const (
	Validation       Kind = "validation"         // bad arguments or a rejected flow
	Unauthorized     Kind = "unauthorized"       // no or a wrong bearer token
	Forbidden        Kind = "forbidden"          // a Host the DNS-rebinding guard refuses, a request a web page sent
	NotFound         Kind = "not_found"          // no such tool, route, artifact or upload
	MethodNotAllowed Kind = "method_not_allowed" // a route asked with the wrong method
	Conflict         Kind = "conflict"           // e.g. too many devices
	TooLarge         Kind = "too_large"          // a body or an upload over its cap
	Timeout          Kind = "timeout"            // a request whose body did not arrive in time
	// UnsupportedMedia is a tool call whose body is not declared
	// application/json (a web page's form or text/plain post).
	UnsupportedMedia Kind = "unsupported_media_type"
	// Unprocessed is a file input or a member whose bytes fail a check, or
	// whose upload the server does not have: the link protocol answers it
	// with 422 (docs/link-protocol.md, "What the tool-server does with the
	// members").
	Unprocessed Kind = "unprocessable"
	// WriteFailed is Argent's FLOW_FILE_WRITE_FAILED: the server could not
	// write a file of the project. Its message (path, errno and a hint) is
	// written for the user, unlike an internal fault's.
	WriteFailed         Kind = "write_failed"
	Internal            Kind = "internal"             // a fault of ours: logged, never sent verbatim
	Unavailable         Kind = "unavailable"          // Chromium missing or crashed
	InsufficientStorage Kind = "insufficient_storage" // the uploads' pending total is spent
)

// infrastructure is the infrastructure bit of each known kind: true when an
// error of the kind says the machinery under a call failed, so a client
// exits 2 for it rather than 1 (docs/cli.md, "Conventions and exit codes").
var infrastructure = map[Kind]bool{
	Validation:          false,
	Unauthorized:        true,
	Forbidden:           true,
	NotFound:            false,
	MethodNotAllowed:    false,
	Conflict:            false,
	TooLarge:            true,
	Timeout:             true,
	UnsupportedMedia:    false,
	Unprocessed:         false,
	WriteFailed:         false,
	Internal:            true,
	Unavailable:         true,
	InsufficientStorage: true,
}

// Kinds returns every known kind, in no particular order.
func Kinds() []Kind {
	out := make([]Kind, 0, len(infrastructure))
	for k := range infrastructure {
		out = append(out, k)
	}
	return out
}

// Known reports whether k is one of the kinds above: a client falls back on
// the status of an answer whose error_kind is another server's.
func (k Kind) Known() bool {
	_, ok := infrastructure[k]
	return ok
}

// Infrastructure reports whether an error of kind k says the machinery
// under a call failed (the token, the Host guard, a proxy's cap, Chromium,
// the server itself) rather than the call. An unknown kind does not.
func (k Kind) Infrastructure() bool { return infrastructure[k] }

// ErrInfrastructure is matched (errors.Is) by every error that says the
// machinery under a flow or a call failed rather than the flow or the call
// itself: Chromium is missing or died, the tool-server is unreachable or
// answered with an infrastructure kind, the protocol was violated. The CLI
// exits 2 for such an error and 1 for a flow that failed.
var ErrInfrastructure = errors.New("infrastructure failure")

// Infrastructure returns err marked as a failure of the machinery: it
// matches ErrInfrastructure as well as everything err matches, and reads
// as err. A nil err stays nil.
func Infrastructure(err error) error {
	if err == nil || errors.Is(err, ErrInfrastructure) {
		return err
	}
	return &infraError{err}
}

// Classify returns err marked as Infrastructure when kind k has the
// infrastructure bit, and err as it is otherwise.
func Classify(k Kind, err error) error {
	if k.Infrastructure() {
		return Infrastructure(err)
	}
	return err
}

// IsInfrastructure reports whether err is marked as a failure of the
// machinery.
func IsInfrastructure(err error) bool { return errors.Is(err, ErrInfrastructure) }

// infraError is an error marked by Infrastructure.
type infraError struct{ err error }

func (e *infraError) Error() string        { return e.err.Error() }
func (e *infraError) Unwrap() error        { return e.err }
func (e *infraError) Is(target error) bool { return target == ErrInfrastructure }
