package layout

import (
	"go/ast"
	"go/parser"
	"go/token"
	"strconv"
	"testing"
)

// argsFile is the one file that spells flow-execute's argument names: the
// request's type, wire.ExecuteArgs, and its constants.
const argsFile = "wire/execute.go"

// argNames are flow-execute's argument names distinctive enough to scan
// for. The others (name, device, platform, tunnel, strict) are words
// every tool and package uses for its own things, so a scan for them
// would flag what is not the request; they too are read only through
// wire.ExecuteArgs and its constants, by review rather than by this test.
var argNames = []string{
	"project_root", "flow_path", "flow_file", "updateBaselines", "updateOnly",
	"snapshotDefaults", "baseURL", "prerequisiteAcknowledged",
}

// argNameAllowed reports whether the non-test file rel (slash-separated,
// from the module root) may spell the argument name lit.
func argNameAllowed(rel, lit string) bool {
	switch {
	case rel == argsFile:
		return true
	case rel == "flow/config.go" && lit == "baseURL":
		// The project config file's own key, which shares the name.
		return true
	}
	return false
}

// TestArgNamesSpelledOnce: no package spells flow-execute's argument names
// as string literals but the request type's file (issue 38, "The request
// has a type"), so adding or renaming an argument is one edit there and a
// typo does not compile.
func TestArgNamesSpelledOnce(t *testing.T) {
	watched := map[string]bool{}
	for _, n := range argNames {
		watched[n] = true
	}
	fset := token.NewFileSet()
	seen := false
	walkGo(t, false, func(p, rel string) error {
		f, err := parser.ParseFile(fset, p, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			lit, ok := n.(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				return true
			}
			s, err := strconv.Unquote(lit.Value)
			if err != nil || !watched[s] {
				return true
			}
			if rel == argsFile {
				seen = true
			}
			if !argNameAllowed(rel, s) {
				t.Errorf("%s: %q is flow-execute's argument: name it by its constant in %s (wire.Arg…) or read it through wire.ExecuteArgs", fset.Position(lit.Pos()), s, argsFile)
			}
			return true
		})
		return nil
	})
	if !seen {
		t.Errorf("%s spells none of %v: the scan looks for the wrong names", argsFile, argNames)
	}
}
