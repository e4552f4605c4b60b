package layout

import (
	"go/parser"
	"go/token"
	"path"
	"strconv"
	"strings"
	"testing"
)

// aliases are the names the packages whose own names mislead are imported
// under, as restic pins its aliases with importas: link/server is not the
// HTTP server (package server), link/client not an HTTP client, and
// flow/run's run is no run of the run store (runs).
var aliases = map[string]string{
	"link/server": "linkserver",
	"link/client": "linkclient",
	"flow/run":    "flowrun",
}

// TestImportAliases: every file that imports one of those packages, its
// tests included, names it by its alias; the package's own directory
// (its internal and external tests) is exempt.
func TestImportAliases(t *testing.T) {
	fset := token.NewFileSet()
	walkGo(t, true, func(p, rel string) error {
		f, err := parser.ParseFile(fset, p, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		for _, spec := range f.Imports {
			ip, err := strconv.Unquote(spec.Path.Value)
			if err != nil {
				return err
			}
			ours, ok := strings.CutPrefix(ip, module+"/")
			if !ok {
				continue
			}
			alias, pinned := aliases[ours]
			if !pinned || path.Dir(rel) == ours {
				continue
			}
			if spec.Name == nil || spec.Name.Name != alias {
				got := path.Base(ours)
				if spec.Name != nil {
					got = spec.Name.Name
				}
				t.Errorf("%s imports %s as %s: import it as %s", rel, ours, got, alias)
			}
		}
		return nil
	})
}
