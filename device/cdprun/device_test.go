package cdprun

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/toolserver/toolserver/device/cdp"
	"github.com/toolserver/toolserver/device/cdp/cdptest"
	"github.com/toolserver/toolserver/fault"
	"github.com/toolserver/toolserver/flow"
	flowrun "github.com/toolserver/toolserver/flow/run"
	"github.com/toolserver/toolserver/snapshot"
)

func TestMain(m *testing.M) { cdptest.Main(m) }

// launched boots id with page of testdata/pages loaded, as a flowrun.Device.
func launched(t *testing.T, id, page string) (Device, context.Context) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	t.Cleanup(cancel)
	d := Device{D: cdptest.Device(t, id)}
	if err := d.Launch(ctx, cdptest.Pages(t)+"/"+page); err != nil {
		t.Fatalf("launch %s: %v", page, err)
	}
	return d, ctx
}

// TestCaptureClipIsCrop: a clip capture of the rectangle snapshot.CropRect
// gives for an element's frame has the very pixels that capturing the
// viewport, decoding it and cropping it to the frame gives, for boxes of
// odd sizes at fractional positions, one cut by the viewport's edge and
// one taller than the viewport (the page scrolled to it).
func TestCaptureClipIsCrop(t *testing.T) {
	t.Parallel()
	d, ctx := launched(t, "chromium-cdp-641x401", "crop.html")
	w, h := d.Size()
	for _, id := range []string{"odd", "frac", "left", "tall", "word"} {
		el, err := d.Locate(ctx, &flow.Selector{ID: id}, time.Second)
		if err != nil || el == nil {
			t.Fatalf("locate %s: %v, %v", id, el, err)
		}
		frame := snapshot.Frame{X: el.X, Y: el.Y, Width: el.Width, Height: el.Height}
		// Today's crop: the whole viewport, decoded, cropped, encoded.
		whole, err := d.Capture(ctx, flowrun.CaptureOptions{MaxCaptures: 5})
		if err != nil || !whole.Stable {
			t.Fatalf("%s: viewport capture: stable %v, %v", id, whole.Stable, err)
		}
		img, err := snapshot.Decode("viewport", whole.PNG)
		if err != nil {
			t.Fatal(err)
		}
		crop, err := snapshot.Crop(img, frame)
		if err != nil {
			t.Fatal(err)
		}
		enc, err := snapshot.EncodePNG(crop)
		if err != nil {
			t.Fatal(err)
		}
		want, err := snapshot.Decode("crop", enc)
		if err != nil {
			t.Fatal(err)
		}
		r, err := snapshot.CropRect(frame, w, h)
		if err != nil {
			t.Fatal(err)
		}
		shot, err := d.Capture(ctx, flowrun.CaptureOptions{MaxCaptures: 5, Clip: &flowrun.Rect{X: r.Min.X, Y: r.Min.Y, Width: r.Dx(), Height: r.Dy()}})
		if err != nil || !shot.Stable {
			t.Fatalf("%s: clip %v: stable %v, %v", id, r, shot.Stable, err)
		}
		got, err := snapshot.Decode("clip", shot.PNG)
		if err != nil {
			t.Fatal(err)
		}
		if got.Width != want.Width || got.Height != want.Height {
			t.Fatalf("%s (frame %+v): clip is %dx%d, want %dx%d as cropped", id, frame, got.Width, got.Height, want.Width, want.Height)
		}
		if !bytes.Equal(got.Pix, want.Pix) {
			res, _ := snapshot.Compare(want, got, snapshot.DefaultOptions())
			t.Fatalf("%s (frame %+v, clip %v): %d pixels differ from the crop", id, frame, r, res.MismatchPixels)
		}
		edge := r.Min.X == 0 || r.Min.Y == 0 || r.Max.X == w || r.Max.Y == h
		if (id == "left" || id == "tall") != edge {
			t.Errorf("%s: clip %v at the viewport's edge: %v, want %v", id, r, edge, !edge)
		}
	}
}

// TestCaptureMapsOptions: every option of flowrun.CaptureOptions reaches the
// device: the adapter's capture is the device's own capture with the same
// options, and differs from a plain one.
func TestCaptureMapsOptions(t *testing.T) {
	t.Parallel()
	d, ctx := launched(t, "chromium-cdp-642x402", "dress.html")
	plain, err := d.Capture(ctx, flowrun.CaptureOptions{MaxCaptures: 5})
	if err != nil {
		t.Fatal(err)
	}
	var shown int
	got, err := d.Capture(ctx, flowrun.CaptureOptions{
		MaxCaptures: 5,
		Mask:        []*flow.Selector{{Text: "ticket"}},
		MaskColor:   "#00FF00",
		Hide:        []*flow.Selector{{ID: "secret"}, {Text: "Plain", Loose: true}},
		Style:       "#banner { background: #00f !important }",
		FullPage:    true,
		Accept:      func([]byte, []flowrun.Rect) bool { shown++; return false },
	})
	if err != nil {
		t.Fatal(err)
	}
	want, err := d.D.Capture(ctx, cdp.CaptureOptions{
		MaxCaptures: 5,
		Mask:        []cdp.Selector{{Text: "ticket"}},
		MaskColor:   "#00FF00",
		Hide:        []cdp.Selector{{ID: "secret"}, {Text: "Plain", Loose: true}},
		Style:       "#banner { background: #00f !important }",
		FullPage:    true,
	})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got.PNG, want.PNG) || bytes.Equal(got.PNG, plain.PNG) {
		t.Fatalf("the adapter's capture: same as the device's %v (want true), same as a plain one %v (want false)", bytes.Equal(got.PNG, want.PNG), bytes.Equal(got.PNG, plain.PNG))
	}
	if shown != 1 || got.Captures != 3 || got.Accepted || !got.Stable {
		t.Fatalf("accept refusing: got %d shown, %d captures, accepted %v, stable %v; want 1, 3, false, true", shown, got.Captures, got.Accepted, got.Stable)
	}
	taken, err := d.Capture(ctx, flowrun.CaptureOptions{MaxCaptures: 5, Clip: &flowrun.Rect{X: 1, Y: 2, Width: 30, Height: 20}, Accept: func([]byte, []flowrun.Rect) bool { return true }})
	if err != nil || !taken.Accepted || !taken.Stable || taken.Captures != 1 {
		t.Fatalf("accept taking: got %+v, %v", flowrun.Shot{Stable: taken.Stable, Accepted: taken.Accepted, Captures: taken.Captures}, err)
	}
	if img, err := snapshot.Decode("clip", taken.PNG); err != nil || img.Width != 30 || img.Height != 20 {
		t.Fatalf("clip 30x20: got %v, %v", img, err)
	}
}

// TestCaptureNamesBadSelector: a mask or hide selector the page cannot
// match with, or a colour it does not know, fails the capture naming it as
// the flow spells it; it is the flow's fault, not the machinery's.
func TestCaptureNamesBadSelector(t *testing.T) {
	t.Parallel()
	d, ctx := launched(t, "chromium-cdp-643x403", "dress.html")
	for _, c := range []struct {
		opts flowrun.CaptureOptions
		want []string
	}{
		{flowrun.CaptureOptions{Mask: []*flow.Selector{{ID: "t1"}, {Matches: "(unclosed"}}}, []string{"mask", "text=/(unclosed/", "bad regex"}},
		{flowrun.CaptureOptions{Hide: []*flow.Selector{{Role: "button", Within: &flow.Selector{Matches: "[z-a]"}}}}, []string{"hide", `role="button" within (text=/[z-a]/)`, "bad regex"}},
		{flowrun.CaptureOptions{Mask: []*flow.Selector{{ID: "t1"}}, MaskColor: "pinkish"}, []string{"maskColor", `"pinkish"`, "not a CSS colour"}},
	} {
		_, err := d.Capture(ctx, c.opts)
		var oe *cdp.CaptureOptionError
		if !errors.As(err, &oe) || errors.Is(err, fault.ErrInfrastructure) {
			t.Errorf("got %v, want a CaptureOptionError that is not an infrastructure failure", err)
			continue
		}
		for _, part := range c.want {
			if !strings.Contains(err.Error(), part) {
				t.Errorf("got %q, want it to name %s", err, part)
			}
		}
	}
}
