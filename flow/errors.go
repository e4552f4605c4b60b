package flow

import (
	"errors"
	"fmt"
	"strings"
)

// ErrInvalid is the sentinel every parse and validation error matches with
// errors.Is, so callers that only need "is this a bad flow file" (the link
// code maps it to FLOW_FILE_INVALID, the CLI to exit code 2) branch on it
// without knowing the concrete type.
var ErrInvalid = errors.New("flow: invalid flow file")

// ErrUnsupported is the sentinel behind ChromiumUnsupported: the step parses
// but has no meaning on a Chromium device.
var ErrUnsupported = errors.New("flow: directive unsupported on chromium")

// ErrTooManySteps is the error of the report line that ends a run at
// MaxRunSteps.
var ErrTooManySteps = errors.New("flow: the run reached its step limit")

// Problem classifies an Error so that tests and callers branch on a value
// rather than on message text.
type Problem uint8

// The problems a flow file can have. The zero value is never used.
const (
	ProblemSyntax           Problem = iota + 1 // the YAML itself does not parse
	ProblemShape                               // a value has the wrong type or shape
	ProblemUnknownKey                          // an unknown top-level key, option or selector key
	ProblemUnknownDirective                    // a step key that names no directive
	ProblemDirectiveCount                      // a step with several directives
	ProblemEmptyStep                           // a null or empty step
	ProblemSelector                            // a selector that is malformed
	ProblemRegexp                              // a regular expression that does not compile
	ProblemValue                               // a value out of range or malformed (name, path, number)
	ProblemElse                                // an else: beside (or instead of) when:
	ProblemPrerequisite                        // executionPrerequisite on a flow that launches its own app
	ProblemSize                                // more steps or alias expansion than a flow may have (MaxRunSteps, MaxAliasValues)
)

var problemNames = map[Problem]string{
	ProblemSyntax:           "syntax",
	ProblemShape:            "shape",
	ProblemUnknownKey:       "unknown key",
	ProblemUnknownDirective: "unknown directive",
	ProblemDirectiveCount:   "directive count",
	ProblemEmptyStep:        "empty step",
	ProblemSelector:         "selector",
	ProblemRegexp:           "regexp",
	ProblemValue:            "value",
	ProblemElse:             "else",
	ProblemPrerequisite:     "prerequisite",
	ProblemSize:             "size",
}

// String returns the problem's short name.
func (p Problem) String() string {
	if s, ok := problemNames[p]; ok {
		return s
	}
	return fmt.Sprintf("Problem(%d)", uint8(p))
}

// Error is one problem in one flow file. Step is the 1-based path of the step
// as a human counts it: [3] is the third step of the file, [2, 1] the first
// step inside the when: block that is the file's second step (printed
// "step 2.1"). Step is nil for a problem of the file itself (syntax, the
// top-level keys). Line and Column are 1-based positions in the YAML of the
// most specific node at fault (the unknown key, the bad regex), not of the
// step's first line, because that is where an editor should jump.
type Error struct {
	File      string   // the name given to Parse: the flow's path, used only in messages
	Step      StepPath // 1-based step path; nil for a file-level problem
	Line      int      // 1-based YAML line; 0 when unknown
	Column    int      // 1-based YAML column; 0 when unknown
	Directive Kind     // the step's directive when known, e.g. "tap"
	Problem   Problem  // what kind of problem this is
	Msg       string   // the human explanation, without file, step or directive
	Err       error    // the underlying cause (a regexp error), or nil
}

// Error renders e as "checkout.yaml: step 3 (line 12): tap: unknown option
// "foo"". A problem of the file itself (its YAML) gives its column too
// when it is known: "checkout.yaml: line 5, column 19: invalid YAML: …".
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	switch {
	case len(e.Step) > 0 && e.Line > 0:
		fmt.Fprintf(&b, ": step %s (line %d)", e.Step, e.Line)
	case len(e.Step) > 0:
		fmt.Fprintf(&b, ": step %s", e.Step)
	case e.Line > 0 && e.Column > 0:
		fmt.Fprintf(&b, ": line %d, column %d", e.Line, e.Column)
	case e.Line > 0:
		fmt.Fprintf(&b, ": line %d", e.Line)
	}
	b.WriteString(": ")
	if e.Directive != "" {
		b.WriteString(string(e.Directive))
		b.WriteString(": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

// Unwrap returns the underlying cause, so errors.As reaches a
// *regexp/syntax.Error behind a ProblemRegexp.
func (e *Error) Unwrap() error { return e.Err }

// Is makes every *Error match ErrInvalid.
func (e *Error) Is(target error) bool { return target == ErrInvalid }

// Errors returns every *Error in err, in the order Parse found them. Parse
// returns a single *Error when a file has one problem and an errors.Join of
// them when it has several; Errors flattens both shapes.
func Errors(err error) []*Error {
	var out []*Error
	var walk func(error)
	walk = func(err error) {
		if err == nil {
			return
		}
		if e, ok := err.(*Error); ok {
			out = append(out, e)
			return
		}
		if j, ok := err.(interface{ Unwrap() []error }); ok {
			for _, inner := range j.Unwrap() {
				walk(inner)
			}
			return
		}
		if inner := errors.Unwrap(err); inner != nil {
			walk(inner)
		}
	}
	walk(err)
	return out
}
