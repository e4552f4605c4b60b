package flowtool

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"testing"
	"time"

	"github.com/toolserver/toolserver/device/cdp/cdptest"
	"github.com/toolserver/toolserver/fault"
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

// invoke calls a tool of r, as a linked client when linked, and decodes
// its result into a generic map.
func invoke(t *testing.T, r *tool.Registry, name string, args map[string]any, linked bool) (map[string]any, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	raw, err := json.Marshal(args)
	if err != nil {
		t.Fatal(err)
	}
	res, err := r.Invoke(ctx, name, raw, tool.Options{Linked: linked})
	if err != nil {
		return nil, err
	}
	b, err := json.Marshal(res)
	if err != nil {
		t.Fatalf("%s result: %v", name, err)
	}
	var out map[string]any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatalf("%s result %s: %v", name, b, err)
	}
	return out, nil
}

func call(t *testing.T, reg *tool.Registry, name string, args map[string]any) map[string]any {
	t.Helper()
	res, err := invoke(t, reg, name, args, false)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return res
}

// wantCode checks that err is a tool error with code.
func wantCode(t *testing.T, err error, code string) *fault.Error {
	t.Helper()
	var te *fault.Error
	if !errors.As(err, &te) || te.Code != code {
		t.Fatalf("got %v, want a %s error", err, code)
	}
	return te
}
