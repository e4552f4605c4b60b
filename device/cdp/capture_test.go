package cdp_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/toolserver/toolserver/device/cdp"
	"github.com/toolserver/toolserver/device/cdp/cdptest"
)

// open boots id in the shared browser at page (a file of testdata/pages,
// with its query); the device is stopped when the test ends.
func open(t *testing.T, id, page string) *cdp.Device {
	t.Helper()
	d := cdptest.Device(t, id)
	if err := d.Launch(ctxT(t), cdptest.Pages(t)+"/"+page); err != nil {
		t.Fatalf("launch %s: %v", page, err)
	}
	return d
}

func decode(t *testing.T, b []byte) image.Image {
	t.Helper()
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("decode capture: %v", err)
	}
	return img
}

// rgb is the colour of the pixel at (x, y), 8 bits a channel. The
// opaque captures Chromium encodes decode to *image.RGBA, read straight
// from Pix: TestCaptureClip compares a few million pixels, and At with
// a colour conversion costs several times as much under -race.
func rgb(img image.Image, x, y int) color.RGBA {
	if m, ok := img.(*image.RGBA); ok {
		p := m.Pix[m.PixOffset(x, y):]
		return color.RGBA{R: p[0], G: p[1], B: p[2]}
	}
	c := color.RGBAModel.Convert(img.At(x, y)).(color.RGBA)
	c.A = 0
	return c
}

func eval(t *testing.T, d *cdp.Device, expr string) string {
	t.Helper()
	raw, err := d.Eval(ctxT(t), expr)
	if err != nil {
		t.Fatalf("eval %s: %v", expr, err)
	}
	return string(raw)
}

// dressLeft is an expression that lists what a capture may have left in
// the page: its style sheets and masks, and the style attributes of the
// elements of dress.html it may hide.
const dressLeft = `[...document.querySelectorAll("#__toolserver_settle, #__toolserver_style, toolserver-mask")].map((e) => e.id || e.tagName).concat(
	[...document.querySelectorAll("body *")].filter((e) => e.hasAttribute("style")).map((e) => e.id + "=" + e.getAttribute("style")))`

// TestCaptureLeavesAnimationsRunning: a capture settles the page and then
// undoes the settling, so a finite fade-in that a click starts after a
// snapshot becomes visible (the settle style used to stay and keep it
// paused at opacity 0), and the infinite animation the capture cancelled
// runs again.
func TestCaptureLeavesAnimationsRunning(t *testing.T) {
	t.Parallel()
	d := open(t, "chromium-cdp-820x600", "fade.html")
	ctx := ctxT(t)
	shot, err := d.StableScreenshot(ctx, 5)
	if err != nil || !shot.Stable {
		t.Fatalf("capture: %+v, %v", shot.Stable, err)
	}
	if got := eval(t, d, `document.querySelectorAll("#__toolserver_settle").length`); got != "0" {
		t.Fatalf("settle style sheets left in the page: got %s, want 0", got)
	}
	if got := eval(t, d, `document.getElementById("spin").getAnimations().map((a) => a.playState).join()`); got != `"running"` {
		t.Fatalf("the spinner after the capture: got %s, want running", got)
	}
	el, err := d.Locate(ctx, cdp.Selector{ID: "reveal"}, time.Second)
	if err != nil || el == nil {
		t.Fatalf("locate reveal: %v, %v", el, err)
	}
	if err := d.TapElement(ctx, el, 1, 0); err != nil {
		t.Fatal(err)
	}
	res, err := d.Wait(ctx, cdp.Condition{Selector: cdp.Selector{Text: "Faded in"}, State: "visible"}, 3*time.Second)
	if err != nil || !res.OK {
		t.Fatalf("the fade-in after a capture: got ok=%v (%v), want visible", res.OK, err)
	}
	// It runs to its end as the page wants it, not only past opacity 0.
	for deadline := time.Now().Add(5 * time.Second); eval(t, d, `getComputedStyle(document.getElementById("late")).opacity`) != `"1"`; {
		if time.Now().After(deadline) {
			t.Fatal("the fade-in never reached opacity 1")
		}
	}
}

// TestCaptureDress: hide, style and mask show in the capture and are gone
// from the page after it, the page's own style attributes as they were;
// dressing and undressing the page are not changes of the page that an
// await idle waits out.
func TestCaptureDress(t *testing.T) {
	t.Parallel()
	d := open(t, "chromium-cdp-821x600", "dress.html")
	ctx := ctxT(t)
	before := eval(t, d, dressLeft)
	const still = 300 * time.Millisecond
	if res, err := d.AwaitIdle(ctx, still, 10*time.Second); err != nil || !res.Idle {
		t.Fatalf("the page never went idle: %+v, %v", res, err)
	}
	plain, err := d.StableScreenshot(ctx, 5)
	if err != nil {
		t.Fatal(err)
	}
	shot, err := d.Capture(ctx, cdp.CaptureOptions{
		MaxCaptures: 5,
		Hide:        []cdp.Selector{{ID: "secret"}, {ID: "plain"}},
		Style:       "#banner { background: rgb(0, 0, 255) !important; }",
		// By text: each of the two tickets, not the card that holds
		// both texts.
		Mask:      []cdp.Selector{{Text: "ticket"}},
		MaskColor: "rgb(0, 255, 0)",
	})
	if err != nil || !shot.Stable {
		t.Fatalf("capture: stable %v, %v", shot.Stable, err)
	}
	p, img := decode(t, plain.PNG), decode(t, shot.PNG)
	white, black := color.RGBA{255, 255, 255, 0}, color.RGBA{}
	red, blue, green := color.RGBA{200, 0, 0, 0}, color.RGBA{0, 0, 255, 0}, color.RGBA{0, 255, 0, 0}
	grey := color.RGBA{230, 230, 230, 0}
	for _, c := range []struct {
		what       string
		x, y       int
		plain, got color.RGBA
	}{
		{"banner (style)", 390, 30, red, blue},
		{"secret (hidden)", 25, 95, black, white},
		{"plain (hidden)", 235, 95, black, white},
		{"ticket 1 (masked)", 135, 167, black, green},
		{"ticket 2 (masked)", 315, 217, black, green},
		{"card around the tickets", 370, 230, grey, grey},
	} {
		if got := rgb(p, c.x, c.y); got != c.plain {
			t.Errorf("%s at (%d, %d) without options: got %v, want %v", c.what, c.x, c.y, got, c.plain)
		}
		if got := rgb(img, c.x, c.y); got != c.got {
			t.Errorf("%s at (%d, %d): got %v, want %v", c.what, c.x, c.y, got, c.got)
		}
	}
	// Still idle at once: no mutation of the page's own since.
	if res, err := d.AwaitIdle(ctx, still, 0); err != nil || !res.Idle {
		t.Fatalf("after the dressed capture the page is not idle: %+v, %v", res, err)
	}
	if after := eval(t, d, dressLeft); after != before {
		t.Fatalf("the page after the capture: got %s, want %s as before", after, before)
	}
	again, err := d.StableScreenshot(ctx, 5)
	if err != nil || !bytes.Equal(again.PNG, plain.PNG) {
		t.Fatalf("a plain capture after the dressed one differs from the one before (%v)", err)
	}
}

// TestCaptureMaskClock: a live clock, masked, gives identical captures a
// minute apart; unmasked, the captures differ. The page reads its time
// from the test's server, which moves it by a minute.
func TestCaptureMaskClock(t *testing.T) {
	t.Parallel()
	clock := cdptest.NewClock(t, time.Date(2025, 1, 2, 12, 0, 0, 0, time.UTC))
	d := open(t, "chromium-cdp-822x600", clock.Page)
	ctx := ctxT(t)
	shows := func(want string) {
		t.Helper()
		expr := `document.getElementById("clock").textContent`
		for deadline := time.Now().Add(10 * time.Second); eval(t, d, expr) != `"`+want+`"`; {
			if time.Now().After(deadline) {
				t.Fatalf("the clock never showed %s", want)
			}
		}
	}
	masked := cdp.CaptureOptions{MaxCaptures: 5, Mask: []cdp.Selector{{ID: "clock"}}}
	take := func(opts cdp.CaptureOptions) []byte {
		t.Helper()
		shot, err := d.Capture(ctx, opts)
		if err != nil || !shot.Stable {
			t.Fatalf("capture: stable %v, %v", shot.Stable, err)
		}
		return shot.PNG
	}
	shows("12:00:00")
	plain1, mask1 := take(cdp.CaptureOptions{MaxCaptures: 5}), take(masked)
	shows(clock.Advance(time.Minute))
	plain2, mask2 := take(cdp.CaptureOptions{MaxCaptures: 5}), take(masked)
	if bytes.Equal(plain1, plain2) {
		t.Fatal("unmasked, the captures a minute apart are identical: the clock did not show in them")
	}
	if !bytes.Equal(mask1, mask2) {
		t.Fatal("masked, the captures a minute apart differ")
	}
	// The default colour, magenta, covers the clock; the label is left.
	img := decode(t, mask1)
	if got, want := rgb(img, 30, 40), (color.RGBA{255, 0, 255, 0}); got != want {
		t.Fatalf("the masked clock: got %v, want %v", got, want)
	}
	if rgb(img, 30, 112) == rgb(decode(t, plain1), 30, 112) && rgb(img, 30, 112) == (color.RGBA{255, 0, 255, 0}) {
		t.Fatal("the label under the clock is masked too")
	}
}

// TestCaptureFullPage: a full page three viewports tall is captured whole,
// its bands where the page has them and its masks in page coordinates; a
// viewport capture after it is the viewport again, identical to one before.
func TestCaptureFullPage(t *testing.T) {
	t.Parallel()
	d := open(t, "chromium-cdp-640x360", "tall.html")
	ctx := ctxT(t)
	before, err := d.StableScreenshot(ctx, 5)
	if err != nil {
		t.Fatal(err)
	}
	shot, err := d.Capture(ctx, cdp.CaptureOptions{MaxCaptures: 5, FullPage: true, Mask: []cdp.Selector{{ID: "foot"}}})
	if err != nil || !shot.Stable {
		t.Fatalf("full page: stable %v, %v", shot.Stable, err)
	}
	img := decode(t, shot.PNG)
	if b := img.Bounds(); b.Dx() != 640 || b.Dy() != 3*360 {
		t.Fatalf("full page: got %dx%d, want 640x1080", b.Dx(), b.Dy())
	}
	for _, c := range []struct {
		x, y int
		want color.RGBA
	}{
		{320, 10, color.RGBA{255, 0, 0, 0}},
		{320, 370, color.RGBA{0, 255, 0, 0}},
		{320, 1070, color.RGBA{0, 0, 255, 0}},
		{12, 1002, color.RGBA{255, 0, 255, 0}}, // the masked box
	} {
		if got := rgb(img, c.x, c.y); got != c.want {
			t.Errorf("full page at (%d, %d): got %v, want %v", c.x, c.y, got, c.want)
		}
	}
	after, err := d.StableScreenshot(ctx, 5)
	if err != nil {
		t.Fatal(err)
	}
	if b := decode(t, after.PNG).Bounds(); b.Dx() != 640 || b.Dy() != 360 {
		t.Fatalf("viewport after the full page: got %dx%d, want 640x360", b.Dx(), b.Dy())
	}
	if !bytes.Equal(after.PNG, before.PNG) {
		t.Fatal("the viewport capture after the full page differs from the one before it")
	}
	if got := eval(t, d, `[innerWidth, innerHeight, scrollY]`); got != "[640,360,0]" {
		t.Fatalf("viewport after the full page: got %s, want [640,360,0]", got)
	}
}

// TestCaptureClip: a clip capture is the region of a viewport capture,
// pixel for pixel, scrolled or not.
func TestCaptureClip(t *testing.T) {
	t.Parallel()
	d := open(t, "chromium-cdp-823x600", "app.html")
	ctx := ctxT(t)
	for _, scroll := range []int{0, 1337} {
		if _, err := d.Eval(ctx, fmt.Sprintf(`scrollTo(0, %d), 1`, scroll)); err != nil {
			t.Fatal(err)
		}
		full, err := d.StableScreenshot(ctx, 5)
		if err != nil {
			t.Fatal(err)
		}
		whole := decode(t, full.PNG)
		for _, r := range []cdp.Rect{{X: 95, Y: 45, Width: 211, Height: 51}, {X: 0, Y: 0, Width: 823, Height: 600}, {X: 822, Y: 599, Width: 1, Height: 1}, {X: 3, Y: 101, Width: 307, Height: 433}} {
			shot, err := d.Capture(ctx, cdp.CaptureOptions{MaxCaptures: 5, Clip: &r})
			if err != nil || !shot.Stable {
				t.Fatalf("clip %+v: stable %v, %v", r, shot.Stable, err)
			}
			img := decode(t, shot.PNG)
			if b := img.Bounds(); b.Dx() != r.Width || b.Dy() != r.Height {
				t.Fatalf("clip %+v at scroll %d: got %dx%d", r, scroll, b.Dx(), b.Dy())
			}
			for y := range r.Height {
				for x := range r.Width {
					if got, want := rgb(img, x, y), rgb(whole, r.X+x, r.Y+y); got != want {
						t.Fatalf("clip %+v at scroll %d: pixel (%d, %d) is %v, want %v as in the viewport capture", r, scroll, x, y, got, want)
					}
				}
			}
		}
	}
}

// TestCaptureAccept counts the captures of the fast path: a first capture
// Accept takes is the shot; one it refuses is followed by two that agree.
func TestCaptureAccept(t *testing.T) {
	t.Parallel()
	d := open(t, "chromium-cdp-824x600", "app.html")
	ctx := ctxT(t)
	for _, c := range []struct {
		accept   bool
		captures int
	}{{true, 1}, {false, 3}} {
		var shown [][]byte
		shot, err := d.Capture(ctx, cdp.CaptureOptions{MaxCaptures: 5, Accept: func(png []byte, _ []cdp.Rect) bool {
			shown = append(shown, png)
			return c.accept
		}})
		if err != nil {
			t.Fatal(err)
		}
		if len(shown) != 1 || shot.Captures != c.captures || !shot.Stable || shot.Accepted != c.accept {
			t.Errorf("accept %v: got %d shown, %d captures, stable %v, accepted %v; want 1 shown, %d captures, stable, accepted %v",
				c.accept, len(shown), shot.Captures, shot.Stable, shot.Accepted, c.captures, c.accept)
		}
		if c.accept && !bytes.Equal(shown[0], shot.PNG) {
			t.Errorf("accept: the shot is not the capture Accept took")
		}
		decode(t, shown[0])
	}
	shot, err := d.Capture(ctx, cdp.CaptureOptions{MaxCaptures: 5})
	if err != nil || shot.Captures != 2 || !shot.Stable || shot.Accepted {
		t.Fatalf("without Accept: got %d captures, stable %v, accepted %v (%v); want 2, stable, not accepted", shot.Captures, shot.Stable, shot.Accepted, err)
	}
}

// TestCaptureRefusedOptions: a selector the matcher refuses, a colour CSS
// does not know and a clip off the viewport fail before the page changes,
// naming what was wrong.
func TestCaptureRefusedOptions(t *testing.T) {
	t.Parallel()
	d := open(t, "chromium-cdp-825x600", "dress.html")
	ctx := ctxT(t)
	before := eval(t, d, dressLeft)
	for _, c := range []struct {
		opts   cdp.CaptureOptions
		option string
		index  int
	}{
		{cdp.CaptureOptions{Hide: []cdp.Selector{{ID: "plain"}}, Mask: []cdp.Selector{{ID: "secret"}, {Matches: "(unclosed"}}}, "mask", 1},
		{cdp.CaptureOptions{Hide: []cdp.Selector{{Matches: "[z-a]"}}}, "hide", 0},
		{cdp.CaptureOptions{Mask: []cdp.Selector{{ID: "secret"}}, MaskColor: "not-a-colour"}, "maskColor", -1},
	} {
		_, err := d.Capture(ctx, c.opts)
		var oe *cdp.CaptureOptionError
		if !errors.As(err, &oe) || oe.Option != c.option || oe.Index != c.index || oe.Reason == "" {
			t.Errorf("%+v: got %v, want a CaptureOptionError of %s[%d]", c.opts, err, c.option, c.index)
		}
		if after := eval(t, d, dressLeft); after != before {
			t.Errorf("%+v: the page after the refusal: got %s, want %s", c.opts, after, before)
		}
	}
	// A page too big to capture whole: refused, and left as it was.
	if _, err := d.Eval(ctx, `document.body.style.height = "90000px", 1`); err != nil {
		t.Fatal(err)
	}
	before = eval(t, d, dressLeft)
	if _, err := d.Capture(ctx, cdp.CaptureOptions{FullPage: true, Hide: []cdp.Selector{{ID: "plain"}}}); err == nil || !strings.Contains(err.Error(), "megapixels") {
		t.Errorf("a full page of 825x90000: got %v, want an error naming the megapixels", err)
	}
	if after := eval(t, d, dressLeft); after != before {
		t.Errorf("the page after the refused full page: got %s, want %s", after, before)
	}
	for _, opts := range []cdp.CaptureOptions{
		{Clip: &cdp.Rect{X: 800, Y: 0, Width: 26, Height: 10}},
		{Clip: &cdp.Rect{X: 0, Y: -1, Width: 10, Height: 10}},
		{Clip: &cdp.Rect{Width: 0, Height: 10}},
		{Clip: &cdp.Rect{Width: 10, Height: 10}, FullPage: true},
	} {
		if _, err := d.Capture(ctx, opts); err == nil || !strings.Contains(err.Error(), "clip") {
			t.Errorf("clip %+v full page %v: got %v, want an error naming the clip", *opts.Clip, opts.FullPage, err)
		}
	}
}

// TestCaptureCutShortUndoes: a capture its caller abandons between two
// captures still leaves the page as it found it.
func TestCaptureCutShortUndoes(t *testing.T) {
	t.Parallel()
	d := open(t, "chromium-cdp-826x600", "dress.html")
	before := eval(t, d, dressLeft)
	ctx, cancel := context.WithCancel(ctxT(t))
	defer cancel()
	_, err := d.Capture(ctx, cdp.CaptureOptions{
		Hide: []cdp.Selector{{ID: "secret"}}, Mask: []cdp.Selector{{ID: "plain"}}, Style: "body { background: #000 }",
		// The caller leaves while the page is dressed.
		Accept: func([]byte, []cdp.Rect) bool { cancel(); return false },
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v, want context.Canceled", err)
	}
	if after := eval(t, d, dressLeft); after != before {
		t.Fatalf("the page after the abandoned capture: got %s, want %s", after, before)
	}
}

// TestCaptureIgnore: ignore finds the boxes of its elements in the shot's
// pixels (none when off-screen, moved into a clip and cut to it, in page
// pixels on a full page) and paints nothing: the pixels are the page's.
func TestCaptureIgnore(t *testing.T) {
	t.Parallel()
	d := open(t, "chromium-cdp-640x361", "tall.html")
	ctx := ctxT(t)
	foot := []cdp.Selector{{ID: "foot"}}
	take := func(opts cdp.CaptureOptions) cdp.StableShot {
		t.Helper()
		opts.MaxCaptures = 5
		shot, err := d.Capture(ctx, opts)
		if err != nil || !shot.Stable {
			t.Fatalf("capture %+v: stable %v, %v", opts, shot.Stable, err)
		}
		return shot
	}
	if got := take(cdp.CaptureOptions{Ignore: foot}).Ignored; len(got) != 0 {
		t.Errorf("the foot is below the viewport: got ignored %v, want none", got)
	}
	if _, err := d.Eval(ctx, `scrollTo(0, 719), 1`); err != nil {
		t.Fatal(err)
	}
	plain, ignored := take(cdp.CaptureOptions{}), take(cdp.CaptureOptions{Ignore: foot})
	if want := []cdp.Rect{{X: 10, Y: 281, Width: 50, Height: 20}}; !slices.Equal(ignored.Ignored, want) {
		t.Errorf("viewport: got ignored %v, want %v", ignored.Ignored, want)
	}
	if !bytes.Equal(plain.PNG, ignored.PNG) {
		t.Error("a capture with ignore differs from one without: ignore painted something")
	}
	clip := take(cdp.CaptureOptions{Ignore: foot, Clip: &cdp.Rect{X: 0, Y: 271, Width: 40, Height: 40}})
	if want := []cdp.Rect{{X: 10, Y: 10, Width: 30, Height: 20}}; !slices.Equal(clip.Ignored, want) {
		t.Errorf("clip: got ignored %v, want %v", clip.Ignored, want)
	}
	full := take(cdp.CaptureOptions{Ignore: foot, FullPage: true})
	if want := []cdp.Rect{{X: 10, Y: 1000, Width: 50, Height: 20}}; !slices.Equal(full.Ignored, want) {
		t.Errorf("full page: got ignored %v, want %v", full.Ignored, want)
	}
	if got := rgb(decode(t, full.PNG), 12, 1002); got != (color.RGBA{0, 0, 0, 0}) {
		t.Errorf("the ignored foot on the full page: got %v, want its own black", got)
	}
}
