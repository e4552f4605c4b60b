package flowtool

import (
	"os"
	"testing"

	"github.com/toolserver/toolserver/device/cdp/cdptest"
	"github.com/toolserver/toolserver/internal/pgtest"
	"github.com/toolserver/toolserver/store"
	"github.com/toolserver/toolserver/tool"
	"github.com/toolserver/toolserver/tool/devicetool"
)

// TestMain stops the PostgreSQL cluster the benchmarks may have started
// (internal/pgtest) after the tests.
func TestMain(m *testing.M) {
	code := cdptest.Run(m)
	pgtest.Stop()
	os.Exit(code)
}

// newRegistry returns the device and flow tools over the shared pool, with
// artifacts of their own.
func newRegistry(t *testing.T) *tool.Registry {
	t.Helper()
	arts, err := store.NewArtifacts(t.TempDir(), 100, 1<<30)
	if err != nil {
		t.Fatal(err)
	}
	r := tool.NewRegistry()
	(&devicetool.Tools{Pool: cdptest.Pool(t), Artifacts: arts}).Register(r)
	(&Tools{Pool: cdptest.Pool(t), Artifacts: arts}).Register(r)
	return r
}
