package cdp_test

import (
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

func eval(t *testing.T, d *cdp.Device, expr string) string {
	t.Helper()
	raw, err := d.Eval(ctxT(t), expr)
	if err != nil {
		t.Fatalf("eval %s: %v", expr, err)
	}
	return string(raw)
}

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
