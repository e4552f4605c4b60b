package flow

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// fuzzFlowDirs hold the flow files FuzzParse starts from: the parser's
// test files, valid and invalid, and the example project's flows.
var fuzzFlowDirs = []string{"testdata/valid", "testdata/invalid", "../examples/shop/.argent/flows"}

// fuzzExtraSeeds reach what the files do not: anchors and aliases, a
// chromium launch map, tool args of every JSON type, and a when: guard on
// the platform.
var fuzzExtraSeeds = []string{
	"steps:\n  - tap: &save { id: save }\n  - assert: { visible: *save }\n  - when: { visible: *save }\n    steps:\n      - tap: *save\n",
	"steps:\n  - launch: { chromium: { path: ./index.html, args: [--lang=de] } }\n  - tool: gesture-swipe\n    args: { a: [1, 2.5, null, true, \"x\"], b: { c: 1e3 } }\n    delayMs: 10\n",
	"executionPrerequisite: The cart holds one item.\nsteps:\n  - when: { platform: chromium }\n    steps:\n      - type: { into: { role: textbox, within: form }, text: \"{{secret:PW}}\", submit: false }\n",
}

// FuzzParse checks that no input panics the parser; that a refusal is
// always made of *Error values (one, or an errors.Join of at most
// maxErrors) that match ErrInvalid and name the file; and that every flow
// it accepts marshals to a file it accepts again, with the same steps, and
// that marshalling that file gives the same bytes.
func FuzzParse(f *testing.F) {
	for _, dir := range fuzzFlowDirs {
		files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
		if err != nil || len(files) == 0 {
			f.Fatalf("no flow files in %s (%v)", dir, err)
		}
		for _, path := range files {
			data, err := os.ReadFile(path)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(data)
		}
	}
	for _, s := range fuzzExtraSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		fl, err := Parse("fuzz.yaml", data)
		if err != nil {
			checkParseError(t, fl, err)
			return
		}
		out, err := Marshal(fl)
		if err != nil {
			t.Fatalf("Marshal of an accepted flow: %v\ninput:\n%s", err, data)
		}
		again, err := Parse("again.yaml", out)
		if err != nil {
			t.Fatalf("Parse(Marshal): %v\n%s", err, out)
		}
		if got, want := formatAll(again), formatAll(fl); !slices.Equal(got, want) {
			t.Fatalf("round trip:\ngot  %q\nwant %q", got, want)
		}
		if again.ExecutionPrerequisite != fl.ExecutionPrerequisite {
			t.Fatalf("round trip: got prerequisite %q, want %q", again.ExecutionPrerequisite, fl.ExecutionPrerequisite)
		}
		out2, err := Marshal(again)
		if err != nil || !bytes.Equal(out2, out) {
			t.Fatalf("Marshal(Parse(Marshal)): got %v\n%s\nwant\n%s", err, out2, out)
		}
	})
}

// checkParseError checks the shape of a refusal: a single *Error, or an
// errors.Join of 2 to maxErrors of them, each matching ErrInvalid and
// naming the file.
func checkParseError(t *testing.T, fl *Flow, err error) {
	t.Helper()
	if fl != nil {
		t.Fatalf("Parse returned a flow with the error %v", err)
	}
	errs := []error{err}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		errs = j.Unwrap()
		if len(errs) < 2 || len(errs) > maxErrors {
			t.Fatalf("got a join of %d errors, want 2 to %d", len(errs), maxErrors)
		}
	}
	for _, e := range errs {
		var fe *Error
		if pe, ok := e.(*Error); !ok || !errors.Is(e, ErrInvalid) || !errors.As(e, &fe) {
			t.Fatalf("got %T %v, want a *flow.Error matching ErrInvalid", e, e)
		} else if pe.File != "fuzz.yaml" || pe.Msg == "" {
			t.Fatalf("got file %q, message %q, want fuzz.yaml and a message", pe.File, pe.Msg)
		}
	}
	if !errors.Is(err, ErrInvalid) || len(Errors(err)) != len(errs) {
		t.Fatalf("got %v (Errors finds %d of %d), want it to match ErrInvalid", err, len(Errors(err)), len(errs))
	}
}
