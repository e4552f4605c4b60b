package snapshot

import (
	"image"
	"math"
	"reflect"
	"strings"
	"testing"
)

// TestOKLabLookupTables: near black, pixelmatch 8's interpolated cube root
// decides which of these one-step changes exceed threshold 0.005 (an exact
// cube root decides three of them the other way). The counts and the
// colours are pixelmatch 8.0.0's for this 12x1 pair with includeAA and
// diffColorAlt green: a changed pixel is red, or green where the second
// image is darker.
func TestOKLabLookupTables(t *testing.T) {
	pairs := [][2][3]uint8{
		{{2, 20, 10}, {2, 21, 10}},
		{{14, 15, 14}, {14, 16, 14}},
		{{14, 9, 18}, {14, 8, 18}},
		{{30, 24, 25}, {30, 25, 25}},
		{{22, 22, 31}, {22, 23, 31}},
		{{15, 18, 23}, {15, 17, 23}},
	}
	a := solid(12, 1, 0, 0, 0)
	b := clone(a)
	for i, p := range pairs {
		fill(a, image.Rect(2*i, 0, 2*i+1, 1), p[0][0], p[0][1], p[0][2])
		fill(b, image.Rect(2*i, 0, 2*i+1, 1), p[1][0], p[1][1], p[1][2])
	}
	res, err := Compare(a, b, Options{Metric: MetricOKLab, Threshold: 0.005, IncludeAA: true, Diff: true})
	if err != nil {
		t.Fatal(err)
	}
	if res.MismatchPixels != 4 || res.TotalMismatchPixels != 4 || res.Metric != MetricOKLab {
		t.Errorf("got %d (total %d, metric %q), want 4 pixels with the oklab metric", res.MismatchPixels, res.TotalMismatchPixels, res.Metric)
	}
	want := [][]uint8{{255, 0, 0, 255}, {230, 230, 230, 255}, {0, 255, 0, 255}, {232, 232, 232, 255}, {255, 0, 0, 255}, {0, 255, 0, 255}}
	for i, w := range want {
		if got := res.Diff.Pix[8*i : 8*i+4]; !reflect.DeepEqual(got, w) {
			t.Errorf("diff pixel %d: got %v, want %v", 2*i, got, w)
		}
	}
}

// TestJSCbrt: the cube root is V8's, also where Go's math.Cbrt rounds the
// other way (values from Node 20's Math.cbrt), and close to exact
// everywhere.
func TestJSCbrt(t *testing.T) {
	for _, c := range [][2]float64{
		{0.0009765625, 0.09921256574801247},
		{0.003173828125, 0.14695841798254733},
		{0.0010602544366910026, 0.10196943966858209},
		{0.705026145426103, 0.890024047419133},
		{0.6406932472161452, 0.8620849212008569},
		{0, 0},
		{1, 1},
		{0.125, 0.5},
	} {
		if got := jsCbrt(c[0]); got != c[1] {
			t.Errorf("jsCbrt(%v) = %v, want %v", c[0], got, c[1])
		}
	}
	for i := range 10000 {
		x := math.Float64frombits(uint64(i) * 0x3ff0000000000000 / 10000)
		if got, want := jsCbrt(x), math.Cbrt(x); math.Abs(got-want) > 2*(math.Nextafter(want, 2)-want) {
			t.Fatalf("jsCbrt(%v) = %v, want about %v", x, got, want)
		}
	}
}

// TestSRGBLinearTable: the written-out sRGB decoding is complete, rising,
// and within 4 ulps of the formula computed with Go's math.Pow, which is
// less exact than V8's.
func TestSRGBLinearTable(t *testing.T) {
	if srgbLinear[255] != 1 || srgbLinear[256] != 1 || srgbLinear[0] != 0 {
		t.Fatalf("ends %v, %v, %v; want 0, 1, 1", srgbLinear[0], srgbLinear[255], srgbLinear[256])
	}
	for i := 1; i < 256; i++ {
		c := float64(i) / 255
		want := c / 12.92
		if c > 0.04045 {
			want = math.Pow((c+0.055)/1.055, 2.4)
		}
		if got := srgbLinear[i]; got <= srgbLinear[i-1] || math.Abs(got-want) > 4*(math.Nextafter(want, 2)-want) {
			t.Errorf("srgbLinear[%d] = %v, want %v within 4 ulps and above the entry before", i, got, want)
		}
	}
}

// TestWindowSize: the windowed count is the most counted pixels in any N×N
// square wholly inside the image, at any offset (sliding, not tiled);
// scattered pixels count little, a compact block fully.
func TestWindowSize(t *testing.T) {
	a := solid(40, 30, 255, 255, 255)
	b := clone(a)
	// A 4x4 block across the 8x8 tile corner at (8, 8): a tiled count
	// would see 4 of it per tile.
	fill(b, image.Rect(6, 6, 10, 10), 0, 0, 0)
	// Scattered single pixels, 5 px apart on the bottom row.
	for x := 0; x < 40; x += 5 {
		fill(b, image.Rect(x, 29, x+1, 30), 0, 0, 0)
	}
	for _, m := range Metrics {
		for _, c := range []struct{ window, want int }{
			// 1000 is clamped to 30: no 30x30 square holds all 40 columns.
			{0, 24}, {8, 16}, {2, 4}, {1, 1}, {1000, 22},
		} {
			res, err := Compare(a, b, Options{Metric: m, Threshold: 0.1, WindowSize: c.window})
			if err != nil {
				t.Fatal(err)
			}
			if res.MismatchPixels != c.want || res.TotalMismatchPixels != 24 || res.WindowSize != c.window {
				t.Errorf("%s window %d: got %d (total %d, window %d), want %d (total 24)", m, c.window, res.MismatchPixels, res.TotalMismatchPixels, res.WindowSize, c.want)
			}
			n := windowSide(c.window, 40, 30)
			if c.window > 0 && res.MismatchPercent != 100*float64(c.want)/float64(n*n) {
				t.Errorf("%s window %d: got %v%%, want %v%% of the %dx%d window", m, c.window, res.MismatchPercent, 100*float64(c.want)/float64(n*n), n, n)
			}
		}
	}
	// The bottom row alone: windows of 8 hold 2 of the scattered pixels
	// (0 and 5), and only windows wholly inside count, so the last row's
	// pixels are reached by windows ending there.
	c := solid(40, 30, 255, 255, 255)
	res, err := Compare(c, b, Options{Threshold: 0.1, WindowSize: 8, Ignore: []image.Rectangle{image.Rect(0, 0, 40, 20)}})
	if err != nil {
		t.Fatal(err)
	}
	if res.MismatchPixels != 2 || res.TotalMismatchPixels != 8 {
		t.Errorf("bottom row: got %d (total %d), want 2 (total 8)", res.MismatchPixels, res.TotalMismatchPixels)
	}
}

// TestIgnore: ignored pixels are neither counted nor in a region, and the
// diff image draws them as unchanged; rectangles are clipped to the image
// and may lie wholly outside it.
func TestIgnore(t *testing.T) {
	a := solid(20, 10, 255, 255, 255)
	b := clone(a)
	fill(b, image.Rect(0, 0, 4, 4), 0, 0, 0)
	fill(b, image.Rect(10, 5, 12, 7), 0, 0, 0)
	for _, m := range Metrics {
		opts := Options{Metric: m, Threshold: 0.1, Diff: true, Ignore: []image.Rectangle{
			image.Rect(-5, -5, 4, 4), image.Rect(30, 30, 40, 40), image.Rect(11, 5, 11, 9),
		}}
		res, err := Compare(a, b, opts)
		if err != nil {
			t.Fatal(err)
		}
		if res.MismatchPixels != 4 || res.RegionCount != 1 || res.Regions[0].X != 10 || res.Identical {
			t.Errorf("%s: got %d pixels in %v (identical %v), want 4 in one region at x 10, not identical", m, res.MismatchPixels, res.Regions, res.Identical)
		}
		if got := res.Diff.Pix[0:4]; !reflect.DeepEqual(got, []uint8{255, 255, 255, 255}) {
			t.Errorf("%s: ignored pixel drawn %v, want the faded first image (white)", m, got)
		}
		if got := res.Diff.Pix[4*(5*20+10):][:4]; !reflect.DeepEqual(got, diffGreen[:]) {
			t.Errorf("%s: changed pixel drawn %v, want green (darker)", m, got)
		}
		opts.Ignore = append(opts.Ignore, image.Rect(10, 5, 12, 7))
		if res, err = Compare(a, b, opts); err != nil || res.MismatchPixels != 0 || res.Identical {
			t.Errorf("%s: everything changed ignored: got %d pixels, identical %v, err %v; want 0, false, nil", m, res.MismatchPixels, res.Identical, err)
		}
	}
}

// TestOptionsCheck: an unknown metric or a negative window is refused,
// naming the option, by Compare and CompareBytes alike.
func TestOptionsCheck(t *testing.T) {
	a := solid(2, 2, 0, 0, 0)
	for _, c := range []struct {
		opts Options
		want string
	}{
		{Options{Metric: "lab"}, `metric "lab" is not one of yiq, oklab`},
		{Options{WindowSize: -1}, "window size -1 is negative"},
	} {
		if _, err := Compare(a, a, c.opts); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Compare %+v: got %v, want %q", c.opts, err, c.want)
		}
		if _, err := CompareBytes("a", []byte("x"), "b", []byte("x"), c.opts); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("CompareBytes %+v: got %v, want %q", c.opts, err, c.want)
		}
	}
	res, err := Compare(a, a, Options{})
	if err != nil || res.Metric != MetricYIQ || !res.Identical {
		t.Errorf("zero options: got %+v, %v; want identical with the yiq metric", res, err)
	}
}
