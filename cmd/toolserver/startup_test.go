package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// Budgets of the work every command pays before main: what the init of a
// package of ours may allocate, and what all the inits of the binary
// together may (the third-party ones included, which a new dependency
// could make heavy). A package-level regexp, table or embedded-file
// digest is made on first use instead (docs/performance.md, "Start-up").
// Counts, not times: GODEBUG=inittrace=1 reports both, and only the
// counts are the same on every run.
const (
	ourInitAllocs   = 64
	ourInitBytes    = 16 << 10
	totalInitAllocs = 3000
	totalInitBytes  = 448 << 10
)

// initLine is one line of GODEBUG=inittrace=1:
// "init example.com/pkg @0.5 ms, 0.01 ms clock, 1024 bytes, 12 allocs".
var initLine = regexp.MustCompile(`^init (\S+) @\S+ ms, \S+ ms clock, (\d+) bytes, (\d+) allocs$`)

// packageInit is what one package's init allocated.
type packageInit struct {
	pkg           string
	bytes, allocs int
}

// traceInits runs the CLI (this test binary started as toolserver, see
// TestMain) with args under GODEBUG=inittrace=1 and returns its inits.
func traceInits(t *testing.T, args ...string) []packageInit {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(t.TempDir(), "toolserver")
	if err := os.Symlink(self, bin); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, args...)
	godebug := "inittrace=1"
	if v := os.Getenv("GODEBUG"); v != "" {
		godebug = v + "," + godebug
	}
	cmd.Env = append(os.Environ(), "GODEBUG="+godebug)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("toolserver %s: %v\n%s", strings.Join(args, " "), err, stderr.Bytes())
	}
	var inits []packageInit
	for line := range strings.Lines(stderr.String()) {
		m := initLine.FindStringSubmatch(strings.TrimSpace(line))
		if m == nil {
			continue
		}
		b, _ := strconv.Atoi(m[2])
		a, _ := strconv.Atoi(m[3])
		inits = append(inits, packageInit{pkg: m[1], bytes: b, allocs: a})
	}
	if len(inits) == 0 {
		t.Fatalf("toolserver %s under GODEBUG=inittrace=1 traced no init:\n%s", strings.Join(args, " "), stderr.Bytes())
	}
	return inits
}

// TestStartupInitBudget checks that no package of ours does heavy work
// before main, for a command that needs none of it: `snapshot diff` pays
// every init of the binary, the run store's and the report's included.
func TestStartupInitBudget(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{{"version"}, {"snapshot", "diff", "--help"}} {
		inits := traceInits(t, args...)
		var allocs, bytes int
		for _, in := range inits {
			allocs += in.allocs
			bytes += in.bytes
			// The package main of this test binary holds the test files'
			// variables too; the binary's own main does next to nothing.
			if !strings.HasPrefix(in.pkg, "github.com/toolserver/toolserver/") || in.pkg == "github.com/toolserver/toolserver/cmd/toolserver" {
				continue
			}
			if in.allocs > ourInitAllocs || in.bytes > ourInitBytes {
				t.Errorf("toolserver %s: the init of %s allocates %d bytes in %d allocations, over the budget of %d bytes in %d",
					strings.Join(args, " "), in.pkg, in.bytes, in.allocs, ourInitBytes, ourInitAllocs)
			}
		}
		if allocs > totalInitAllocs || bytes > totalInitBytes {
			t.Errorf("toolserver %s: the inits of %d packages allocate %d bytes in %d allocations, over the budget of %d bytes in %d",
				strings.Join(args, " "), len(inits), bytes, allocs, totalInitBytes, totalInitAllocs)
		}
	}
}
