package layout

import (
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/toolserver/toolserver"

// imports maps each package of the module (its path inside the module) to
// the packages of the module its non-test files import, read from the
// source so the test needs no go command.
func imports(t *testing.T) map[string][]string {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("the module root: %v", err)
	}
	out := map[string][]string{}
	fset := token.NewFileSet()
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if p != root && (strings.HasPrefix(name, ".") || name == "testdata" || name == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, p, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, filepath.Dir(p))
		if err != nil {
			return err
		}
		pkg := filepath.ToSlash(rel)
		if _, ok := out[pkg]; !ok {
			out[pkg] = []string{}
		}
		for _, spec := range f.Imports {
			ip, err := strconv.Unquote(spec.Path.Value)
			if err != nil {
				return err
			}
			if ours, ok := strings.CutPrefix(ip, module+"/"); ok && !slices.Contains(out[pkg], ours) {
				out[pkg] = append(out[pkg], ours)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// within reports whether pkg is dir or a package under it.
func within(pkg, dir string) bool { return pkg == dir || strings.HasPrefix(pkg, dir+"/") }

// TestImportRules holds the layout's rules: the language apart from its
// runner, the link's shared vocabulary a leaf, its two ends apart, the
// registry free of both ends, the error vocabulary and the image code
// leaves.
func TestImportRules(t *testing.T) {
	all := imports(t)
	for _, want := range []string{"flow", "flow/run", "wire", "link/client", "link/server", "fault", "tool", "snapshot", "runs", "runs/v1", "control", "tool/flowtool", "server", "server/mcp"} {
		if _, ok := all[want]; !ok {
			t.Errorf("package %s: not in the tree", want)
		}
	}
	rules := []struct {
		pkg string
		// none lists what pkg must not import (a directory stands for
		// itself and every package under it); only, when set, is all
		// that pkg may import of the module.
		none []string
		only []string
		// except lets through, for now, imports that none forbids; the
		// rule's comment says until when.
		except []string
		why    string
	}{
		{pkg: "fault", only: []string{}, why: "the error vocabulary is a leaf"},
		{pkg: "wire", only: []string{"internal/clientpath"}, why: "the protocol's vocabulary is ground floor"},
		{pkg: "internal/clientpath", only: []string{}, why: "the ground floor imports nothing above it"},
		{pkg: "snapshot", only: []string{}, why: "the image code is pure"},
		{pkg: "flow", none: []string{"snapshot", "flow/run", "device", "link", "tool", "server", "runs", "store", "report"}, why: "the flow language needs no runner, image code or surface"},
		{pkg: "link/client", none: []string{"link/server", "server", "store", "tool"}, why: "the link's client never reaches the server's end, nor the registry"},
		{pkg: "link/server", none: []string{"link/client", "server", "tool"}, why: "the link's server end never reaches the client, nor the registry above it"},
		{pkg: "tool", none: []string{"link/client", "link/server", "flow", "server"}, why: "the registry is below the link's ends and the runner"},
		{pkg: "report", none: []string{"flow/run", "link", "tool", "server", "device"}, why: "the report needs only the language"},
		{pkg: "runs", none: []string{"flow/run", "link", "tool", "server", "device", "control"}, why: "the run store needs only the language"},
		{pkg: "tool/flowtool", none: []string{"runs", "control"}, why: "only control writes a run: flowtool reports what a run records as progress (tool.FlowNamed, tool.DeviceHeld, its steps)"},
		// flowargs goes when flow-execute's arguments have their type
		// (issue 38, item 2: wire.ExecuteArgs).
		{pkg: "control", none: []string{"tool/flowtool", "server", "cmd"}, except: []string{"tool/flowtool/flowargs"}, why: "the plane drives tools through the registry, and knows no surface"},
		{pkg: "server", none: []string{"control", "server/mcp", "runs/v1"}, why: "the HTTP surface takes the runs as a runs.Service (its Plane), built in the composition root; it never imports the /v1 client"},
		{pkg: "server/mcp", none: []string{"control", "runs/v1"}, why: "MCP's run tools take the runs as a runs.Service, built in the composition root"},
		{pkg: "runs/v1", none: []string{"server", "control", "tool"}, why: "the /v1 client never reaches the server's end: both speak runs' wire"},
	}
	for _, r := range rules {
		got, ok := all[r.pkg]
		if !ok {
			continue
		}
		for _, ip := range got {
			if r.only != nil && !slices.Contains(r.only, ip) {
				t.Errorf("%s imports %s: %s", r.pkg, ip, r.why)
			}
			for _, bad := range r.none {
				if within(ip, bad) && !within(r.pkg, bad) && !slices.Contains(r.except, ip) {
					t.Errorf("%s imports %s: %s", r.pkg, ip, r.why)
				}
			}
		}
	}
	// The link's root holds only the package comment (the table of the
	// protocol's sections) and the test both ends share.
	if got := all["link"]; len(got) > 0 {
		t.Errorf("link (the root) imports %v: its code belongs in wire, link/client, link/server or link/tunnel", got)
	}
	// Only device/cdp speaks CDP.
	for pkg := range all {
		if within(pkg, "device/cdp") {
			continue
		}
		dir := filepath.Join("../..", filepath.FromSlash(pkg))
		entries, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			if !strings.HasSuffix(e.Name(), ".go") || strings.HasSuffix(e.Name(), "_test.go") {
				continue
			}
			f, err := parser.ParseFile(token.NewFileSet(), filepath.Join(dir, e.Name()), nil, parser.ImportsOnly)
			if err != nil {
				t.Fatal(err)
			}
			for _, spec := range f.Imports {
				if ip, _ := strconv.Unquote(spec.Path.Value); strings.HasPrefix(ip, "github.com/chromedp/") {
					t.Errorf("%s imports %s: only device/cdp speaks CDP", path.Join(pkg, e.Name()), ip)
				}
			}
		}
	}
}
