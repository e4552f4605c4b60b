package layout

import (
	"errors"
	"go/ast"
	"go/build"
	"go/parser"
	"go/token"
	"go/types"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// sourceImporter type-checks the module's packages from their source,
// each once; every other package (the standard library included) is
// refused, and the checker goes on without it: what this test reads is
// which of the module's types a call is made on, and those are all the
// module's own.
type sourceImporter struct {
	root  string
	fset  *token.FileSet
	pkgs  map[string]*types.Package
	files map[string][]*ast.File
	info  *types.Info
}

var errNotOurs = errors.New("not a package of the module")

func (si *sourceImporter) Import(path string) (*types.Package, error) {
	rel, ok := strings.CutPrefix(path, module+"/")
	if !ok {
		return nil, errNotOurs
	}
	if p, ok := si.pkgs[path]; ok {
		return p, nil
	}
	bp, err := build.Default.ImportDir(filepath.Join(si.root, filepath.FromSlash(rel)), 0)
	if err != nil {
		return nil, err
	}
	var files []*ast.File
	for _, name := range bp.GoFiles {
		f, err := parser.ParseFile(si.fset, filepath.Join(bp.Dir, name), nil, 0)
		if err != nil {
			return nil, err
		}
		files = append(files, f)
	}
	cfg := types.Config{Importer: si, Error: func(error) {}}
	p, _ := cfg.Check(path, si.fset, files, si.info)
	si.pkgs[path] = p
	si.files[rel] = files
	return p, nil
}

// writers are the methods that write a run: the run store's verbs that
// start, claim, end or stop runs, and every method of a run's recorder
// but those that only read it.
var writers = map[string]map[string]bool{
	"Store":    {"Start": true, "Resume": true, "TakeOver": true, "Fail": true, "Abandon": true, "Stopping": true},
	"Recorder": {"Bind": true, "Append": true, "Step": true, "SetDevice": true, "SetFlow": true, "End": true},
}

// TestOnlyControlWritesARun: outside the run store itself (runs) and the
// control plane (control), no code of the module calls a method that
// writes a run, on the store or on a run's recorder. Every front end asks
// the plane (runs.Service); the plane writes.
func TestOnlyControlWritesARun(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	si := &sourceImporter{root: root, fset: token.NewFileSet(), pkgs: map[string]*types.Package{}, files: map[string][]*ast.File{},
		info: &types.Info{Selections: map[*ast.SelectorExpr]*types.Selection{}}}
	for pkg := range imports(t) {
		if _, err := si.Import(module + "/" + pkg); err != nil && !errors.Is(err, errNotOurs) {
			var noGo *build.NoGoError
			if !errors.As(err, &noGo) {
				t.Fatalf("%s: %v", pkg, err)
			}
		}
	}
	if si.pkgs[module+"/runs"] == nil || si.pkgs[module+"/control"] == nil {
		t.Fatal("runs and control: not type-checked")
	}
	var bad []string
	for rel, files := range si.files {
		if within(rel, "runs") && rel != "runs/v1" || rel == "control" {
			continue
		}
		for _, f := range files {
			ast.Inspect(f, func(n ast.Node) bool {
				sel, ok := n.(*ast.SelectorExpr)
				if !ok {
					return true
				}
				s := si.info.Selections[sel]
				if s == nil || s.Kind() != types.MethodVal {
					return true
				}
				// The method's own receiver, so that a method promoted
				// through an embedded store counts too.
				fn, ok := s.Obj().(*types.Func)
				if !ok || fn.Signature().Recv() == nil {
					return true
				}
				recv := fn.Signature().Recv().Type()
				if p, ok := recv.(*types.Pointer); ok {
					recv = p.Elem()
				}
				named, ok := recv.(*types.Named)
				if !ok || named.Obj().Pkg() == nil || named.Obj().Pkg().Path() != module+"/runs" {
					return true
				}
				if writers[named.Obj().Name()][sel.Sel.Name] {
					bad = append(bad, si.fset.Position(sel.Pos()).String()+": runs."+named.Obj().Name()+"."+sel.Sel.Name)
				}
				return true
			})
		}
	}
	sort.Strings(bad)
	for _, b := range bad {
		t.Errorf("%s writes a run: only control writes one (the others ask it, through runs.Service)", strings.TrimPrefix(b, root+"/"))
	}
}
