package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/toolserver/toolserver/device/cdp/cdptest"
	"github.com/toolserver/toolserver/internal/pgtest"
)

// TestMain runs the tests on the shared rig of cdptest (one browser for
// the commands the tests run in process), which fails the run when a
// goroutine outlives the tests: every server, sweeper and browser a
// command starts ends before the command returns.
//
// Started under the name toolserver (TestCompletionBash puts a link of
// that name to this binary on PATH), the binary is the CLI itself.
func TestMain(m *testing.M) {
	if filepath.Base(os.Args[0]) == "toolserver" {
		main()
	}
	code := cdptest.Run(m)
	pgtest.Stop()
	os.Exit(code)
}
