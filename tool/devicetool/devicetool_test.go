package devicetool_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"image/png"
	"net"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/toolserver/toolserver/device/cdp"
	"github.com/toolserver/toolserver/device/cdp/cdptest"
	"github.com/toolserver/toolserver/fault"
	"github.com/toolserver/toolserver/server"
	"github.com/toolserver/toolserver/store"
	"github.com/toolserver/toolserver/tool"
	"github.com/toolserver/toolserver/tool/devicetool"
)

func TestMain(m *testing.M) { cdptest.Main(m) }

// rig is the device tools over the shared pool, storing artifacts in the
// test's own directory.
type rig struct {
	reg  *tool.Registry
	arts *store.Artifacts
}

func newRig(t *testing.T) *rig {
	t.Helper()
	arts, err := store.NewArtifacts(t.TempDir(), 100, 1<<30)
	if err != nil {
		t.Fatal(err)
	}
	r := &rig{reg: tool.NewRegistry(), arts: arts}
	(&devicetool.Tools{Pool: cdptest.Pool(t), Artifacts: arts}).Register(r.reg)
	return r
}

// call invokes a tool with args and decodes its result into a generic map.
func (r *rig) call(t *testing.T, name string, args any) map[string]any {
	t.Helper()
	res, err := r.invoke(t, name, args)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return res
}

func (r *rig) invoke(t *testing.T, name string, args any) (map[string]any, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	raw, _ := json.Marshal(args)
	res, err := r.reg.Invoke(ctx, name, raw, tool.Options{})
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
func (r *rig) open(t *testing.T, id string) {
	t.Helper()
	t.Cleanup(func() { cdptest.Stop(t, id) })
	r.call(t, "open-url", map[string]any{"device": id, "url": cdptest.Pages(t) + "/app.html", "fresh": true})
}

// text returns the text of the element whose DOM id is elID on device id,
// as describe reports it; "" when describe lists no such element (an
// empty one has no box).
func (r *rig) text(t *testing.T, id, elID string) string {
	t.Helper()
	res := r.call(t, "describe", map[string]any{"device": id})
	for _, e := range res["elements"].([]any) {
		if m := e.(map[string]any); m["id"] == elID {
			s, _ := m["text"].(string)
			return s
		}
	}
	return ""
}

func TestBootListStop(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	const id = "chromium-cdp-640x480"
	res := r.call(t, "boot-device", map[string]any{"device": id})
	if res["width"] != 640.0 || res["height"] != 480.0 || res["id"] != id {
		t.Fatalf("boot-device: got %v", res)
	}
	list := r.call(t, "list-devices", map[string]any{})
	if !strings.Contains(fmt.Sprint(list["devices"]), id) {
		t.Fatalf("list-devices does not show %s: %v", id, list)
	}
	r.call(t, "stop-device", map[string]any{"udid": id})
	if _, ok := cdptest.Pool(t).Lookup(id); ok {
		t.Fatalf("%s still booted after stop-device", id)
	}
	_, err := r.invoke(t, "stop-device", map[string]any{"device": id})
	var te *fault.Error
	if !errors.As(err, &te) || server.Status(te.Kind) != 404 {
		t.Fatalf("stop of a stopped device: got %v, want a 404 tool error", err)
	}
}

func TestScreenshotArtifact(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	const id = "chromium-cdp-1280x800"
	r.open(t, id)
	res := r.call(t, "screenshot", map[string]any{"device": id})
	img := res["image"].(map[string]any)
	if img["__argentArtifact"] != true || img["mimeType"] != "image/png" {
		t.Fatalf("got %v, want an image/png artifact handle", img)
	}
	_, path, err := r.arts.Get(img["id"].(string))
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
	t.Parallel()
	r := newRig(t)
	const id = "chromium-cdp-800x600"
	r.open(t, id)
	r.call(t, "gesture-tap", map[string]any{"device": id, "x": 200.0 / 800, "y": 70.0 / 600})
	if got := r.text(t, id, "out"); got != "clicked 1" {
		t.Fatalf("after gesture-tap: got %q, want %q", got, "clicked 1")
	}
	r.call(t, "gesture-tap", map[string]any{"device": id, "x": 250.0 / 800, "y": 210.0 / 600})
	r.call(t, "keyboard", map[string]any{"device": id, "text": "Hi", "key": "enter"})
	if got := r.text(t, id, "echo"); got != "hello Hi" {
		t.Fatalf("after keyboard: got %q, want %q", got, "hello Hi")
	}
	if got := r.text(t, id, "keys"); got != "H,i,Enter," {
		t.Fatalf("keys: got %q, want %q", got, "H,i,Enter,")
	}
	r.call(t, "gesture-scroll", map[string]any{"device": id, "deltaY": 500})
	res := r.call(t, "await-ui-element", map[string]any{"device": id, "condition": "hidden", "selector": map[string]any{"identifier": "top"}, "timeoutMs": 3000})
	if res["success"] != true {
		t.Fatalf("after scroll the button should be hidden: %v", res)
	}
	r.call(t, "gesture-swipe", map[string]any{"device": id, "fromX": 0.5, "fromY": 0.1, "toX": 0.5, "toY": 0.95, "durationMs": 100})
	res = r.call(t, "await-ui-element", map[string]any{"device": id, "condition": "visible", "selector": map[string]any{"text": "go now"}, "timeoutMs": 3000})
	if res["success"] != true {
		t.Fatalf("after swipe down the button should be visible: %v", res)
	}
}

func TestDescribeAndAwait(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	const id = "chromium-cdp-1000x500"
	r.open(t, id)
	res := r.call(t, "describe", map[string]any{"device": id})
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
	res = r.call(t, "await-ui-element", map[string]any{"device": id, "condition": "text", "selector": map[string]any{"identifier": "out"}, "expectedText": "not clicked"})
	if res["success"] != true {
		t.Fatalf("await text: %v", res)
	}
	res = r.call(t, "await-ui-element", map[string]any{"device": id, "condition": "visible", "selector": map[string]any{"text": "absent thing"}, "timeoutMs": 100})
	if res["success"] != false || res["note"] == nil {
		t.Fatalf("await of an absent element: got %v, want success false with a note", res)
	}
	res = r.call(t, "await-screen-idle", map[string]any{"device": id, "stableForMs": 50})
	if res["idle"] != true {
		t.Fatalf("await-screen-idle: %v", res)
	}
}

func TestBadInput(t *testing.T) {
	t.Parallel()
	r := newRig(t)
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
			_, err := r.invoke(t, tc.tool, tc.args)
			var te *fault.Error
			if !errors.As(err, &te) || server.Status(te.Kind) != 400 || te.Field != tc.field {
				t.Fatalf("got %v (%+v), want a 400 naming %q", err, te, tc.field)
			}
		})
	}
	_, err := r.reg.Invoke(t.Context(), "describe", []byte(`{"device":`), tool.Options{})
	var te *fault.Error
	if !errors.As(err, &te) || server.Status(te.Kind) != 400 {
		t.Fatalf("malformed JSON: got %v, want 400", err)
	}
	_, err = r.reg.Invoke(t.Context(), "no-such-tool", []byte(`{}`), tool.Options{})
	if !errors.As(err, &te) || server.Status(te.Kind) != 404 {
		t.Fatalf("unknown tool: got %v, want 404", err)
	}
}

func TestNoChromium(t *testing.T) {
	t.Parallel()
	p := cdp.NewPool(cdp.Options{ExecPath: "/nonexistent/chromium"})
	defer p.Close()
	r := tool.NewRegistry()
	arts, err := store.NewArtifacts(t.TempDir(), 100, 1<<30)
	if err != nil {
		t.Fatal(err)
	}
	(&devicetool.Tools{Pool: p, Artifacts: arts}).Register(r)
	for _, tc := range []struct{ tool, args string }{
		{"screenshot", `{"device":"chromium-cdp-800x600"}`},
		{"stop-device", `{"device":"chromium-cdp-800x600"}`},
	} {
		_, err := r.Invoke(t.Context(), tc.tool, []byte(tc.args), tool.Options{})
		var te *fault.Error
		if !errors.As(err, &te) || server.Status(te.Kind) != 503 || !strings.Contains(te.Error(), "CHROMIUM_PATH") {
			t.Fatalf("%s: got %v, want 503 telling how to get Chromium", tc.tool, err)
		}
	}
	res, err := r.Invoke(t.Context(), "list-devices", []byte(`{}`), tool.Options{})
	if err != nil {
		t.Fatalf("list-devices: got %v, want the (empty) list", err)
	}
	if b, _ := json.Marshal(res); !strings.Contains(string(b), `"devices":[]`) {
		t.Fatalf("list-devices: got %s, want no devices", b)
	}
}

// TestOpenURLClientErrors: a URL the caller got wrong answers 400 naming
// the url argument, whether the device refuses it (a scheme off the list,
// not a URL at all) or the browser cannot load it (a host that does not
// resolve, a refused connection); none is an internal error, and the
// device still works after them.
func TestOpenURLClientErrors(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	const id = "chromium-cdp-641x480"
	r.open(t, id)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + l.Addr().String() + "/"
	l.Close()
	for _, tc := range []struct {
		url   string
		fresh bool
		says  string
	}{
		{"javascript:alert(1)", false, "javascript"},
		{"chrome://settings", false, "chrome"},
		{"chrome://crash", true, "chrome"},
		{"view-source:" + cdptest.Pages(t) + "/app.html", false, "view-source"},
		{"example.com", false, "absolute URL"},
		{"http://[::1", false, "bracket"},
		{"http://nonexistent.invalid/", false, "ERR_NAME_NOT_RESOLVED"},
		{"http://nonexistent.invalid/", true, "ERR_NAME_NOT_RESOLVED"},
		{closed, false, "ERR_CONNECTION_REFUSED"},
	} {
		_, err := r.invoke(t, "open-url", map[string]any{"device": id, "url": tc.url, "fresh": tc.fresh})
		var te *fault.Error
		if !errors.As(err, &te) || server.Status(te.Kind) != 400 || te.Field != "url" || !strings.Contains(te.Error(), tc.says) {
			t.Errorf("open-url %q (fresh %v): got %v, want a 400 on url saying %q", tc.url, tc.fresh, err, tc.says)
		}
	}
	r.open(t, id)
	if got := r.text(t, id, "out"); got != "not clicked" {
		t.Fatalf("the device after the refusals: #out %q, want %q", got, "not clicked")
	}
}
