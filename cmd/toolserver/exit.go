package main

import (
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/toolserver/toolserver/fault"
	"github.com/toolserver/toolserver/flow"
)

// The exit codes (docs/cli.md, "Conventions and exit codes"); exitCode below is
// the one place an error becomes one of them.
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
	exitStatusApprove = `0  every selected baseline was written (or, with --dry-run, would be), or there was nothing to approve; with --undo, every baseline on record was restored, or none was on record
1  a baseline was refused (changed since the run, outside the baseline directories, unreadable image; with --undo, changed since the approve)
2  a usage error (nothing selected, a --flow or --snapshot the report does not have, no report in the directory, the wrong project)`
	exitStatusPrune = `0  every unused baseline was deleted (or, with --dry-run, listed), or there was none
1  a baseline could not be deleted
2  a usage error (no flows directory in the project) or a failure of the machinery`
	exitStatusGroup = `0  help was asked for (-h, --help)
2  no command or an unknown command was given`
)

// cliError marks what a command's error is, for exitCode: a bad command
// line, or a failed result (a tool error, a flow that failed, images that
// differ). Any other error is a failure of the machinery.
type cliError struct {
	err error
	// usage is a bad command line or configuration; hint adds where to
	// read the command's help.
	usage, hint bool
	// failed is a result that failed; a nil err prints nothing more (the
	// command already reported).
	failed bool
}

func (e *cliError) Error() string {
	if e.err == nil {
		return "failed"
	}
	return e.err.Error()
}

func (e *cliError) Unwrap() error { return e.err }

// usageError is a bad flag or argument: its message is followed by where
// to read the command's help.
func usageError(format string, a ...any) error {
	return &cliError{err: fmt.Errorf(format, a...), usage: true, hint: true}
}

// badInput is a usage error whose message says it all (a bad --device, an
// invalid configuration file, a request the tool-server refused as bad).
func badInput(err error) error { return &cliError{err: err, usage: true} }

// failed is a result that failed, with what to print; failed(nil) prints
// nothing more.
func failed(err error) error { return &cliError{err: err, failed: true} }

// isUsage reports whether err is a usage error: it stops a flow run
// before the flows not yet started.
func isUsage(err error) bool {
	var ce *cliError
	return errors.As(err, &ce) && ce.usage
}

// exitCode is the one switch from a command's error to its exit status,
// decided by the kind of the error, never by its text or an HTTP status:
// 0 no error; 2 a usage error; 2 a failure of the machinery (marked
// fault.Infrastructure: Chromium missing or dead, the tool-server
// unreachable, the link's protocol broken), even under a failed result;
// 1 a failed result; 2 any other error (a file that could not be read or
// written: the machinery again).
func exitCode(err error) int {
	var ce *cliError
	isCLI := errors.As(err, &ce)
	switch {
	case err == nil:
		return exitOK
	case isCLI && ce.usage:
		return exitUsage
	case fault.IsInfrastructure(err):
		return exitInfra
	case isCLI && ce.failed:
		return exitFailed
	default:
		return exitInfra
	}
}

// exitReport prints err (if any) and returns the process exit code. cmd
// is the command the error came from, for the pointer to its help; it may
// be nil. An error often carries a string from outside (a server's
// message, a path from a report, a value of a flow file), so it is
// escaped, line by line.
func exitReport(stderr io.Writer, cmd *cobra.Command, err error) int {
	var ce *cliError
	switch {
	case err == nil:
	case !errors.As(err, &ce):
		fmt.Fprintln(stderr, "toolserver:", printableLines(err.Error()))
	case ce.err != nil:
		fmt.Fprintln(stderr, "toolserver:", printableLines(ce.err.Error()))
	}
	if ce != nil && ce.hint && cmd != nil {
		fmt.Fprintf(stderr, "Run '%s --help' for usage.\n", cmd.CommandPath())
	}
	return exitCode(err)
}

// flowRunError is what ends a flow run, for exitCode: err when it is a
// failure of the machinery (the first flow whose machinery failed: the
// run went on with the others), else the first report with a step whose
// machinery failed, else a failed result when err (what failed the run
// outside its reports: a baseline the client did not write) is set or a
// report is not ok, else nil. A failed result prints nothing more: the
// reports said it all.
func flowRunError(reports []*flow.Report, err error) error {
	if fault.IsInfrastructure(err) {
		return err
	}
	for _, r := range reports {
		if ierr := r.InfrastructureError(); ierr != nil {
			return fmt.Errorf("flow %s: %w", r.Flow, ierr)
		}
	}
	if err != nil {
		return failed(nil)
	}
	for _, r := range reports {
		if !r.OK {
			return failed(nil)
		}
	}
	return nil
}
