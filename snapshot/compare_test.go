package snapshot

import (
	"bytes"
	"errors"
	"image"
	"reflect"
	"runtime"
	"strings"
	"testing"
)

// solid returns an opaque image filled with one colour.
func solid(w, h int, r, g, b uint8) *Image {
	m := NewImage(w, h)
	for i := 0; i < len(m.Pix); i += 4 {
		m.Pix[i], m.Pix[i+1], m.Pix[i+2], m.Pix[i+3] = r, g, b, 255
	}
	return m
}

// fill paints a rectangle of m opaque.
func fill(m *Image, rect image.Rectangle, r, g, b uint8) {
	for y := rect.Min.Y; y < rect.Max.Y; y++ {
		for x := rect.Min.X; x < rect.Max.X; x++ {
			p := m.Pix[4*(y*m.Width+x):]
			p[0], p[1], p[2], p[3] = r, g, b, 255
		}
	}
}

func clone(m *Image) *Image {
	c := *m
	c.Pix = append([]uint8(nil), m.Pix...)
	return &c
}

func TestCompareIdenticalFastPath(t *testing.T) {
	a := solid(40, 30, 0, 0, 0)
	fill(a, image.Rect(5, 5, 20, 20), 255, 255, 255)
	opts := DefaultOptions()
	opts.Diff = true
	res, err := Compare(a, clone(a), opts)
	if err != nil {
		t.Fatal(err)
	}
	want := Result{Width: 40, Height: 30, Metric: MetricYIQ, Identical: true, Regions: []Region{}}
	diff := res.Diff
	res.Diff = nil
	if !reflect.DeepEqual(res, want) {
		t.Fatalf("got %+v, want %+v", res, want)
	}
	// The diff of identical images is the faded copy: black fades to 229
	// (255 + (0 - 255) * 0.1, truncated), white stays 255.
	if got := diff.Pix[:4]; !reflect.DeepEqual(got, []uint8{229, 229, 229, 255}) {
		t.Errorf("black pixel in diff: got %v, want [229 229 229 255]", got)
	}
	if p := 4 * (10*40 + 10); !reflect.DeepEqual(diff.Pix[p:p+4], []uint8{255, 255, 255, 255}) {
		t.Errorf("white pixel in diff: got %v, want [255 255 255 255]", diff.Pix[p:p+4])
	}
}

// TestDiffImageRepeatedRows: an unchanged row that repeats an earlier one
// (copied from its drawing) is drawn as if drawn pixel by pixel.
func TestDiffImageRepeatedRows(t *testing.T) {
	t.Parallel()
	a := decodeVector(t, "images/1280x800/small-a.png", screenshotPNG(t))
	b := decodeVector(t, "images/1280x800/small-b.png", vectorPNG(t, "1280x800/small-b.png"))
	opts := DefaultOptions()
	opts.Diff = true
	// A changed pair, then an identical one (drawn by the fast path).
	for _, b := range []*Image{b, a} {
		res, err := Compare(a, b, opts)
		if err != nil {
			t.Fatal(err)
		}
		stride := 4 * a.Width
		want := make([]uint8, stride)
		repeated := 0
		for y := range a.Height {
			row := a.Pix[y*stride : (y+1)*stride]
			if !bytes.Equal(row, b.Pix[y*stride:(y+1)*stride]) {
				continue
			}
			if y > 0 && bytes.Equal(row, a.Pix[(y-1)*stride:y*stride]) {
				repeated++
			}
			grayRun(want, row)
			if got := res.Diff.Pix[y*stride : (y+1)*stride]; !bytes.Equal(got, want) {
				t.Fatalf("identical %v: row %d of the diff image differs from its pixel-by-pixel drawing", res.Identical, y)
			}
		}
		if repeated < 100 {
			t.Fatalf("%d unchanged rows repeat the row above; want the screenshot's many", repeated)
		}
	}
}

// TestCompareBytesIdenticalFiles: the same bytes twice are identical
// without decoding pixels, but a corrupt file is still refused.
func TestCompareBytesIdenticalFiles(t *testing.T) {
	shot := screenshotPNG(t)
	res, err := CompareBytes("a.png", shot, "b.png", shot, DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	if !res.Identical || res.Width != 1280 || res.Height != 800 || res.MismatchPixels != 0 {
		t.Fatalf("got %+v, want identical 1280x800", res)
	}
	bad := shot[:len(shot)/2]
	if _, err := CompareBytes("a.png", bad, "b.png", bad, DefaultOptions()); !errors.Is(err, ErrTruncated) || !strings.Contains(err.Error(), "a.png") {
		t.Fatalf("got %v, want a truncation error naming a.png", err)
	}
	opts := DefaultOptions()
	opts.Diff = true
	res, err = CompareBytes("a.png", shot, "b.png", shot, opts)
	if err != nil || res.Diff == nil || !res.Identical {
		t.Fatalf("with a diff image: got %+v, %v", res, err)
	}
}

func TestCompareErrors(t *testing.T) {
	a, b := solid(4, 4, 1, 2, 3), solid(4, 5, 1, 2, 3)
	a.Name, b.Name = "home.png", "current.png"
	_, err := Compare(a, b, DefaultOptions())
	var sm *SizeMismatchError
	if !errors.As(err, &sm) || sm.A != image.Pt(4, 4) || sm.B != image.Pt(4, 5) {
		t.Fatalf("got %v, want a size mismatch 4x4 vs 4x5", err)
	}
	if want := "snapshot: image sizes differ: 4x4 (home.png) vs 4x5 (current.png)"; err.Error() != want {
		t.Fatalf("got %q, want %q", err.Error(), want)
	}
	for _, th := range []float64{-0.1, 1.5} {
		if _, err := Compare(a, clone(a), Options{Threshold: th}); err == nil || !strings.Contains(err.Error(), "threshold") {
			t.Errorf("threshold %v: got %v, want a threshold error", th, err)
		}
	}
	if _, err := Compare(nil, a, DefaultOptions()); err == nil {
		t.Error("nil image: got no error")
	}
	short := &Image{Name: "short", Pix: make([]uint8, 7), Width: 2, Height: 1}
	if _, err := Compare(short, short, DefaultOptions()); err == nil || !strings.Contains(err.Error(), "short") {
		t.Errorf("inconsistent image: got %v, want an error naming it", err)
	}
}

// TestRegions: two separated blobs give two boxes, largest first, with
// exact bounds and counts; blobs a few pixels apart join.
func TestRegions(t *testing.T) {
	a := solid(200, 120, 255, 255, 255)
	b := clone(a)
	fill(b, image.Rect(10, 10, 20, 15), 0, 0, 0)    // 50 px
	fill(b, image.Rect(100, 60, 140, 100), 0, 0, 0) // 1600 px
	fill(b, image.Rect(144, 60, 146, 62), 0, 0, 0)  // 4 px, 4 px right of the big one: joins it
	res, err := Compare(a, b, DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	want := []Region{
		{X: 100, Y: 60, Width: 46, Height: 40, Pixels: 1604},
		{X: 10, Y: 10, Width: 10, Height: 5, Pixels: 50},
	}
	if !reflect.DeepEqual(res.Regions, want) || res.RegionCount != 2 {
		t.Fatalf("got %+v (count %d), want %+v", res.Regions, res.RegionCount, want)
	}
	if res.MismatchPixels != 1654 {
		t.Fatalf("got %d mismatched pixels, want 1654", res.MismatchPixels)
	}
}

func TestRegionsCapped(t *testing.T) {
	a := solid(400, 400, 255, 255, 255)
	b := clone(a)
	n := 0
	for y := 0; y < 400; y += 40 {
		for x := 0; x < 400; x += 40 {
			// Squares of growing size, 30+ px apart: separate regions.
			s := 1 + n%5
			fill(b, image.Rect(x, y, x+s, y+s), 0, 0, 0)
			n++
		}
	}
	res, err := Compare(a, b, DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	if res.RegionCount != n || len(res.Regions) != MaxRegions {
		t.Fatalf("got %d regions (%d kept), want %d (%d kept)", res.RegionCount, len(res.Regions), n, MaxRegions)
	}
	for i := 1; i < len(res.Regions); i++ {
		if res.Regions[i].Pixels > res.Regions[i-1].Pixels {
			t.Fatalf("regions not largest first: %+v", res.Regions)
		}
	}
	if res.Regions[0].Pixels != 25 {
		t.Fatalf("largest region has %d pixels, want 25", res.Regions[0].Pixels)
	}
}

// TestDiffImageColours: changed pixels red, or green where the second
// image got darker (pixelmatch's diffColorAlt), anti-aliased pixels
// yellow, unchanged ones a faded grayscale of the first image.
func TestDiffImageColours(t *testing.T) {
	// A vertical edge between black and white, with one gray pixel in b
	// where a had black next to the edge: that is anti-aliasing. A white
	// block turned black far from the edge is a real change that got
	// darker; a black block in a turned white in b one that got lighter.
	a := solid(30, 20, 255, 255, 255)
	fill(a, image.Rect(0, 0, 10, 20), 0, 0, 0)
	fill(a, image.Rect(20, 14, 24, 18), 0, 0, 0)
	b := clone(a)
	fill(b, image.Rect(9, 10, 10, 11), 128, 128, 128)
	fill(b, image.Rect(20, 5, 24, 9), 0, 0, 0)
	fill(b, image.Rect(20, 14, 24, 18), 255, 255, 255)
	opts := DefaultOptions()
	opts.Diff = true
	res, err := Compare(a, b, opts)
	if err != nil {
		t.Fatal(err)
	}
	at := func(x, y int) []uint8 { p := 4 * (y*30 + x); return res.Diff.Pix[p : p+4] }
	if got := at(9, 10); !reflect.DeepEqual(got, []uint8{255, 255, 0, 255}) {
		t.Errorf("anti-aliased pixel: got %v, want yellow", got)
	}
	if got := at(21, 6); !reflect.DeepEqual(got, []uint8{0, 255, 0, 255}) {
		t.Errorf("changed pixel that got darker: got %v, want green", got)
	}
	if got := at(21, 15); !reflect.DeepEqual(got, []uint8{255, 0, 0, 255}) {
		t.Errorf("changed pixel that got lighter: got %v, want red", got)
	}
	if got := at(2, 2); !reflect.DeepEqual(got, []uint8{229, 229, 229, 255}) {
		t.Errorf("unchanged black pixel: got %v, want faded gray 229", got)
	}
	if res.MismatchPixels != 32 || res.AntialiasedPixels != 1 {
		t.Errorf("got %d changed and %d anti-aliased, want 32 and 1", res.MismatchPixels, res.AntialiasedPixels)
	}
	opts.IncludeAA = true
	res, err = Compare(a, b, opts)
	if err != nil {
		t.Fatal(err)
	}
	if got := at(9, 10); res.MismatchPixels != 33 || !reflect.DeepEqual(got, []uint8{255, 0, 0, 255}) {
		t.Errorf("with IncludeAA: got %d changed, pixel %v; want 33 and red", res.MismatchPixels, got)
	}
}

// TestCompareParallelExact: the result does not depend on how many
// goroutines compare the stripes.
func TestCompareParallelExact(t *testing.T) {
	pairs := decodeBenchPairs(t)
	p := pairs[len(pairs)-1]
	// A band of the 30% pair across the top edge of its recoloured block:
	// five stripes and more than parallelMin pixels, so each worker count
	// below splits it its own way, at 40% of the pair's cost under -race.
	const y0, y1 = 100, 420
	band := func(m *Image) *Image {
		stride := 4 * m.Width
		return &Image{Name: m.Name, Pix: m.Pix[y0*stride : y1*stride], Width: m.Width, Height: y1 - y0}
	}
	a, b := band(p.a), band(p.b)
	if a.Width*a.Height < parallelMin || (a.Height+stripeRows-1)/stripeRows != 5 {
		t.Fatalf("the band is %dx%d: want five stripes and at least %d pixels", a.Width, a.Height, parallelMin)
	}
	var results []Result
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	for _, procs := range []int{1, 2, 3, 8} {
		runtime.GOMAXPROCS(procs)
		res, err := Compare(a, b, DefaultOptions())
		if err != nil {
			t.Fatal(err)
		}
		results = append(results, res)
	}
	if results[0].MismatchPixels == 0 || len(results[0].Regions) == 0 {
		t.Fatalf("the band has no changes to split: %+v", results[0])
	}
	for i := 1; i < len(results); i++ {
		if !reflect.DeepEqual(results[i], results[0]) {
			t.Fatalf("result %d differs from the single-goroutine one:\n%+v\n%+v", i, results[i], results[0])
		}
	}
}

// TestCompareBytesOtherLayouts: pairs that are not both 8-bit RGB or RGBA of
// one size go through image/png, with the same answers.
func TestCompareBytesOtherLayouts(t *testing.T) {
	res, err := CompareBytes("gray16.png", gray16PNG(), "paletted.png", palettedPNG(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	want, err := Compare(mustDecode(t, gray16PNG()), mustDecode(t, palettedPNG()), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(res, want) || res.MismatchPixels == 0 {
		t.Fatalf("got %+v, want %+v (and some changed pixels)", res, want)
	}
	a, b := vectorPNG(t, "390x844/dims-a.png"), vectorPNG(t, "390x844/dims-b.png")
	_, err = CompareBytes("dims-a.png", a, "dims-b.png", b, DefaultOptions())
	var sm *SizeMismatchError
	if !errors.As(err, &sm) || sm.A != image.Pt(390, 844) || sm.B != image.Pt(390, 940) || sm.NameB != "dims-b.png" {
		t.Fatalf("got %v, want a size mismatch naming both files", err)
	}
	if _, err := CompareBytes("a", a, "b", b, Options{Threshold: 2}); err == nil {
		t.Fatal("threshold 2: got no error")
	}
}
