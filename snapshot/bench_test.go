package snapshot

import (
	"bytes"
	"flag"
	"image"
	"image/png"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
)

// pairsDir makes TestBenchPairs keep the benchmark pairs, for
// bench/compare-anchors.sh: go test ./snapshot -run '^TestBenchPairs$' -args -pairs DIR
var pairsDir = flag.String("pairs", "", "write the 1280x800 benchmark pairs as PNG files into this directory")

// benchPair is a 1280x800 pair of PNG files; a is always the Chromium
// screenshot of the vectors' dashboard page.
type benchPair struct {
	name string
	a, b []byte
}

// benchWantPct is the range of the mismatch percentage each bench pair is
// made to have.
var benchWantPct = map[string][2]float64{
	"identical": {0, 0},
	"0.05pct":   {0.03, 0.06},
	"0.5pct":    {0.4, 0.6},
	"30pct":     {27, 31},
}

// recolourBlocks are inverted (255-v per colour channel) in the b image of
// the generated pairs; chosen on the dashboard's content so that about 0.5%
// and about 30% of the pixels differ.
var recolourBlocks = map[string]image.Rectangle{
	"0.5pct": image.Rect(40, 24, 40+128, 24+40),
	"30pct":  image.Rect(64, 120, 64+720, 120+440),
}

// makeBenchPairs returns the pairs: identical (the same bytes twice), the
// vectors' one-word change (~0.04%), and the screenshot with a block
// recoloured (~0.5% and ~30%). Deterministic: same bytes on every run.
// They are built once per test binary: a 1280x800 decode and encode each
// take seconds under -race. Callers must not modify them.
func makeBenchPairs(tb testing.TB) []benchPair {
	tb.Helper()
	pairs, err := benchPairs()
	if err != nil {
		tb.Fatal(err)
	}
	return pairs
}

// benchImages decodes the screenshot once and recolours a copy of it per
// recolourBlocks entry, once per test binary: the decoded images of those
// pairs, without a PNG round trip (PNG is lossless, so decoding their
// encoding gives the same pixels).
var benchImages = sync.OnceValues(func() (map[string]*Image, error) {
	dir := filepath.Join(vectorsDir, "images", "1280x800")
	a, err := os.ReadFile(filepath.Join(dir, "small-a.png"))
	if err != nil {
		return nil, err
	}
	base, err := Decode("small-a.png", a)
	if err != nil {
		return nil, err
	}
	out := map[string]*Image{"a": base}
	for _, name := range []string{"0.5pct", "30pct"} {
		img := &Image{Name: name + "-b.png", Pix: bytes.Clone(base.Pix), Width: base.Width, Height: base.Height}
		r := recolourBlocks[name]
		for y := r.Min.Y; y < r.Max.Y; y++ {
			for x := r.Min.X; x < r.Max.X; x++ {
				p := img.Pix[4*(y*img.Width+x):]
				p[0], p[1], p[2] = 255-p[0], 255-p[1], 255-p[2]
			}
		}
		out[name] = img
	}
	return out, nil
})

// smallPair reads the vectors' dashboard screenshot and its copy with one
// word changed, the files both kinds of bench pair start from.
func smallPair() (a, small []byte, err error) {
	dir := filepath.Join(vectorsDir, "images", "1280x800")
	if a, err = os.ReadFile(filepath.Join(dir, "small-a.png")); err != nil {
		return nil, nil, err
	}
	small, err = os.ReadFile(filepath.Join(dir, "small-b.png"))
	return a, small, err
}

var benchPairs = sync.OnceValues(func() ([]benchPair, error) {
	a, small, err := smallPair()
	if err != nil {
		return nil, err
	}
	pairs := []benchPair{
		{name: "identical", a: a, b: bytes.Clone(a)},
		{name: "0.05pct", a: a, b: small},
	}
	imgs, err := benchImages()
	if err != nil {
		return nil, err
	}
	for _, name := range []string{"0.5pct", "30pct"} {
		var buf bytes.Buffer
		if err := png.Encode(&buf, imgs[name].NRGBA()); err != nil {
			return nil, err
		}
		pairs = append(pairs, benchPair{name: name, a: a, b: buf.Bytes()})
	}
	return pairs, nil
})

// decodedBenchPair is a bench pair decoded.
type decodedBenchPair struct {
	name string
	a, b *Image
}

// decodeBenchPairs decodes the bench pairs, once per test binary. Callers
// must not modify the images.
func decodeBenchPairs(tb testing.TB) []decodedBenchPair {
	tb.Helper()
	pairs, err := decodedBenchPairs()
	if err != nil {
		tb.Fatal(err)
	}
	return pairs
}

// decodedBenchPairs are the pairs of benchPairs, in its order, decoded: the
// screenshot is decoded once and shared as every pair's a; the recoloured
// images are benchImages' (no encode needed).
var decodedBenchPairs = sync.OnceValues(func() ([]decodedBenchPair, error) {
	imgs, err := benchImages()
	if err != nil {
		return nil, err
	}
	a, small, err := smallPair()
	if err != nil {
		return nil, err
	}
	// The identical pair's b is decoded on its own, as a separate image
	// with equal pixels (the same bytes twice).
	same, err := Decode("identical-b.png", bytes.Clone(a))
	if err != nil {
		return nil, err
	}
	smallB, err := Decode("0.05pct-b.png", small)
	if err != nil {
		return nil, err
	}
	base := imgs["a"]
	return []decodedBenchPair{
		{"identical", base, same},
		{"0.05pct", base, smallB},
		{"0.5pct", base, imgs["0.5pct"]},
		{"30pct", base, imgs["30pct"]},
	}, nil
})

// TestBenchPairs checks that the generated pairs differ by what their names
// say, and writes them out when -pairs is given. Without -pairs it checks
// their pixels (decodeBenchPairs, which the other tests decode anyway):
// encoding the two recoloured 1280x800 images takes seconds under -race
// and PNG is lossless, so the files hold the same pixels. It also counts
// what comparing each 1280x800 pair allocates: a small constant number
// of times, never per pixel. The count is of one compare from its first
// call, what it allocates once (its pools) included, since a compare
// under -race takes a second; the test is not parallel, so no other
// test's allocations count.
func TestBenchPairs(t *testing.T) {
	if *pairsDir == "" {
		pairs := decodeBenchPairs(t)
		if len(pairs) != len(benchWantPct) {
			t.Fatalf("got %d decoded pairs, want %d", len(pairs), len(benchWantPct))
		}
		for _, p := range pairs {
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			res, err := Compare(p.a, p.b, DefaultOptions())
			runtime.ReadMemStats(&after)
			if err != nil {
				t.Fatalf("%s: %v", p.name, err)
			}
			checkBenchPct(t, p.name, res)
			if allocs := after.Mallocs - before.Mallocs; allocs > 40 {
				t.Errorf("%s: %d allocations in a compare, want at most 40", p.name, allocs)
			}
		}
		return
	}
	for _, p := range makeBenchPairs(t) {
		res, err := CompareBytes(p.name+"-a.png", p.a, p.name+"-b.png", p.b, DefaultOptions())
		if err != nil {
			t.Fatal(err)
		}
		checkBenchPct(t, p.name, res)
		for suffix, data := range map[string][]byte{"-a.png": p.a, "-b.png": p.b} {
			if err := os.WriteFile(filepath.Join(*pairsDir, p.name+suffix), data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// checkBenchPct fails the test unless the bench pair name differs by the
// percentage its name says.
func checkBenchPct(t *testing.T, name string, res Result) {
	t.Helper()
	want, ok := benchWantPct[name]
	if !ok {
		t.Fatalf("%s: not a bench pair", name)
	}
	if res.MismatchPercent < want[0] || res.MismatchPercent > want[1] {
		t.Errorf("%s: got %.4f%% changed, want %v..%v", name, res.MismatchPercent, want[0], want[1])
	}
	t.Logf("%s: %d pixels (%.4f%%), %d regions", name, res.MismatchPixels, res.MismatchPercent, res.RegionCount)
}

// benchMetrics are the metrics the compare benchmarks run with: the
// default's cases keep their names (yiq), oklab's are suffixed.
var benchMetrics = []struct {
	suffix string
	metric Metric
}{{"", MetricYIQ}, {"-oklab", MetricOKLab}}

// BenchmarkCompare measures the comparison of decoded 1280x800 images,
// with each metric.
func BenchmarkCompare(b *testing.B) {
	for _, p := range makeBenchPairs(b) {
		ia, err := Decode("a", p.a)
		if err != nil {
			b.Fatal(err)
		}
		ib, err := Decode("b", p.b)
		if err != nil {
			b.Fatal(err)
		}
		for _, m := range benchMetrics {
			opts := DefaultOptions()
			opts.Metric = m.metric
			b.Run(p.name+m.suffix, func(b *testing.B) {
				b.ReportAllocs()
				b.SetBytes(int64(len(ia.Pix)))
				for b.Loop() {
					if _, err := Compare(ia, ib, opts); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// BenchmarkDecodeCompare measures what `toolserver snapshot diff` does in
// process: decode both PNGs and compare them, with each metric.
func BenchmarkDecodeCompare(b *testing.B) {
	for _, p := range makeBenchPairs(b) {
		for _, m := range benchMetrics {
			opts := DefaultOptions()
			opts.Metric = m.metric
			b.Run(p.name+m.suffix, func(b *testing.B) {
				b.ReportAllocs()
				b.SetBytes(int64(len(p.a) + len(p.b)))
				for b.Loop() {
					if _, err := CompareBytes("a", p.a, "b", p.b, opts); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// BenchmarkDecode measures decoding one 1280x800 Chromium screenshot.
func BenchmarkDecode(b *testing.B) {
	data := makeBenchPairs(b)[0].a
	b.ReportAllocs()
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if _, err := Decode("a", data); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCompareDiffImage measures a comparison that also draws and
// encodes the diff image, as `snapshot diff --diff` and failed snapshot steps
// do.
func BenchmarkCompareDiffImage(b *testing.B) {
	p := makeBenchPairs(b)[2]
	ia, _ := Decode("a", p.a)
	ib, _ := Decode("b", p.b)
	opts := DefaultOptions()
	opts.Diff = true
	b.ReportAllocs()
	for b.Loop() {
		res, err := Compare(ia, ib, opts)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := EncodePNG(res.Diff); err != nil {
			b.Fatal(err)
		}
	}
}
