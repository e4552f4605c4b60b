package main

import (
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/toolserver/toolserver/flow"
)

// Exit codes of PRODUCT.md, mapped in this one place.
const (
	exitOK     = 0 // all passed / identical
	exitFailed = 1 // a flow failed, images differ, a baseline was not written
	exitUsage  = 2 // usage or infrastructure error
	exitInfra  = 2
)

// exitError carries an exit code through a subcommand's error return.
// A nil err with a code prints nothing (the command already reported).
type exitError struct {
	code int
	err  error
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

// usageError is a bad flag or argument: exit 2 with the message.
func usageError(format string, a ...any) error {
	return withExit(exitUsage, fmt.Errorf(format, a...))
}

// report prints err (if any) and returns the process exit code.
func report(stderr io.Writer, err error) int {
	if err == nil {
		return exitOK
	}
	if errors.Is(err, flag.ErrHelp) {
		return exitOK
	}
	var ee *exitError
	if errors.As(err, &ee) {
		if ee.err != nil {
			fmt.Fprintln(stderr, "toolserver:", ee.err)
		}
		return ee.code
	}
	fmt.Fprintln(stderr, "toolserver:", err)
	return exitInfra
}

// flowExit is the exit code of flow run, decided by the kind of what went
// wrong, never by its text or an HTTP status: 2 when the machinery under
// the flows failed (err, or the error of a step, matches
// flow.ErrInfrastructure: Chromium missing or dead, the tool-server
// unreachable, the link's protocol broken), 1 when a flow failed or was
// rejected (a report not ok, or another err), 0 when every flow passed.
// err is what failed the run outside its reports: the error that stopped
// it, or a baseline the client did not write. The error it returns is
// what to print; nil when the reports already said it all.
func flowExit(reports []*flow.Report, err error) (int, error) {
	if errors.Is(err, flow.ErrInfrastructure) {
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
