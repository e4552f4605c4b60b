package cdp_test

import (
	"context"
	"testing"
	"time"

	"github.com/toolserver/toolserver/device/cdp"
	"github.com/toolserver/toolserver/device/cdp/cdptest"
)

// BenchmarkScreenshotWarm measures one viewport capture on a booted
// 1280x800 device with the page loaded.
func BenchmarkScreenshotWarm(b *testing.B) {
	ctx := context.Background()
	d := cdptest.Device(b, "chromium-cdp-1280x800")
	if err := d.Launch(ctx, cdptest.Pages(b)+"/app.html"); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := d.Screenshot(ctx); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkTapWarm measures finding a button by its text and clicking it on
// a warm device.
func BenchmarkTapWarm(b *testing.B) {
	ctx := context.Background()
	d := cdptest.Device(b, "chromium-cdp-1280x801")
	if err := d.Launch(ctx, cdptest.Pages(b)+"/app.html"); err != nil {
		b.Fatal(err)
	}
	sel := cdp.Selector{Text: "go now"}
	b.ReportAllocs()
	for b.Loop() {
		el, err := d.Locate(ctx, sel, time.Second)
		if err != nil || el == nil {
			b.Fatal(el, err)
		}
		if err := d.TapElement(ctx, el, 1, 0); err != nil {
			b.Fatal(err)
		}
	}
}
