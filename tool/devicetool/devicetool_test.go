package devicetool_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"image/png"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/toolserver/toolserver/device/cdp"
	"github.com/toolserver/toolserver/store"
	"github.com/toolserver/toolserver/tool"
	"github.com/toolserver/toolserver/tool/devicetool"
)

var (
	reg   *tool.Registry
	arts  *store.Artifacts
	pool  *cdp.Pool
	pages *httptest.Server
)

func TestMain(m *testing.M) {
	var err error
	pool, err = cdp.NewPool(cdp.Options{MaxDevices: 8})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	dir, _ := os.MkdirTemp("", "devicetool-test-")
	arts, _ = store.NewArtifacts(dir, 100, 1<<30)
	reg = tool.NewRegistry()
	(&devicetool.Tools{Pool: pool, Artifacts: arts}).Register(reg)
	pages = httptest.NewServer(http.FileServer(http.Dir("../../testdata/pages")))
	code := m.Run()
	pages.Close()
	pool.Close()
	os.RemoveAll(dir)
	os.Exit(code)
}

// call invokes a tool with args and decodes its result into a generic map.
func call(t *testing.T, name string, args any) map[string]any {
	t.Helper()
	res, err := invoke(t, name, args)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return res
}

func invoke(t *testing.T, name string, args any) (map[string]any, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	raw, _ := json.Marshal(args)
	res, err := reg.Invoke(ctx, name, raw, tool.Options{})
	if err != nil {
		return nil, err
	}
	b, _ := json.Marshal(res)
	var out map[string]any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatalf("%s result %s: %v", name, b, err)
	}
	return out, nil
}

// open boots id on the test page and stops it after the test.
func open(t *testing.T, id string) {
	t.Helper()
	call(t, "open-url", map[string]any{"device": id, "url": pages.URL + "/app.html", "fresh": true})
	t.Cleanup(func() { _ = pool.Stop(id) })
}

func eval(t *testing.T, id, expr string) string {
	t.Helper()
	d, ok := pool.Lookup(id)
	if !ok {
		t.Fatalf("%s not booted", id)
	}
	raw, err := d.Eval(context.Background(), expr)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Trim(string(raw), `"`)
}

func TestBootListStop(t *testing.T) {
	const id = "chromium-cdp-640x480"
	res := call(t, "boot-device", map[string]any{"device": id})
	if res["width"] != 640.0 || res["height"] != 480.0 || res["id"] != id {
		t.Fatalf("boot-device: got %v", res)
	}
	list := call(t, "list-devices", map[string]any{})
	if !strings.Contains(fmt.Sprint(list["devices"]), id) {
		t.Fatalf("list-devices does not show %s: %v", id, list)
	}
	call(t, "stop-device", map[string]any{"udid": id})
	if _, ok := pool.Lookup(id); ok {
		t.Fatalf("%s still booted after stop-device", id)
	}
	_, err := invoke(t, "stop-device", map[string]any{"device": id})
	var te *tool.Error
	if !errors.As(err, &te) || te.HTTPStatus() != 404 {
		t.Fatalf("stop of a stopped device: got %v, want a 404 tool error", err)
	}
}

func TestScreenshotArtifact(t *testing.T) {
	const id = "chromium-cdp-1280x800"
	open(t, id)
	res := call(t, "screenshot", map[string]any{"device": id})
	img := res["image"].(map[string]any)
	if img["__argentArtifact"] != true || img["mimeType"] != "image/png" {
		t.Fatalf("got %v, want an image/png artifact handle", img)
	}
	_, path, err := arts.Get(img["id"].(string))
	if err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(path)
	cfg, err := png.DecodeConfig(bytes.NewReader(data))
	if err != nil || cfg.Width != 1280 || cfg.Height != 800 {
		t.Fatalf("screenshot: %dx%d, %v; want 1280x800", cfg.Width, cfg.Height, err)
	}
}

func TestTapSwipeScrollKeyboard(t *testing.T) {
	const id = "chromium-cdp-800x600"
	open(t, id)
	call(t, "gesture-tap", map[string]any{"device": id, "x": 200.0 / 800, "y": 70.0 / 600})
	if got := eval(t, id, `document.getElementById('out').textContent`); got != "clicked 1" {
		t.Fatalf("after gesture-tap: got %q, want %q", got, "clicked 1")
	}
	call(t, "gesture-tap", map[string]any{"device": id, "x": 250.0 / 800, "y": 210.0 / 600})
	call(t, "keyboard", map[string]any{"device": id, "text": "Hi", "key": "enter"})
	if got := eval(t, id, `document.getElementById('echo').textContent`); got != "hello Hi" {
		t.Fatalf("after keyboard: got %q, want %q", got, "hello Hi")
	}
	if got := eval(t, id, `document.getElementById('keys').textContent`); got != "H,i,Enter," {
		t.Fatalf("keys: got %q, want %q", got, "H,i,Enter,")
	}
	call(t, "gesture-scroll", map[string]any{"device": id, "deltaY": 500})
	res := call(t, "await-ui-element", map[string]any{"device": id, "condition": "hidden", "selector": map[string]any{"identifier": "top"}, "timeoutMs": 3000})
	if res["success"] != true {
		t.Fatalf("after scroll the button should be hidden: %v", res)
	}
	call(t, "gesture-swipe", map[string]any{"device": id, "fromX": 0.5, "fromY": 0.1, "toX": 0.5, "toY": 0.95, "durationMs": 100})
	res = call(t, "await-ui-element", map[string]any{"device": id, "condition": "visible", "selector": map[string]any{"text": "go now"}, "timeoutMs": 3000})
	if res["success"] != true {
		t.Fatalf("after swipe down the button should be visible: %v", res)
	}
}

func TestDescribeAndAwait(t *testing.T) {
	const id = "chromium-cdp-1000x500"
	open(t, id)
	res := call(t, "describe", map[string]any{"device": id})
	var found map[string]any
	for _, e := range res["elements"].([]any) {
		if m := e.(map[string]any); m["id"] == "top" {
			found = m
		}
	}
	if found == nil || found["role"] != "button" || found["text"] != "Go now" {
		t.Fatalf("describe: got %v, want the button #top", found)
	}
	fr := found["frame"].(map[string]any)
	if fr["x"] != 0.1 || fr["y"] != 0.1 || fr["width"] != 0.2 || fr["height"] != 0.08 {
		t.Fatalf("frame: got %v, want x .1 y .1 w .2 h .08", fr)
	}
	res = call(t, "await-ui-element", map[string]any{"device": id, "condition": "text", "selector": map[string]any{"identifier": "out"}, "expectedText": "not clicked"})
	if res["success"] != true {
		t.Fatalf("await text: %v", res)
	}
	res = call(t, "await-ui-element", map[string]any{"device": id, "condition": "visible", "selector": map[string]any{"text": "absent thing"}, "timeoutMs": 100})
	if res["success"] != false || res["note"] == nil {
		t.Fatalf("await of an absent element: got %v, want success false with a note", res)
	}
	res = call(t, "await-screen-idle", map[string]any{"device": id, "stableForMs": 50})
	if res["idle"] != true {
		t.Fatalf("await-screen-idle: %v", res)
	}
}

func TestBadInput(t *testing.T) {
	for _, tc := range []struct {
		name, tool string
		args       any
		field      string
	}{
		{"bad id", "screenshot", map[string]any{"device": "iphone-15"}, "device"},
		{"too small", "screenshot", map[string]any{"device": "chromium-cdp-10x10"}, "device"},
		{"no device", "describe", map[string]any{}, "device"},
		{"wrong type", "gesture-tap", map[string]any{"device": "chromium-cdp-800x600", "x": "left", "y": 0.5}, "x"},
		{"out of range", "gesture-tap", map[string]any{"device": "chromium-cdp-800x600", "x": 2, "y": 0.5}, "x"},
		{"unknown arg", "describe", map[string]any{"device": "chromium-cdp-800x600", "colour": "red"}, "colour"},
		{"missing required", "open-url", map[string]any{"device": "chromium-cdp-800x600"}, "url"},
		{"bad enum", "await-ui-element", map[string]any{"device": "chromium-cdp-800x600", "condition": "gone", "selector": map[string]any{"text": "x"}}, "condition"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := invoke(t, tc.tool, tc.args)
			var te *tool.Error
			if !errors.As(err, &te) || te.HTTPStatus() != 400 || te.Field != tc.field {
				t.Fatalf("got %v (%+v), want a 400 naming %q", err, te, tc.field)
			}
		})
	}
	_, err := reg.Invoke(context.Background(), "describe", []byte(`{"device":`), tool.Options{})
	var te *tool.Error
	if !errors.As(err, &te) || te.HTTPStatus() != 400 {
		t.Fatalf("malformed JSON: got %v, want 400", err)
	}
	_, err = reg.Invoke(context.Background(), "no-such-tool", []byte(`{}`), tool.Options{})
	if !errors.As(err, &te) || te.HTTPStatus() != 404 {
		t.Fatalf("unknown tool: got %v, want 404", err)
	}
}

func TestNoChromium(t *testing.T) {
	_, poolErr := cdp.NewPool(cdp.Options{ExecPath: "/nonexistent/chromium"})
	r := tool.NewRegistry()
	(&devicetool.Tools{PoolErr: poolErr, Artifacts: arts}).Register(r)
	_, err := r.Invoke(context.Background(), "screenshot", []byte(`{"device":"chromium-cdp-800x600"}`), tool.Options{})
	var te *tool.Error
	if !errors.As(err, &te) || te.HTTPStatus() != 503 || !strings.Contains(te.Error(), "CHROMIUM_PATH") {
		t.Fatalf("got %v, want 503 telling how to get Chromium", err)
	}
}
