package main

import (
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/toolserver/toolserver/fault"
	"github.com/toolserver/toolserver/flow"
)

// Exit codes of PRODUCT.md, mapped in this one place.
const (
	exitOK     = 0 // all passed / identical
	exitFailed = 1 // a flow failed, images differ, a baseline was not written
	exitUsage  = 2 // usage or infrastructure error
	exitInfra  = 2
)

// The EXIT STATUS sections of the help, one per kind of command, so that
// what each command documents and what report returns stay side by side.
const (
	exitStatusPlain = `0  the command succeeded
2  a usage error (unknown flag, missing or extra argument) or a failure of the machinery`
	exitStatusFlowRun = `0  every flow passed
1  a flow failed, was not run (an invalid file), or a baseline was not written
2  a usage error (an invalid .argent/toolserver.yaml included) or an infrastructure failure (Chromium missing or crashed, the tool-server unreachable, a protocol violation)`
	exitStatusSnapshotDiff = `0  no pixel differs above the threshold
1  some pixels differ
2  a usage error, an unreadable or invalid PNG, or a size mismatch (the message names both sizes)`
	exitStatusCall = `0  the tool succeeded
1  the tool answered an error, or a baseline of its result was not written
2  a usage error or an infrastructure failure (the tool-server unreachable, a protocol violation)`
	exitStatusHealthcheck = `0  the server answered /healthz with 200
1  the server did not answer, or answered something else
2  a usage error`
	exitStatusServe = `0  the server stopped on SIGINT or SIGTERM
2  a usage error (a wildcard bind without a token included), or the server could not start`
	exitStatusMCP = `0  stdin closed (the client ended the session), or SIGINT or SIGTERM
2  a usage error, or the session failed (a message on stdin that is not JSON-RPC, stdout closed)`
	exitStatusApprove = `0  every selected baseline was written (or, with --dry-run, would be)
1  a baseline was refused (changed since the run, outside the baseline directories, unreadable image)
2  a usage error (nothing selected, nothing matched, no report in the directory)`
	exitStatusGroup = `0  help was asked for (-h, --help)
2  no command or an unknown command was given`
)

// exitError carries an exit code through a command's error return.
// A nil err with a code prints nothing (the command already reported).
type exitError struct {
	code int
	err  error
	// usage marks a bad command line: the message is followed by where
	// to read the command's help.
	usage bool
}

func (e *exitError) Error() string {
	if e.err == nil {
		return fmt.Sprintf("exit %d", e.code)
	}
	return e.err.Error()
}

func (e *exitError) Unwrap() error { return e.err }

// withExit wraps err so that the process exits with code.
func withExit(code int, err error) error { return &exitError{code: code, err: err} }

// silentExit exits with code and prints nothing more.
func silentExit(code int) error { return &exitError{code: code} }

// usageError is a bad flag or argument: exit 2 with the message and a
// pointer to the command's help.
func usageError(format string, a ...any) error {
	return &exitError{code: exitUsage, err: fmt.Errorf(format, a...), usage: true}
}

// exitReport prints err (if any) and returns the process exit code. cmd is
// the command the error came from, for the pointer to its help; it may
// be nil.
func exitReport(stderr io.Writer, cmd *cobra.Command, err error) int {
	if err == nil {
		return exitOK
	}
	var ee *exitError
	if errors.As(err, &ee) {
		if ee.err != nil {
			fmt.Fprintln(stderr, "toolserver:", ee.err)
		}
		if ee.usage && cmd != nil {
			fmt.Fprintf(stderr, "Run '%s --help' for usage.\n", cmd.CommandPath())
		}
		return ee.code
	}
	fmt.Fprintln(stderr, "toolserver:", err)
	return exitInfra
}

// flowExit is the exit code of flow run, decided by the kind of what went
// wrong, never by its text or an HTTP status: 2 when the machinery under
// the flows failed (err, or the error of a step, matches
// fault.ErrInfrastructure: Chromium missing or dead, the tool-server
// unreachable, the link's protocol broken), 1 when a flow failed or was
// rejected (a report not ok, or another err), 0 when every flow passed.
// err is what failed the run outside its reports: the error that stopped
// it, or a baseline the client did not write. The error it returns is
// what to print; nil when the reports already said it all.
func flowExit(reports []*flow.Report, err error) (int, error) {
	if errors.Is(err, fault.ErrInfrastructure) {
		return exitInfra, err
	}
	for _, r := range reports {
		if ierr := r.InfrastructureError(); ierr != nil {
			return exitInfra, fmt.Errorf("flow %s: %w", r.Flow, ierr)
		}
	}
	if err != nil {
		return exitFailed, nil
	}
	for _, r := range reports {
		if !r.OK {
			return exitFailed, nil
		}
	}
	return exitOK, nil
}
