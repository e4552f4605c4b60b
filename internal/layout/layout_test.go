package layout

import (
	"go/parser"
	"go/token"
	"io/fs"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/toolserver/toolserver"

// moduleRoot is the module's root directory.
func moduleRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("the module root: %v", err)
	}
	return root
}

// walkGo calls fn with each Go file of the module, its test files too
// when tests is set: p is its path, rel the same from the module root,
// slash-separated. Hidden directories, testdata and node_modules hold no
// package of ours and are left out.
func walkGo(t *testing.T, tests bool, fn func(p, rel string) error) {
	t.Helper()
	root := moduleRoot(t)
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
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
		if !strings.HasSuffix(name, ".go") || (!tests && strings.HasSuffix(name, "_test.go")) {
			return nil
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		return fn(p, filepath.ToSlash(rel))
	})
	if err != nil {
		t.Fatal(err)
	}
}

// imports maps each package of the module (its path inside the module) to
// the packages of the module its non-test files import, read from the
// source so the test needs no go command.
func imports(t *testing.T) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	fset := token.NewFileSet()
	walkGo(t, false, func(p, rel string) error {
		f, err := parser.ParseFile(fset, p, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		pkg := path.Dir(rel)
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
	return out
}

// fileImports maps each non-test Go file of the module (its path from the
// root, slash-separated) to every path it imports, ours and others'.
func fileImports(t *testing.T) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	fset := token.NewFileSet()
	walkGo(t, false, func(p, rel string) error {
		f, err := parser.ParseFile(fset, p, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		out[rel] = []string{}
		for _, spec := range f.Imports {
			ip, err := strconv.Unquote(spec.Path.Value)
			if err != nil {
				return err
			}
			out[rel] = append(out[rel], ip)
		}
		return nil
	})
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
	for _, want := range []string{"flow", "flow/run", "wire", "link/client", "link/server", "fault", "tool", "snapshot", "storybook", "report/junit", "suite", "suite/linked", "suite/local", "snapshot/pngdiff", "scaffold", "runs", "runs/v1", "control", "tool/flowtool", "server", "server/mcp", "link/linktest", "tool/tooltest"} {
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
		why  string
	}{
		{pkg: "fault", only: []string{}, why: "the error vocabulary is a leaf"},
		{pkg: "wire", only: []string{"internal/clientpath"}, why: "the protocol's vocabulary is ground floor"},
		{pkg: "internal/clientpath", only: []string{}, why: "the ground floor imports nothing above it"},
		{pkg: "internal/drain", only: []string{}, why: "the ground floor imports nothing above it"},
		{pkg: "snapshot", only: []string{}, why: "the image code is pure"},
		{pkg: "flow", none: []string{"snapshot", "flow/run", "device", "link", "tool", "server", "runs", "store", "report"}, why: "the flow language needs no runner, image code or surface"},
		{pkg: "flow", none: []string{"internal/atomicfile"}, why: "the language writes no file (flow/run's Disk writes baselines)"},
		{pkg: "link/client", none: []string{"link/server", "server", "store", "tool"}, why: "the link's client never reaches the server's end, nor the registry"},
		{pkg: "link/server", none: []string{"link/client", "server", "tool"}, why: "the link's server end never reaches the client, nor the registry above it"},
		{pkg: "tool", none: []string{"link/client", "link/server", "flow", "server"}, why: "the registry is below the link's ends and the runner"},
		{pkg: "report", none: []string{"flow/run", "link", "tool", "server", "device"}, why: "the report needs only the language"},
		{pkg: "runs", none: []string{"flow/run", "link", "tool", "server", "device", "control"}, why: "the run store needs only the language"},
		{pkg: "tool/flowtool", none: []string{"runs", "control"}, why: "only control writes a run: flowtool reports what a run records as progress (tool.FlowNamed, tool.DeviceHeld, its steps)"},
		{pkg: "control", none: []string{"tool/flowtool", "server", "cmd"}, why: "the plane drives tools through the registry, and knows no surface"},
		{pkg: "server", none: []string{"control", "server/mcp", "runs/v1"}, why: "the HTTP surface takes the runs as a runs.Service (its Plane), built in the composition root; it never imports the /v1 client"},
		{pkg: "server/mcp", none: []string{"control", "runs/v1"}, why: "MCP's run tools take the runs as a runs.Service, built in the composition root"},
		{pkg: "runs/v1", none: []string{"server", "control", "tool"}, why: "the /v1 client never reaches the server's end: both speak runs' wire"},

		// The recorder and flow-execute are two products (issue 38, item
		// 5), and the CDP-to-runner adapter is a library of its own.
		{pkg: "tool/flowtool", none: []string{"tool/recordtool"}, why: "flow-execute knows no recorder"},
		{pkg: "tool/recordtool", none: []string{"tool/flowtool"}, why: "the recorder reaches flow-execute only through the registry"},
		{pkg: "device/cdprun", only: []string{"device/cdp", "fault", "flow", "flow/run"}, why: "the adapter joins the device and the runner, and nothing above them"},
		{pkg: "suite", none: []string{"cmd", "device", "tool", "server", "runs", "link", "store", "report"}, why: "the suite engine runs each flow through the caller's function: it knows no device, link, store or surface"},
		{pkg: "suite/linked", none: []string{"cmd", "device", "tool", "server", "runs", "store", "report", "control", "link/server"}, why: "a suite's flows over a link reach the tool-server through link/client only: no device, store, registry or surface"},
		{pkg: "suite/local", none: []string{"cmd", "tool", "server", "runs", "store", "report", "link", "control"}, why: "a suite's flows on this machine need the runner and a device of the caller's pool: no registry, link, store or surface"},
		{pkg: "snapshot/pngdiff", only: []string{"snapshot", "fault", "internal/atomicfile"}, why: "comparing two PNG files is the image code plus files and words: no flow, no device, no surface"},
		{pkg: "scaffold", only: []string{"flow", "internal/atomicfile", "internal/printable"}, why: "what init writes is templates and files: no run, no device, no surface"},
		{pkg: "report/junit", only: []string{"flow", "internal/atomicfile"}, why: "a report format needs only the language's reports"},
		{pkg: "storybook", none: []string{"cmd", "device", "tool", "server", "runs", "link", "flow/run", "report", "store"}, why: "a Storybook's stories, their selection and their flows are rules over data; the CLI and the tool read the Storybook"},

		// Test support, as net/http/httptest is: only tests import it.
		// pkg "*" is every package of the module; the map holds non-test
		// files only, so a _test.go file may import it.
		{pkg: "*", none: []string{"link/linktest", "tool/tooltest", "runs/runstest"}, why: "link/linktest (a stub tool-server), tool/tooltest (a registry's calls) and runs/runstest (a failing runs.Service) are for tests: only _test.go files import them"},
		{pkg: "runs/runstest", only: []string{"runs"}, why: "a test's runs.Service needs the runs' types and nothing else"},
		{pkg: "link/linktest", only: []string{"link/client"}, why: "the stub tool-server answers the link's client and needs nothing else"},
		{pkg: "tool/tooltest", only: []string{"tool", "fault"}, why: "a test's tool call needs the registry and the error vocabulary, nothing else"},
	}
	for _, r := range rules {
		pkgs := []string{r.pkg}
		if r.pkg == "*" {
			pkgs = slices.Sorted(maps.Keys(all))
		}
		for _, pkg := range pkgs {
			got, ok := all[pkg]
			if !ok {
				continue
			}
			for _, ip := range got {
				if r.only != nil && !slices.Contains(r.only, ip) {
					t.Errorf("%s imports %s: %s", pkg, ip, r.why)
				}
				for _, bad := range r.none {
					if within(ip, bad) && !within(pkg, bad) {
						t.Errorf("%s imports %s: %s", pkg, ip, r.why)
					}
				}
			}
		}
	}
	// Only the composition root registers the recorder: a front end
	// reaches its tools through the registry (issue 38, item 7). A
	// package's tests are not counted (the HTTP server's register it to
	// call its routes).
	for _, want := range []string{"tool/recordtool", "device/cdprun"} {
		if _, ok := all[want]; !ok {
			t.Errorf("package %s: not in the tree", want)
		}
	}
	for pkg, got := range all {
		if slices.Contains(got, "tool/recordtool") && pkg != "cmd/toolserver" {
			t.Errorf("%s imports tool/recordtool: only the composition root (cmd/toolserver) registers the recorder", pkg)
		}
	}
	// The language reads no flow file, baseline or stylesheet: flow/run's
	// Disk does. Of package flow, only the project config's loader opens a
	// file itself (LoadConfig, config.go).
	files := fileImports(t)
	for rel, ips := range files {
		if path.Dir(rel) != "flow" || rel == "flow/config.go" {
			continue
		}
		if slices.Contains(ips, "os") {
			t.Errorf("%s imports os: the language reads no file; a disk source is flow/run's Disk", rel)
		}
	}
	// The link's root holds only the package comment (the table of the
	// protocol's sections) and the test both ends share.
	if got := all["link"]; len(got) > 0 {
		t.Errorf("link (the root) imports %v: its code belongs in wire, link/client, link/server or link/tunnel", got)
	}
	// Only device/cdp speaks CDP.
	for rel, ips := range files {
		if within(path.Dir(rel), "device/cdp") {
			continue
		}
		for _, ip := range ips {
			if strings.HasPrefix(ip, "github.com/chromedp/") {
				t.Errorf("%s imports %s: only device/cdp speaks CDP", rel, ip)
			}
		}
	}
}

// TestCLIWires holds the composition root to wiring (P4 of the review of
// 2026-12-07): the product logic it once held lives in packages with
// their own tests, and the CLI uses them rather than a copy. The files
// that held that logic must not come back, and package main writes no
// JUnit XML of its own.
//
// The rule is on names and imports; what it cannot see (a Storybook
// index parsed again in main, say) the review of each change must.
// cliDenied are the imports that would mean the CLI holds product logic
// again: each names the package that owns that logic.
var cliDenied = []struct{ pkg, why string }{
	{"encoding/xml", "JUnit XML is report/junit's"},
	{"database/sql", "the run store is runs'"},
	{"github.com/jackc/pgx", "the fleet's database is runs'"},
	{"modernc.org/sqlite", "the embedded store is runs'"},
	{"github.com/hashicorp/yamux", "the tunnel's transport is link/tunnel's"},
	{"image/png", "images are snapshot's"},
	{"archive/tar", "members and uploads are the link's"},
	{"compress/gzip", "members and uploads are the link's"},
	{"net/http/httptest", "a test's server is the tests'"},
}

func TestCLIWires(t *testing.T) {
	const cli = "cmd/toolserver"
	all := imports(t)
	for _, want := range []string{"storybook", "suite", "suite/linked", "suite/local", "snapshot/pngdiff", "report/junit", "scaffold"} {
		if !slices.Contains(all[cli], want) {
			t.Errorf("%s does not import %s: the CLI runs its %s through it", cli, want, path.Base(want))
		}
	}
	dir := filepath.Join("../..", filepath.FromSlash(cli))
	for _, gone := range []string{"storybook_index.go", "junit.go", "flow_targets.go", "flow_workers.go", "inittemplates", "link_tunnel.go", "flow_spread.go", "artifacts.go"} {
		if _, err := os.Stat(filepath.Join(dir, gone)); err == nil {
			t.Errorf("%s/%s exists: its logic lives in storybook, report/junit, suite, suite/linked, suite/local, snapshot/pngdiff, store and scaffold", cli, gone)
		}
	}
	for rel, ips := range fileImports(t) {
		if path.Dir(rel) != cli {
			continue
		}
		for _, ip := range ips {
			for _, d := range cliDenied {
				if ip == d.pkg || strings.HasPrefix(ip, d.pkg+"/") {
					t.Errorf("%s imports %s: %s", rel, ip, d.why)
				}
			}
		}
	}
}
