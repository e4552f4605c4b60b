// Package cdptest is the shared test rig of the packages that drive
// Chromium: one browser process per test binary, a device per test (its
// own browser context: cookies and storage start empty), the pages of
// testdata/pages served once over httptest, and a goroutine-leak check
// when the tests are done.
//
// A package opts in with
//
//	func TestMain(m *testing.M) { cdptest.Main(m) }
//
// and its tests call Device (or Pool, to address devices by id through
// the tools) and Pages. Tests that each use their own device id may run
// in parallel.
package cdptest

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/toolserver/toolserver/device/cdp"
)

// The rig of the test binary, set up by Main before any test runs.
var (
	pool  *cdp.Pool
	pages *httptest.Server
)

// MaxDevices bounds the devices of the shared pool: far more than the
// tests of one package boot at once.
const MaxDevices = 64

// Main runs the package's tests on the shared rig, then closes it and
// fails the run if a goroutine outlived it (goleak). It does not return.
func Main(m *testing.M) {
	os.Exit(Run(m))
}

// Run is Main without the exit: the tests' exit code, for a TestMain that
// has more to stop after them.
func Run(m *testing.M) int {
	raiseParallel()
	pool = cdp.NewPool(cdp.Options{SharedBrowser: true, MaxDevices: MaxDevices, NoSparePage: true, Log: os.Stderr})
	if err := pool.Err(); err != nil {
		fmt.Fprintln(os.Stderr, "cdptest:", err)
		return 2
	}
	dir, err := pagesDir()
	if err != nil {
		fmt.Fprintln(os.Stderr, "cdptest:", err)
		return 2
	}
	pages = httptest.NewServer(http.FileServer(http.Dir(dir)))
	code := m.Run()
	pool.Close()
	pages.Close()
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, "cdptest: goroutines outlived the tests:", err)
			code = 1
		}
	}
	return code
}

// parallelPerCPU is how many tests run at once per CPU when the run does
// not say (-parallel): a test on the rig spends most of its time waiting
// for the browser (loads, settling, the interval between captures), so at
// testing's default of one per CPU the CPUs are half idle. Two per CPU
// fill them; more made the suite slower, the browser and the race
// detector then contending for the CPUs.
const parallelPerCPU = 2

// raiseParallel sets -test.parallel to parallelPerCPU tests per CPU
// unless the command line gave it.
func raiseParallel() {
	if !flag.Parsed() {
		flag.Parse()
	}
	given := false
	flag.Visit(func(f *flag.Flag) { given = given || f.Name == "test.parallel" })
	if !given {
		flag.Set("test.parallel", strconv.Itoa(parallelPerCPU*runtime.GOMAXPROCS(0)))
	}
}

// pagesDir finds testdata/pages at the root of the module, above the
// package directory a test binary runs in.
func pagesDir() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return filepath.Join(dir, "testdata", "pages"), nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod above the test's directory, so no testdata/pages")
		}
		dir = parent
	}
}

// Pool returns the shared pool. Tests that address devices by id (through
// the tools) stop the devices they booted, or call Device to have it done.
func Pool(t testing.TB) *cdp.Pool {
	t.Helper()
	if pool == nil {
		t.Fatal("cdptest: the package's TestMain must call cdptest.Main")
	}
	return pool
}

// Pages returns the URL the pages of testdata/pages are served at.
func Pages(t testing.TB) string {
	t.Helper()
	if pages == nil {
		t.Fatal("cdptest: the package's TestMain must call cdptest.Main")
	}
	return pages.URL
}

// PagesURL is Pages for helpers that have no testing.TB at hand. It
// panics in a package whose TestMain does not call Main.
func PagesURL() string {
	if pages == nil {
		panic("cdptest: the package's TestMain must call cdptest.Main")
	}
	return pages.URL
}

// Device boots the device id in the shared browser and stops it when the
// test ends. Each test names its own id: two tests on one id share a page.
func Device(t testing.TB, id string) *cdp.Device {
	t.Helper()
	Claim(t, id)
	p := Pool(t)
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	d, err := p.Device(ctx, id)
	if err != nil {
		t.Fatalf("boot %s: %v", id, err)
	}
	t.Cleanup(func() { Stop(t, id) })
	return d
}

// claims maps each device id a running test uses to that test's name.
var claims sync.Map

// Claim makes id the device of t until t ends. A test that claims an id
// another running test holds fails at once, naming both: two tests on one
// id share a page and fail each other in ways that are hard to read. A
// test and its subtests may share an id.
func Claim(t testing.TB, id string) {
	t.Helper()
	name := t.Name()
	if prev, loaded := claims.LoadOrStore(id, name); loaded {
		p := prev.(string)
		if p != name && !strings.HasPrefix(name, p+"/") && !strings.HasPrefix(p, name+"/") {
			t.Fatalf("cdptest: device %s is in use by %s, which runs at the same time: give this test an id of its own", id, p)
		}
		return
	}
	t.Cleanup(func() { claims.CompareAndDelete(id, name) })
}

// Stop stops the device id if it is booted; for the cleanup of tests that
// boot a device through the tools.
func Stop(t testing.TB, id string) {
	t.Helper()
	if err := Pool(t).Stop(id); err != nil && !errors.Is(err, cdp.ErrNotBooted) {
		t.Errorf("stop %s: %v", id, err)
	}
}
