package snapshottool_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/toolserver/toolserver/device/cdp"
	"github.com/toolserver/toolserver/device/cdp/cdptest"
	"github.com/toolserver/toolserver/fault"
	"github.com/toolserver/toolserver/server"
	"github.com/toolserver/toolserver/store"
	"github.com/toolserver/toolserver/tool"
	"github.com/toolserver/toolserver/tool/snapshottool"
)

const vectors = "../../testdata/vectors/images"

func TestMain(m *testing.M) { cdptest.Main(m) }

func registry(t *testing.T) (*tool.Registry, *store.Artifacts) {
	t.Helper()
	arts, err := store.NewArtifacts(t.TempDir(), 100, 1<<30)
	if err != nil {
		t.Fatal(err)
	}
	r := tool.NewRegistry()
	(&snapshottool.Tools{Pool: cdptest.Pool(t), Artifacts: arts}).Register(r)
	return r, arts
}

// wire wraps a file as a linked client sends it: path, size and bytes.
func wire(t *testing.T, path string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return map[string]any{"__argentFileInput": true, "path": "/client/" + filepath.Base(path), "size": len(b), "mtimeMs": 1.0, "content": base64.StdEncoding.EncodeToString(b)}
}

func invoke(t *testing.T, r *tool.Registry, args map[string]any) (map[string]any, error) {
	t.Helper()
	raw, _ := json.Marshal(args)
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	res, err := r.Invoke(ctx, "screenshot-diff", raw, tool.Options{TempDir: t.TempDir()})
	if err != nil {
		return nil, err
	}
	b, err := json.Marshal(res)
	if err != nil {
		t.Fatalf("screenshot-diff result: %v", err)
	}
	var out map[string]any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatalf("screenshot-diff result %s: %v", b, err)
	}
	return out, nil
}

func TestScreenshotDiffFiles(t *testing.T) {
	t.Parallel()
	r, arts := registry(t)
	res, err := invoke(t, r, map[string]any{"baselinePath": wire(t, vectors+"/1280x800/small-a.png"), "currentPath": wire(t, vectors+"/1280x800/small-b.png")})
	if err != nil {
		t.Fatal(err)
	}
	regions, _ := res["regions"].([]any)
	if res["identical"] != false || res["mismatchPixels"].(float64) == 0 || len(regions) == 0 || res["width"] != 1280.0 {
		t.Fatalf("got %v", res)
	}
	diff, _ := res["diff"].(map[string]any)
	if _, _, err := arts.Get(fmt.Sprint(diff["id"])); err != nil {
		t.Fatalf("diff artifact: %v (%v)", err, res["diff"])
	}
	res, err = invoke(t, r, map[string]any{"baselinePath": wire(t, vectors+"/1280x800/small-a.png"), "currentPath": wire(t, vectors+"/1280x800/small-a.png")})
	if err != nil || res["identical"] != true || res["passed"] != true || res["diff"] != nil {
		t.Fatalf("identical: %v %v", res, err)
	}
	res, err = invoke(t, r, map[string]any{"baselinePath": wire(t, vectors+"/390x844/dims-a.png"), "currentPath": wire(t, vectors+"/390x844/dims-b.png")})
	if err != nil || res["sizeMismatch"] != true || res["passed"] != false {
		t.Fatalf("sizes: %v %v", res, err)
	}
	bad := filepath.Join(t.TempDir(), "bad.png")
	os.WriteFile(bad, []byte("not a png at all"), 0o644)
	_, err = invoke(t, r, map[string]any{"baselinePath": bad, "currentPath": bad})
	var te *fault.Error
	if !errors.As(err, &te) || server.Status(te.Kind) != 422 {
		t.Fatalf("not a PNG: got %v, want 422", err)
	}
}

func TestScreenshotDiffLiveCapture(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	d := cdptest.Device(t, "chromium-cdp-800x600")
	if err := d.Launch(ctx, cdptest.Pages(t)+"/app.html"); err != nil {
		t.Fatal(err)
	}
	shot, err := d.StableScreenshot(ctx, 5)
	if err != nil {
		t.Fatal(err)
	}
	base := filepath.Join(t.TempDir(), "base.png")
	os.WriteFile(base, shot.PNG, 0o644)
	r, _ := registry(t)
	res, err := invoke(t, r, map[string]any{"baselinePath": base, "device": "chromium-cdp-800x600"})
	if err != nil || res["mismatchPixels"] != 0.0 || res["passed"] != true {
		t.Fatalf("same page: %v %v", res, err)
	}
	el, err := d.Locate(ctx, cdp.Selector{ID: "top"}, 5*time.Second)
	if err != nil || el == nil {
		t.Fatalf("locate the button: got %v, %v", el, err)
	}
	if err := d.TapElement(ctx, el, 1, 0); err != nil {
		t.Fatal(err)
	}
	res, err = invoke(t, r, map[string]any{"baselinePath": base, "device": "chromium-cdp-800x600", "maxMismatch": 0})
	if err != nil || res["mismatchPixels"].(float64) == 0 || res["passed"] != false {
		t.Fatalf("changed page: %v %v", res, err)
	}
}

// TestScreenshotDiffPixelmatch8: metric, windowSize and ignore reach the
// comparison and give pixelmatch 8.0.0's counts of the shared pair
// (testdata/vectors/pixelmatch8.json, 1280x800/small); the result names
// the metric and the window only when they were asked for.
func TestScreenshotDiffPixelmatch8(t *testing.T) {
	t.Parallel()
	r, _ := registry(t)
	pair := func(extra map[string]any) map[string]any {
		args := map[string]any{"baselinePath": wire(t, vectors+"/1280x800/small-a.png"), "currentPath": wire(t, vectors+"/1280x800/small-b.png")}
		for k, v := range extra {
			args[k] = v
		}
		return args
	}
	for _, c := range []struct {
		name  string
		extra map[string]any
		want  float64
	}{
		{"oklab", map[string]any{"metric": "oklab"}, 398},
		{"window 16", map[string]any{"metric": "oklab", "windowSize": 16}, 83},
		{"ignore the change", map[string]any{"metric": "oklab", "ignore": []any{map[string]any{"x": 0, "y": 0, "width": 640, "height": 200}}}, 0},
	} {
		res, err := invoke(t, r, pair(c.extra))
		if err != nil || res["mismatchPixels"] != c.want || res["metric"] != "oklab" {
			t.Errorf("%s: %v %v; want %g pixels, metric oklab", c.name, res["mismatchPixels"], err, c.want)
		}
		if _, ok := c.extra["windowSize"]; ok && (res["windowSize"] != 16.0 || res["totalMismatchPixels"] != 398.0) {
			t.Errorf("%s: windowSize %v, totalMismatchPixels %v; want 16 and 398", c.name, res["windowSize"], res["totalMismatchPixels"])
		}
	}
	res, err := invoke(t, r, pair(nil))
	if err != nil || res["metric"] != nil || res["windowSize"] != nil {
		t.Errorf("without the options: %v; want no metric or windowSize in the result", err)
	}
	many := make([]any, 33)
	for i := range many {
		many[i] = map[string]any{"x": 0, "y": 0, "width": 1, "height": 1}
	}
	var te *fault.Error
	if _, err := invoke(t, r, pair(map[string]any{"ignore": many})); !errors.As(err, &te) || te.Field != "ignore" {
		t.Errorf("33 ignore rectangles: got %v, want a refusal naming ignore", err)
	}
}
