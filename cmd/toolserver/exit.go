package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
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
