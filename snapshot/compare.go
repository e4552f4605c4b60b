package snapshot

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"image"
	"math"
	"runtime"
	"sync"
	"sync/atomic"
)

// Options tune a comparison. The zero value means threshold 0 (every colour
// change counts) with the YIQ metric; start from DefaultOptions for
// pixelmatch's defaults.
type Options struct {
	// Metric is the colour distance: MetricYIQ (also "", the default) or
	// MetricOKLab.
	Metric Metric
	// Threshold is pixelmatch's matching threshold, 0 to 1; smaller is more
	// sensitive. The default is 0.1. With MetricOKLab it is the largest
	// HyAB distance that still matches (1 is black against white).
	Threshold float64
	// IncludeAA counts anti-aliased pixels as differences instead of
	// excluding them.
	IncludeAA bool
	// White blends translucent pixels over white before comparing. By
	// default (false) they are blended over the metric's pixelmatch
	// version's pseudo checkerboard, which the reference counts use.
	White bool
	// WindowSize, when above 0, makes Result.MismatchPixels pixelmatch 8's
	// windowed count: the most differing pixels in any N×N square that lies
	// inside the image (N clamped to the image's smaller side), so that
	// scattered noise counts little and a compact change counts fully.
	WindowSize int
	// Ignore are rectangles of pixels (in image coordinates, clipped to the
	// image) left out of the comparison, pixelmatch 8's ignoreMask: never
	// counted, and drawn in the diff image as unchanged pixels.
	Ignore []image.Rectangle
	// Diff asks for Result.Diff.
	Diff bool
}

// Metric names a colour distance of Options.
type Metric string

const (
	// MetricYIQ is pixelmatch 7.2's squared YIQ distance, with its
	// anti-aliasing check and checkerboard: pixelmatch 7.2.0's counts.
	MetricYIQ Metric = "yiq"
	// MetricOKLab is pixelmatch 8.0's HyAB distance in OKLab, with its
	// lookup tables, its anti-aliasing check (translucent neighbours over
	// white) and its checkerboard: pixelmatch 8.0.0's counts.
	MetricOKLab Metric = "oklab"
)

// Metrics lists the metrics, the default first.
var Metrics = []Metric{MetricYIQ, MetricOKLab}

// DefaultOptions returns pixelmatch's defaults: the YIQ metric, threshold
// 0.1, anti-aliased pixels excluded, checkerboard background, no window,
// nothing ignored, no diff image.
func DefaultOptions() Options { return Options{Threshold: 0.1} }

// check reports options that cannot be used, naming the option.
func (o Options) check() error {
	if err := checkThreshold(o.Threshold); err != nil {
		return err
	}
	switch o.Metric {
	case "", MetricYIQ, MetricOKLab:
	default:
		return fmt.Errorf("snapshot: metric %q is not one of yiq, oklab", o.Metric)
	}
	if o.WindowSize < 0 {
		return fmt.Errorf("snapshot: window size %d is negative", o.WindowSize)
	}
	return nil
}

// Diff image colours and the fading of unchanged pixels: pixelmatch's
// defaults diffColor, aaColor and alpha, and for diffColorAlt (pixels that
// got darker in the second image, off in pixelmatch) the green of
// pixelmatch's own test of it.
const (
	diffFade = 0.1
)

var (
	diffRed    = [4]uint8{255, 0, 0, 255}
	diffGreen  = [4]uint8{0, 255, 0, 255}
	diffYellow = [4]uint8{255, 255, 0, 255}
)

// Compare compares two images of the same size with pixelmatch's algorithm
// (7.2's with MetricYIQ, 8.0's with MetricOKLab) and returns the same count
// pixelmatch returns for the same options. Images of different sizes give
// a *SizeMismatchError.
//
// Byte-identical pixel buffers answer at once without any colour distance.
// Otherwise rows that are equal are skipped with one memory compare, equal
// pixels with one word compare, and only differing pixels pay for the
// colour distance and the anti-aliasing check. Large images are split into
// stripes compared by up to GOMAXPROCS goroutines; the anti-aliasing check
// reads only the two inputs, so the stripes are independent and the result
// is exact. No memory is allocated per pixel.
func Compare(a, b *Image, opts Options) (Result, error) {
	return compare(pair{a: a, b: b}, opts)
}

// compare is Compare for a pair that may know which rows are the same (see
// pair): those rows are skipped like rows that compare equal.
func compare(p pair, opts Options) (Result, error) {
	a, b := p.a, p.b
	if err := checkImage(a, "first"); err != nil {
		return Result{}, err
	}
	if err := checkImage(b, "second"); err != nil {
		return Result{}, err
	}
	if a.Width != b.Width || a.Height != b.Height {
		return Result{}, &SizeMismatchError{A: a.Size(), B: b.Size(), NameA: a.Name, NameB: b.Name}
	}
	if err := opts.check(); err != nil {
		return Result{}, err
	}
	res := newResult(a.Width, a.Height, opts)
	var out []uint8
	if opts.Diff {
		res.Diff = &Image{Name: "diff", Pix: make([]uint8, len(a.Pix)), Width: a.Width, Height: a.Height}
		out = res.Diff.Pix
	}
	if identical(p) {
		res.Identical = true
		if out != nil {
			for y := range a.Height {
				grayRow(out, a.Pix, 4*a.Width, y, y-1)
			}
		}
		return res, nil
	}
	c := &comparer{
		a: a.Pix, b: b.Pix, w: a.Width, h: a.Height, same: p.same,
		includeAA: opts.IncludeAA,
		white:     opts.White,
		ignore:    ignoreMask(opts.Ignore, a.Width, a.Height),
		out:       out,
		grid:      newGrid(a.Width, a.Height),
	}
	if res.Metric == MetricOKLab {
		c.ok = okTablesOnce()
		c.maxDelta = opts.Threshold
		c.aaBlend = aaWhiteAlpha
	} else {
		// 35215 is the largest possible YIQ distance (pixelmatch).
		c.maxDelta = 35215 * opts.Threshold * opts.Threshold
		c.aaBlend = aaChecker
		if opts.White {
			c.aaBlend = aaWhite
		}
	}
	if opts.WindowSize > 0 {
		c.hits = newHitMap(a.Width, a.Height)
	}
	c.run()
	res.TotalMismatchPixels = int(c.mismatch.Load())
	res.MismatchPixels = res.TotalMismatchPixels
	res.AntialiasedPixels = int(c.aa.Load())
	res.MismatchPercent = 100 * float64(res.MismatchPixels) / float64(a.Width*a.Height)
	if c.hits != nil {
		n := windowSide(opts.WindowSize, a.Width, a.Height)
		res.MismatchPixels = c.hits.maxWindow(n)
		res.MismatchPercent = 100 * float64(res.MismatchPixels) / float64(n*n)
	}
	res.Regions, res.RegionCount = c.grid.regions(MaxRegions)
	return res, nil
}

// newResult is the result of comparing two w×h images that differ nowhere.
func newResult(w, h int, opts Options) Result {
	m := opts.Metric
	if m == "" {
		m = MetricYIQ
	}
	return Result{Width: w, Height: h, Regions: []Region{}, Metric: m, WindowSize: opts.WindowSize}
}

// CompareBytes decodes two PNGs and compares them, with the same result as
// Decode and Compare but faster: the two files are decoded together on two
// goroutines, rows both files encode alike are decoded once, and when no
// diff image is asked for only the rows the comparison reads are decoded
// (see decodePair). Byte-identical files are Identical after one copy is
// validated with Check, so a corrupt file is still an error. Names label
// errors and the size mismatch.
func CompareBytes(aName string, a []byte, bName string, b []byte, opts Options) (Result, error) {
	if err := opts.check(); err != nil {
		return Result{}, err
	}
	if bytes.Equal(a, b) {
		if !opts.Diff {
			size, err := Check(aName, a)
			if err != nil {
				return Result{}, err
			}
			res := newResult(size.X, size.Y, opts)
			res.Identical = true
			return res, nil
		}
		img, err := Decode(aName, a)
		if err != nil {
			return Result{}, err
		}
		return Compare(img, img, opts)
	}
	p, err := decodePair(aName, a, bName, b, opts.Diff)
	if err != nil {
		return Result{}, err
	}
	return compare(p, opts)
}

// identical reports whether the pair's pixel buffers are equal. Rows not
// known to be the same are compared (two encoders may encode equal rows
// differently).
func identical(p pair) bool {
	if p.same == nil {
		return bytes.Equal(p.a.Pix, p.b.Pix)
	}
	stride := 4 * p.a.Width
	for y, s := range p.same {
		if !s && !bytes.Equal(p.a.Pix[y*stride:(y+1)*stride], p.b.Pix[y*stride:(y+1)*stride]) {
			return false
		}
	}
	return true
}

func checkThreshold(t float64) error {
	if math.IsNaN(t) || t < 0 || t > 1 {
		return fmt.Errorf("snapshot: threshold %v is outside 0..1", t)
	}
	return nil
}

func checkImage(m *Image, which string) error {
	if m == nil {
		return fmt.Errorf("snapshot: the %s image is nil", which)
	}
	if m.Width <= 0 || m.Height <= 0 || len(m.Pix) != 4*m.Width*m.Height {
		return fmt.Errorf("snapshot: image %q: %d bytes of pixels do not fit %dx%d", m.Name, len(m.Pix), m.Width, m.Height)
	}
	return nil
}

// stripeRows is the height of the unit of parallel work; a multiple of the
// region grid's cell size, so no two goroutines touch the same cell.
const stripeRows = 8 * cellSize

// parallelMin is the pixel count below which one goroutine does all rows.
const parallelMin = 1 << 18

// comparer holds one comparison's inputs and shared counters.
type comparer struct {
	a, b      []uint8
	w, h      int
	maxDelta  float64   // YIQ: the squared distance; OKLab: the HyAB distance
	ok        *okTables // the OKLab tables, or nil for YIQ
	aaBlend   aaBlend   // how the anti-aliasing check blends translucent pixels
	includeAA bool
	white     bool
	ignore    []bool  // pixels left out (Options.Ignore), or nil
	out       []uint8 // diff image pixels, or nil
	same      []bool  // rows known to be equal (see pair), or nil
	grid      *grid
	hits      *hitMap // counted pixels for the windowed count, or nil

	next     atomic.Int64 // next stripe to take
	mismatch atomic.Int64
	aa       atomic.Int64
}

// run compares all stripes, with as many workers as GOMAXPROCS allows.
func (c *comparer) run() {
	stripes := (c.h + stripeRows - 1) / stripeRows
	workers := min(runtime.GOMAXPROCS(0), stripes, 8)
	if c.w*c.h < parallelMin || workers < 2 {
		c.work()
		return
	}
	var wg sync.WaitGroup
	for range workers - 1 {
		wg.Go(c.work)
	}
	c.work()
	wg.Wait()
}

// work takes stripes until none is left.
func (c *comparer) work() {
	var cache *okCache
	if c.ok != nil {
		cache = okCaches.Get().(*okCache)
		defer okCaches.Put(cache)
	}
	var mismatch, aa int64
	for {
		s := int(c.next.Add(1) - 1)
		y0 := s * stripeRows
		if y0 >= c.h {
			break
		}
		m, a := c.rows(y0, min(y0+stripeRows, c.h), cache)
		mismatch += m
		aa += a
	}
	c.mismatch.Add(mismatch)
	c.aa.Add(aa)
}

// rows compares rows y0..y1-1, pixelmatch's main loop; cache is the
// goroutine's OKLab cache (nil for YIQ).
func (c *comparer) rows(y0, y1 int, cache *okCache) (mismatch, aa int64) {
	rowBytes := 4 * c.w
	gray := -1 // the last row of the stripe drawn all gray, or -1
	for y := y0; y < y1; y++ {
		off := y * rowBytes
		ra := c.a[off : off+rowBytes]
		rb := c.b[off : off+rowBytes]
		var ro []uint8
		if c.out != nil {
			ro = c.out[off : off+rowBytes]
		}
		if (c.same != nil && c.same[y]) || bytes.Equal(ra, rb) {
			if ro != nil {
				grayRow(c.out, c.a, rowBytes, y, gray)
				gray = y
			}
			continue
		}
		var ignored []bool
		if c.ignore != nil {
			ignored = c.ignore[y*c.w : (y+1)*c.w]
		}
		for x := 0; x < c.w; x++ {
			p := 4 * x
			if binary.LittleEndian.Uint32(ra[p:]) == binary.LittleEndian.Uint32(rb[p:]) || (ignored != nil && ignored[x]) {
				if ro != nil {
					grayPixel(ro[p:p+4:p+4], ra[p:p+4:p+4])
				}
				continue
			}
			over, darker := c.differs(off+p, cache)
			if !over {
				if ro != nil {
					grayPixel(ro[p:p+4:p+4], ra[p:p+4:p+4])
				}
				continue
			}
			if !c.includeAA && (antialiased(c.a, c.b, x, y, c.w, c.h, c.aaBlend) || antialiased(c.b, c.a, x, y, c.w, c.h, c.aaBlend)) {
				aa++
				if ro != nil {
					copy(ro[p:p+4], diffYellow[:])
				}
				continue
			}
			mismatch++
			c.grid.add(x, y)
			if c.hits != nil {
				c.hits.add(x, y)
			}
			if ro != nil {
				colour := diffRed
				if darker {
					colour = diffGreen
				}
				copy(ro[p:p+4], colour[:])
			}
		}
	}
	return mismatch, aa
}

// differs reports whether the pixels at byte offset k, which are not
// equal, are farther apart than the threshold, and whether the second is
// the darker (by YIQ luma, or by OKLab lightness).
func (c *comparer) differs(k int, cache *okCache) (over, darker bool) {
	if c.ok != nil {
		d := okDelta(c.ok, cache, c.a, c.b, k, !c.white, c.maxDelta)
		return d != 0, d < 0
	}
	delta := colorDelta(c.a, c.b, k, c.white)
	return math.Abs(delta) > c.maxDelta, delta < 0
}
