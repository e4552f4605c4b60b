package cdp_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"image/png"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolserver/toolserver/device/cdp"
	"github.com/toolserver/toolserver/device/cdp/cdptest"
)

func TestMain(m *testing.M) { cdptest.Main(m) }

func ctxT(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// device boots id in the shared browser with the test page loaded; it is
// stopped when the test ends.
func device(t *testing.T, id string) *cdp.Device {
	t.Helper()
	d := cdptest.Device(t, id)
	if err := d.Launch(ctxT(t), cdptest.Pages(t)+"/app.html"); err != nil {
		t.Fatalf("launch: %v", err)
	}
	return d
}

func text(t *testing.T, d *cdp.Device, id string) string {
	t.Helper()
	raw, err := d.Eval(ctxT(t), fmt.Sprintf(`document.getElementById(%q).textContent`, id))
	if err != nil {
		t.Fatalf("read #%s: %v", id, err)
	}
	return strings.Trim(string(raw), `"`)
}

func TestParseID(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		id   string
		w, h int
		ok   bool
	}{
		{"chromium-cdp-1280x800", 1280, 800, true},
		{"chromium-cdp-100x4096", 100, 4096, true},
		{"chromium-cdp-99x800", 0, 0, false},
		{"chromium-cdp-1280x5000", 0, 0, false},
		{"chromium-cdp-1280", 0, 0, false},
		{"chromium-cdp-01280x800", 0, 0, false},
		{"emulator-5554", 0, 0, false},
		{"chromium-cdp-axb", 0, 0, false},
	} {
		w, h, err := cdp.ParseID(tc.id)
		if (err == nil) != tc.ok || w != tc.w || h != tc.h {
			t.Errorf("ParseID(%q) = %d, %d, %v; want %d, %d, ok=%v", tc.id, w, h, err, tc.w, tc.h, tc.ok)
		}
		if err != nil && !errors.Is(err, cdp.ErrBadID) {
			t.Errorf("ParseID(%q) error %v does not wrap ErrBadID", tc.id, err)
		}
	}
}

func TestScreenshotIsViewportSize(t *testing.T) {
	t.Parallel()
	d := device(t, "chromium-cdp-1280x800")
	shot, err := d.Screenshot(ctxT(t))
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(shot))
	if err != nil {
		t.Fatal(err)
	}
	if b := img.Bounds(); b.Dx() != 1280 || b.Dy() != 800 {
		t.Fatalf("got %dx%d, want 1280x800", b.Dx(), b.Dy())
	}
	// The button is drawn at 100..300 x 50..90: its pixels are not the
	// white page background.
	r, g, b, _ := img.At(110, 70).RGBA()
	if r == 0xffff && g == 0xffff && b == 0xffff {
		t.Fatalf("pixel inside the button is white: the page was not rendered")
	}
}

func TestTapChangesDOM(t *testing.T) {
	t.Parallel()
	d := device(t, "chromium-cdp-800x600")
	ctx := ctxT(t)
	el, err := d.Locate(ctx, cdp.Selector{Text: "go now"}, time.Second)
	if err != nil || el == nil {
		t.Fatalf("locate: %v, %v", el, err)
	}
	if err := d.TapElement(ctx, el, 1, 0); err != nil {
		t.Fatal(err)
	}
	if got := text(t, d, "out"); got != "clicked 1" {
		t.Fatalf("got %q, want %q", got, "clicked 1")
	}
	// Normalized tap at the button's centre: (200/800, 70/600).
	if err := d.TapNormalized(ctx, 200.0/800, 70.0/600, 0); err != nil {
		t.Fatal(err)
	}
	if got := text(t, d, "out"); got != "clicked 2" {
		t.Fatalf("got %q, want %q", got, "clicked 2")
	}
}

func TestFillAndKeys(t *testing.T) {
	t.Parallel()
	d := device(t, "chromium-cdp-801x600")
	ctx := ctxT(t)
	if _, err := d.Fill(ctx, cdp.Selector{ID: "USERNAME"}, "Ada", false, time.Second); err != nil {
		t.Fatal(err)
	}
	if got := text(t, d, "echo"); got != "hello Ada" {
		t.Fatalf("got %q, want %q", got, "hello Ada")
	}
	if err := d.TypeText(ctx, "Bo"); err != nil {
		t.Fatal(err)
	}
	if err := d.PressKey(ctx, "enter"); err != nil {
		t.Fatal(err)
	}
	if got := text(t, d, "keys"); got != "B,o,Enter," {
		t.Fatalf("got %q, want %q", got, "B,o,Enter,")
	}
	if got := text(t, d, "echo"); got != "hello AdaBo" {
		t.Fatalf("got %q, want %q", got, "hello AdaBo")
	}
	if err := d.PressKey(ctx, "no-such-key"); err == nil {
		t.Fatal("unknown key: got nil error")
	}
}

func TestDescribeFrames(t *testing.T) {
	t.Parallel()
	d := device(t, "chromium-cdp-1000x500")
	els, err := d.Describe(ctxT(t))
	if err != nil {
		t.Fatal(err)
	}
	var btn *cdp.Element
	for i := range els {
		if els[i].ID == "top" {
			btn = &els[i]
		}
	}
	if btn == nil {
		t.Fatalf("describe has no #top: %+v", els)
	}
	want := cdp.Frame{X: 0.1, Y: 0.1, Width: 0.2, Height: 0.08}
	if !near(btn.Frame, want) || btn.Role != "button" || btn.Text != "Go now" || !btn.Visible {
		t.Fatalf("got %+v, want frame %+v role button text %q visible", btn, want, "Go now")
	}
	for i := 1; i < len(els); i++ {
		if els[i].Frame.Y+0.01 < els[i-1].Frame.Y {
			t.Fatalf("not in reading order at %d: %+v before %+v", i, els[i-1], els[i])
		}
	}
}

func near(a, b cdp.Frame) bool {
	const eps = 0.002
	abs := func(v float64) float64 { return max(v, -v) }
	return abs(a.X-b.X) < eps && abs(a.Y-b.Y) < eps && abs(a.Width-b.Width) < eps && abs(a.Height-b.Height) < eps
}

func TestWaitAndIdle(t *testing.T) {
	t.Parallel()
	d := device(t, "chromium-cdp-802x600")
	ctx := ctxT(t)
	res, err := d.Wait(ctx, cdp.Condition{Selector: cdp.Selector{Text: "far below"}, State: "exists"}, time.Second)
	if err != nil || !res.OK {
		t.Fatalf("exists: %+v, %v", res, err)
	}
	res, err = d.Wait(ctx, cdp.Condition{Selector: cdp.Selector{Text: "far below"}, State: "visible"}, 100*time.Millisecond)
	if err != nil || res.OK {
		t.Fatalf("visible below the fold: got ok=%v err=%v, want ok=false", res.OK, err)
	}
	// Appear after a delay set by the page itself.
	if _, err := d.Eval(ctx, `setTimeout(() => { const e = document.createElement('p'); e.textContent = 'late arrival'; document.body.appendChild(e); }, 200), 1`); err != nil {
		t.Fatal(err)
	}
	res, err = d.Wait(ctx, cdp.Condition{Selector: cdp.Selector{Text: "late arrival"}, State: "visible"}, 5*time.Second)
	if err != nil || !res.OK {
		t.Fatalf("late element: %+v, %v", res, err)
	}
	idle, err := d.AwaitIdle(ctx, 50*time.Millisecond, 5*time.Second)
	if err != nil || !idle.Idle {
		t.Fatalf("idle: %+v, %v", idle, err)
	}
	if _, err := d.Eval(ctx, `setInterval(() => { document.body.dataset.tick = Date.now(); }, 10), 1`); err != nil {
		t.Fatal(err)
	}
	// The page is busy once the interval has ticked; until then it is
	// rightly idle.
	for deadline := time.Now().Add(10 * time.Second); ; {
		raw, err := d.Eval(ctx, `document.body.dataset.tick !== undefined`)
		if err != nil {
			t.Fatal(err)
		}
		if string(raw) == "true" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the interval never ticked")
		}
	}
	idle, err = d.AwaitIdle(ctx, 200*time.Millisecond, 400*time.Millisecond)
	if err != nil || idle.Idle {
		t.Fatalf("busy page: got %+v, %v; want idle false", idle, err)
	}
}

// TestWaitsPastTheFirstSecond: a wait that has lasted a second stops
// looking on every frame and looks on each DOM change or every 100 ms:
// it still sees an element the page inserts, one that only a style makes
// visible (no DOM change), and a page that goes idle.
func TestWaitsPastTheFirstSecond(t *testing.T) {
	t.Parallel()
	d := device(t, "chromium-cdp-827x600")
	ctx := ctxT(t)
	// "inserted" appears 1.3 s after this call by a DOM change;
	// "restyled" 2.6 s after it, by an animation that ends its hiding,
	// when nothing in the DOM has changed for 1.3 s. Each wait lasts
	// more than its first second.
	if _, err := d.Eval(ctx, `(() => {
		const s = document.createElement('style');
		s.textContent = '#restyled { visibility: hidden; animation: show 0s linear 2600ms forwards } @keyframes show { to { visibility: visible } }';
		document.head.appendChild(s);
		const r = document.createElement('p'); r.id = 'restyled'; r.textContent = 'restyled'; document.body.prepend(r);
		setTimeout(() => { const e = document.createElement('p'); e.textContent = 'inserted'; document.body.prepend(e); }, 1300);
		return 1;
	})()`); err != nil {
		t.Fatal(err)
	}
	for _, sel := range []cdp.Selector{{Text: "inserted"}, {ID: "restyled"}} {
		res, err := d.Wait(ctx, cdp.Condition{Selector: sel, State: "visible"}, 10*time.Second)
		if err != nil || !res.OK || res.Elapsed < 1000 {
			t.Fatalf("%+v: got %+v, %v; want it seen after more than a second", sel, res, err)
		}
	}
	// A page that changes every 10 ms for 1.5 s, then stops, goes idle.
	if _, err := d.Eval(ctx, `(() => {
		const end = performance.now() + 1500, change = () => { document.body.dataset.tick = performance.now(); };
		change();
		const tick = setInterval(() => { change(); if (performance.now() > end) clearInterval(tick); }, 10);
		return 1;
	})()`); err != nil {
		t.Fatal(err)
	}
	idle, err := d.AwaitIdle(ctx, 200*time.Millisecond, 10*time.Second)
	if err != nil || !idle.Idle || idle.Elapsed < 1000 {
		t.Fatalf("a page busy for 1.5 s: got %+v, %v; want idle after more than a second", idle, err)
	}
}

func TestScrollAndSwipe(t *testing.T) {
	t.Parallel()
	d := device(t, "chromium-cdp-803x600")
	ctx := ctxT(t)
	if err := d.Scroll(ctx, 0.5, 0.5, 0, 400); err != nil {
		t.Fatal(err)
	}
	res, err := d.Wait(ctx, cdp.Condition{Selector: cdp.Selector{ID: "top"}, State: "hidden"}, 5*time.Second)
	if err != nil || !res.OK {
		t.Fatalf("after wheel scroll the top button should be out of view: %+v, %v", res, err)
	}
	// Swipe down (finger moves down) brings the top back.
	if err := d.Swipe(ctx, 0.5, 0.2, 0.5, 0.9, 200*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	res, err = d.Wait(ctx, cdp.Condition{Selector: cdp.Selector{ID: "top"}, State: "visible"}, 5*time.Second)
	if err != nil || !res.OK {
		t.Fatalf("after swipe down the top button should be visible: %+v, %v", res, err)
	}
}

func TestIsolationBetweenDevices(t *testing.T) {
	t.Parallel()
	a := device(t, "chromium-cdp-804x600")
	b := device(t, "chromium-cdp-805x600")
	ctx := ctxT(t)
	if _, err := a.Eval(ctx, `localStorage.setItem('k', 'a'), document.cookie = 'c=a', 1`); err != nil {
		t.Fatal(err)
	}
	raw, err := b.Eval(ctx, `[localStorage.getItem('k'), document.cookie]`)
	if err != nil {
		t.Fatal(err)
	}
	if string(raw) != `[null,""]` {
		t.Fatalf("device b sees a's storage: %s", raw)
	}
}

// TestCrashRecovery: a call in flight when the browser dies answers
// ErrCrashed instead of hanging, and the next call boots a fresh browser;
// in a SharedBrowser pool every device of the process goes down with it.
// Each case kills a browser of its own pool, never the shared one.
func TestCrashRecovery(t *testing.T) {
	t.Parallel()
	for _, shared := range []bool{false, true} {
		t.Run(fmt.Sprintf("shared=%v", shared), func(t *testing.T) {
			t.Parallel()
			p := cdp.NewPool(cdp.Options{SharedBrowser: shared})
			t.Cleanup(func() { p.Close() })
			ctx := ctxT(t)
			const id, other = "chromium-cdp-806x600", "chromium-cdp-807x600"
			d, err := p.Device(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			o, err := p.Device(ctx, other)
			if err != nil {
				t.Fatal(err)
			}
			pid := d.PID()
			done := make(chan error, 1)
			go func() {
				_, err := d.Wait(ctx, cdp.Condition{Selector: cdp.Selector{Text: "never there"}, State: "visible"}, 30*time.Second)
				done <- err
			}()
			// Wait until the call holds the device: the wait is in the
			// page when a describe cannot get the device within a short
			// deadline.
			deadline := time.Now().Add(10 * time.Second)
			for {
				short, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
				_, err := d.Describe(short)
				cancel()
				if err != nil {
					break
				}
				if time.Now().After(deadline) {
					t.Fatal("the wait never started")
				}
			}
			if err := d.Kill(); err != nil {
				t.Fatal(err)
			}
			select {
			case err := <-done:
				if !errors.Is(err, cdp.ErrCrashed) {
					t.Fatalf("in-flight call: got %v, want ErrCrashed", err)
				}
			case <-ctx.Done():
				t.Fatal("the call in flight hung after the browser was killed")
			}
			// The other device shares the process only in a shared pool.
			if _, err := o.Screenshot(ctx); errors.Is(err, cdp.ErrCrashed) != shared {
				t.Fatalf("other device after the crash: got %v, want ErrCrashed: %v", err, shared)
			}
			fresh, err := p.Device(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			if fresh.PID() == pid || fresh.PID() == 0 {
				t.Fatalf("got pid %d after crash, want a new browser (old %d)", fresh.PID(), pid)
			}
			if _, err := fresh.Screenshot(ctx); err != nil {
				t.Fatalf("fresh device: %v", err)
			}
		})
	}
}

// TestPoolOptions: MaxDevices bounds the booted devices and DenyFileURLs
// refuses file: URLs before the page changes; one pool (one browser) has
// both, so the test boots one browser.
func TestPoolOptions(t *testing.T) {
	t.Parallel()
	p := cdp.NewPool(cdp.Options{MaxDevices: 1, DenyFileURLs: true})
	t.Cleanup(func() { p.Close() })
	ctx := ctxT(t)
	const id = "chromium-cdp-400x300"
	d, err := p.Device(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	t.Run("max devices", func(t *testing.T) {
		_, err := p.Device(ctx, "chromium-cdp-400x301")
		if !errors.Is(err, cdp.ErrTooManyDevices) || !strings.Contains(err.Error(), id) {
			t.Fatalf("got %v, want ErrTooManyDevices naming the booted device", err)
		}
	})
	t.Run("deny file URLs", func(t *testing.T) {
		for _, u := range []string{"file:///etc/passwd", " FILE:///etc/hostname"} {
			if err := d.Launch(ctx, u); !errors.Is(err, cdp.ErrFileURL) {
				t.Errorf("launch %q: got %v, want ErrFileURL", u, err)
			}
			if err := d.Navigate(ctx, u); !errors.Is(err, cdp.ErrFileURL) {
				t.Errorf("navigate %q: got %v, want ErrFileURL", u, err)
			}
		}
		if err := d.Navigate(ctx, cdptest.Pages(t)+"/app.html"); err != nil {
			t.Fatalf("an http page: %v", err)
		}
	})
	t.Run("hostile URLs", func(t *testing.T) {
		// The forms of a file: URL that Chromium still reads as one (it
		// drops C0 controls at the ends, tabs and newlines anywhere) or
		// shows through view-source: are refused, and the page never
		// shows the file.
		const secret = "hostile-url-secret-7f3a"
		path := filepath.Join(t.TempDir(), "secret.txt")
		if err := os.WriteFile(path, []byte(secret), 0o600); err != nil {
			t.Fatal(err)
		}
		file := "file://" + path
		for _, u := range []string{
			"\u0001" + file, "\x00" + file, " \x1f" + file + "\x1f",
			"fi\tle://" + path, "fi\nle://" + path, "fi\rle://" + path,
			"view-source:" + file, "view-source:fi\tle://" + path,
		} {
			for _, open := range []struct {
				name string
				fn   func(context.Context, string) error
			}{{"launch", d.Launch}, {"navigate", d.Navigate}} {
				err := open.fn(ctx, u)
				if !errors.Is(err, cdp.ErrFileURL) && !errors.Is(err, cdp.ErrBadURL) {
					t.Errorf("%s %q: got %v, want ErrFileURL or ErrBadURL", open.name, u, err)
				}
				els, err := d.Describe(ctx)
				if err != nil {
					t.Fatalf("describe after %s %q: %v", open.name, u, err)
				}
				if strings.Contains(fmt.Sprint(els), secret) {
					t.Fatalf("%s %q: the page shows the file: %v", open.name, u, els)
				}
			}
		}
		// A scheme off the list is refused before the browser sees it,
		// and the browser lives on (chrome://settings used to kill it).
		pid := d.PID()
		for _, u := range []string{"chrome://settings", "chrome://crash", "javascript:document.title", "devtools://devtools/bundled/inspector.html"} {
			if err := d.Navigate(ctx, u); !errors.Is(err, cdp.ErrBadURL) {
				t.Errorf("navigate %q: got %v, want ErrBadURL", u, err)
			}
		}
		if err := d.Navigate(ctx, cdptest.Pages(t)+"/app.html"); err != nil || d.PID() != pid {
			t.Fatalf("an http page after the refusals: %v (pid %d, was %d)", err, d.PID(), pid)
		}
	})
	t.Run("stop and close", func(t *testing.T) {
		// Stopping makes room; a stopped device is gone from the list,
		// and a call on it says it is not booted.
		if err := p.Stop(id); err != nil {
			t.Fatal(err)
		}
		if _, err := d.Screenshot(ctx); !errors.Is(err, cdp.ErrNotBooted) {
			t.Fatalf("call on a stopped device: got %v, want ErrNotBooted", err)
		}
		if err := p.Stop(id); !errors.Is(err, cdp.ErrNotBooted) {
			t.Fatalf("second stop: got %v, want ErrNotBooted", err)
		}
		if got := p.List(); len(got) != 0 {
			t.Fatalf("list after stop: got %v, want none", got)
		}
		p.Close()
		if _, err := p.Device(ctx, id); !errors.Is(err, cdp.ErrClosed) {
			t.Fatalf("after Close: got %v, want ErrClosed", err)
		}
	})
}

// TestMissingChromium: a pool without Chromium is still a pool; every
// device call answers why, naming CHROMIUM_PATH.
func TestMissingChromium(t *testing.T) {
	t.Parallel()
	p := cdp.NewPool(cdp.Options{ExecPath: "/nonexistent/chromium"})
	defer p.Close()
	if err := p.Err(); !errors.Is(err, cdp.ErrNoChromium) {
		t.Fatalf("Err: got %v, want ErrNoChromium", err)
	}
	_, err := p.Device(ctxT(t), "chromium-cdp-800x600")
	if !errors.Is(err, cdp.ErrNoChromium) || !strings.Contains(err.Error(), "CHROMIUM_PATH") || !strings.Contains(err.Error(), "/nonexistent/chromium") {
		t.Fatalf("Device: got %v, want ErrNoChromium naming the path and CHROMIUM_PATH", err)
	}
	if err := p.Stop("chromium-cdp-800x600"); !errors.Is(err, cdp.ErrNoChromium) {
		t.Fatalf("Stop: got %v, want ErrNoChromium", err)
	}
	if got := p.List(); len(got) != 0 {
		t.Fatalf("List: got %v, want none", got)
	}
}

// TestPageCrash: when the page's renderer crashes, the call in flight
// answers ErrPageCrashed at once (it used to wait out its deadline, and
// every later call too), the browser lives on, and the next call gets a
// fresh page. Page.crash crashes the renderer under a call; chrome://crash,
// which a caller could once open, crashes it just after the navigation
// that asked for it was aborted.
func TestPageCrash(t *testing.T) {
	t.Parallel()
	// Well under the 120 s a crashed page used to hold a call.
	const limit = 30 * time.Second
	t.Run("in flight", func(t *testing.T) {
		t.Parallel()
		d := device(t, "chromium-cdp-808x600")
		pid := d.PID()
		ctx, cancel := context.WithTimeout(t.Context(), limit)
		defer cancel()
		if err := d.CrashPage(ctx); !errors.Is(err, cdp.ErrPageCrashed) || !errors.Is(err, cdp.ErrCrashed) {
			t.Fatalf("the call that crashed the page: got %v, want ErrPageCrashed (an ErrCrashed)", err)
		}
		els, err := d.Describe(ctx)
		if err != nil {
			t.Fatalf("describe after the crash: %v", err)
		}
		if len(els) != 0 || d.URL() != "" {
			t.Fatalf("after the crash: got %d elements at %q, want a fresh empty page", len(els), d.URL())
		}
		if d.PID() != pid {
			t.Fatalf("browser pid %d after a page crash, want the same browser (%d)", d.PID(), pid)
		}
		if err := d.Navigate(ctx, cdptest.Pages(t)+"/app.html"); err != nil {
			t.Fatalf("navigate after the crash: %v", err)
		}
		if got := text(t, d, "out"); got != "not clicked" {
			t.Fatalf("the page after the crash: #out %q, want %q", got, "not clicked")
		}
	})
	t.Run("chrome://crash", func(t *testing.T) {
		t.Parallel()
		d := device(t, "chromium-cdp-809x600")
		ctx, cancel := context.WithTimeout(t.Context(), limit)
		defer cancel()
		_ = d.NavigateUnchecked(ctx, "chrome://crash") // aborted; the crash follows
		// Until the crash lands the old page answers; a call the crash
		// lands under answers ErrPageCrashed; then calls get a fresh page.
		for {
			els, err := d.Describe(ctx)
			if errors.Is(err, cdp.ErrPageCrashed) {
				continue
			}
			if err != nil {
				t.Fatalf("describe after chrome://crash: %v", err)
			}
			if d.URL() == "" {
				if len(els) != 0 {
					t.Fatalf("the fresh page has %d elements, want none", len(els))
				}
				break
			}
		}
		if err := d.Navigate(ctx, cdptest.Pages(t)+"/app.html"); err != nil {
			t.Fatalf("navigate after the crash: %v", err)
		}
	})
}

// TestAllowHosts: with AllowHosts the devices open pages of the listed
// hosts only: a URL naming another host is refused before the page
// changes, a redirect to one is refused naming it, and the browser fails
// every other connection of a page (a fetch) without it reaching the
// server. 127.0.0.1 and localhost are the two hosts of one server here.
func TestAllowHosts(t *testing.T) {
	t.Parallel()
	var strayMu sync.Mutex
	var stray []string // requests that arrived for a host off the list
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasPrefix(r.Host, "127.0.0.1:") {
			strayMu.Lock()
			stray = append(stray, r.Host+r.URL.String())
			strayMu.Unlock()
		}
		switch r.URL.Path {
		case "/redirect":
			http.Redirect(w, r, r.URL.Query().Get("to"), http.StatusFound)
		case "/data":
			w.Header().Set("Access-Control-Allow-Origin", "*")
			fmt.Fprint(w, "reached")
		default:
			fmt.Fprint(w, `<!doctype html><p id="where">allowed page</p>`)
		}
	}))
	t.Cleanup(srv.Close)
	port := srv.URL[strings.LastIndexByte(srv.URL, ':')+1:]
	allowed, other := "http://127.0.0.1:"+port, "http://localhost:"+port

	hosts, err := cdp.ParseHostList([]string{"127.0.0.1"})
	if err != nil {
		t.Fatal(err)
	}
	p := cdp.NewPool(cdp.Options{AllowHosts: hosts, DenyFileURLs: true})
	t.Cleanup(func() { p.Close() })
	ctx := ctxT(t)
	d, err := p.Device(ctx, "chromium-cdp-402x300")
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Launch(ctx, allowed+"/page"); err != nil {
		t.Fatalf("a listed host: %v", err)
	}
	for _, u := range []string{other + "/page", "http://169.254.169.254/latest/meta-data/", "http://0xa9fea9fe/"} {
		err := d.Navigate(ctx, u)
		if !errors.Is(err, cdp.ErrHostNotAllowed) {
			t.Errorf("navigate %s: got %v, want ErrHostNotAllowed", u, err)
		}
	}
	if got := d.URL(); got != allowed+"/page" {
		t.Fatalf("after the refusals the device is at %q, want %q", got, allowed+"/page")
	}
	err = d.Navigate(ctx, allowed+"/redirect?to="+other+"/page")
	if !errors.Is(err, cdp.ErrHostNotAllowed) || !strings.Contains(err.Error(), "localhost") {
		t.Fatalf("a redirect to another host: got %v, want ErrHostNotAllowed naming localhost", err)
	}
	// Chromium itself refuses a redirect from a web page to a file.
	secret := filepath.Join(t.TempDir(), "secret.txt")
	if err := os.WriteFile(secret, []byte("redirect-secret-91c2"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := d.Navigate(ctx, allowed+"/redirect?to=file://"+secret); !errors.Is(err, cdp.ErrPageLoad) {
		t.Fatalf("a redirect to a file: got %v, want ErrPageLoad", err)
	}
	if els, err := d.Describe(ctx); err != nil || strings.Contains(fmt.Sprint(els), "redirect-secret") {
		t.Fatalf("after a redirect to a file the page shows %v (%v)", els, err)
	}
	if err := d.Navigate(ctx, allowed+"/page"); err != nil {
		t.Fatal(err)
	}
	fetch := func(u string) string {
		t.Helper()
		raw, err := d.Eval(ctx, fmt.Sprintf(`fetch(%q).then(r => r.text(), e => "failed")`, u))
		if err != nil {
			t.Fatalf("fetch %s: %v", u, err)
		}
		return strings.Trim(string(raw), `"`)
	}
	if got := fetch(allowed + "/data"); got != "reached" {
		t.Fatalf("a fetch from the listed host: got %q, want %q", got, "reached")
	}
	if got := fetch(other + "/data"); got != "failed" {
		t.Fatalf("a fetch from another host: got %q, want %q", got, "failed")
	}
	strayMu.Lock()
	defer strayMu.Unlock()
	if len(stray) > 0 {
		t.Fatalf("requests for a host off the list reached the server: %v", stray)
	}
}

// lockedBuffer is a log a pool's browsers write to from their goroutines.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// TestSandboxFallbackSaysWhy: a real Chromium whose sandbox cannot start
// (as root, Chromium refuses it) boots without it, and the one notice
// says why rather than ending at a colon. Where the sandbox works (not
// root, user namespaces allowed), the browser boots with it and says
// nothing.
func TestSandboxFallbackSaysWhy(t *testing.T) {
	t.Parallel()
	var log lockedBuffer
	p := cdp.NewPool(cdp.Options{Log: &log, MaxDevices: 1, NoSparePage: true})
	t.Cleanup(func() { p.Close() })
	p.KeepSandbox()
	if _, err := p.Device(ctxT(t), "chromium-cdp-808x600"); err != nil {
		t.Fatalf("boot: %v (log %q)", err, log.String())
	}
	got := log.String()
	if os.Geteuid() != 0 {
		if got != "" && !strings.Contains(got, "); running it with --no-sandbox") {
			t.Errorf("log: got %q, want nothing, or the notice with its reason", got)
		}
		return
	}
	want := "toolserver: Chromium could not start with its sandbox (running as root); running it with --no-sandbox\n"
	if got != want {
		t.Errorf("log: got %q, want %q", got, want)
	}
}
