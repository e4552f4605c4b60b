package snapshot

import (
	"bytes"
	"cmp"
	"sync"
)

// pair is two decoded images of one comparison. When same is not nil,
// same[y] says that row y of b equals row y of a (they decode from the same
// bytes); such a row of b.Pix is left unset unless it lies within 2 rows of
// a row that differs (the anti-aliasing check reads that far around a
// changed pixel). When partial is true, a's rows farther than 2 rows from
// any differing row are not decoded either. Only compare may read such a
// pair; pass full to decodePair for images to hand out.
type pair struct {
	a, b    *Image
	same    []bool
	partial bool
}

// materialize fills the rows of b that same leaves unset (a must be full).
func (p pair) materialize() {
	if p.same == nil || p.partial {
		return
	}
	stride := 4 * p.a.Width
	for y, s := range p.same {
		if s {
			copy(p.b.Pix[y*stride:(y+1)*stride], p.a.Pix[y*stride:(y+1)*stride])
		}
	}
}

// decodePair decodes the two PNGs of a comparison. It checks and converts
// them exactly as Decode does; only the schedule differs, to use two cores
// and to do less work for rows the two files share.
//
// When both are in the screenshot layout (see fastStream) and have the same
// size, they are decoded jointly:
//
//  1. Both streams are inflated in parallel: a's rows into a's pixel slots,
//     b's rows one at a time, each compared with a's row as soon as a has
//     it. A row of b is "same" when its filter type and bytes equal a's and
//     its filter reads no row above or the row above is same too: then it
//     decodes to a's row and is not stored, so most of b's memory is never
//     touched (on a fresh process every page costs a fault).
//  2. Unless full is set, when few rows differ only what the comparison
//     reads is unfiltered (the result is partial): the rows within 2 rows of
//     a differing row, with the rows of a their filters need above them
//     (back to a None or Sub row), and b's differing rows.
//  3. Otherwise the rows are unfiltered by two goroutines, split at a row
//     whose filter is None or Sub in both images (it does not read the row
//     above, so each half starts on its own): all of a, and the rows of b
//     that are not same.
//  4. Rows of b that are same but within 2 rows of a differing row are
//     copied from a, for the anti-aliasing check.
//
// Otherwise the two are decoded independently, in parallel, and same is nil.
func decodePair(aName string, a []byte, bName string, b []byte, full bool) (pair, error) {
	ha, errA := readHeader(a)
	hb, errB := readHeader(b)
	if errA == nil && errB == nil && ha.width == hb.width && ha.height == hb.height {
		sa, okA, errA := openFast(a, ha)
		sb, okB, errB := openFast(b, hb)
		if errA != nil {
			return pair{}, &DecodeError{Name: aName, Err: errA}
		}
		if errB != nil {
			return pair{}, &DecodeError{Name: bName, Err: errB}
		}
		if okA && okB {
			return decodeJoint(aName, sa, bName, sb, full)
		}
	}
	var (
		imgB *Image
		wg   sync.WaitGroup
	)
	wg.Go(func() { imgB, errB = Decode(bName, b) })
	imgA, errA := Decode(aName, a)
	wg.Wait()
	if errA != nil {
		return pair{}, errA
	}
	if errB != nil {
		return pair{}, errB
	}
	return pair{a: imgA, b: imgB}, nil
}

// progress publishes how many rows of a are inflated, in batches so that a
// waiting b goroutine is woken a few dozen times, not once per row.
type progress struct {
	mu   sync.Mutex
	cond sync.Cond
	rows int
	done bool // a stopped (finished or failed): no more rows will come
}

const progressBatch = 16

func newProgress() *progress {
	p := &progress{}
	p.cond.L = &p.mu
	return p
}

func (p *progress) publish(rows int, done bool) {
	p.mu.Lock()
	p.rows, p.done = rows, done
	p.mu.Unlock()
	p.cond.Broadcast()
}

// wait blocks until row y of a is inflated; false if it never will be.
func (p *progress) wait(y int) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	for p.rows <= y && !p.done {
		p.cond.Wait()
	}
	return p.rows > y
}

// decodeJoint is decodePair's joint path for two fast streams of one size.
func decodeJoint(aName string, sa fastStream, bName string, sb fastStream, full bool) (pair, error) {
	w, h := sa.w, sa.h
	j := &jointRows{
		a:    sa,
		b:    sb,
		imgA: &Image{Name: aName, Width: w, Height: h},
		imgB: &Image{Name: bName, Width: w, Height: h},
		ftA:  make([]uint8, h),
		ftB:  make([]uint8, h),
		same: make([]bool, h),
	}
	prog := newProgress()
	var (
		errA, errB error
		wg         sync.WaitGroup
	)
	wg.Go(func() { errB = j.inflateB(prog) })
	// Each goroutine allocates its own image: the page faults of a's
	// pixels are taken here, in parallel with b's work.
	j.imgA.Pix = make([]uint8, 4*w*h)
	errA = sa.inflateInPlace(j.imgA.Pix, j.ftA, func(rows int) {
		if rows%progressBatch == 0 {
			prog.publish(rows, false)
		}
	})
	if errA != nil {
		prog.publish(0, true) // b must not compare with a's rows
	} else {
		prog.publish(h, true)
	}
	wg.Wait()
	if err := nameErrors(errA, aName, errB, bName); err != nil {
		return pair{}, err
	}

	// The filter types were checked while inflating, so unfiltering cannot
	// fail; the errors are still passed on rather than dropped.
	if !full {
		if need, n := j.neededRows(); n <= h/3 {
			errA, errB = j.unfilterNeeded(need)
			if err := nameErrors(errA, aName, errB, bName); err != nil {
				return pair{}, err
			}
			j.fillNeighbours()
			return pair{a: j.imgA, b: j.imgB, same: j.same, partial: true}, nil
		}
	}
	if m := j.splitRow(); m > 0 {
		var loA, loB error
		wg.Go(func() { loA, loB = j.unfilter(0, m) })
		errA, errB = j.unfilter(m, h)
		wg.Wait()
		errA, errB = cmp.Or(loA, errA), cmp.Or(loB, errB)
	} else {
		// No row to split at: one goroutine does all rows, since b's rows
		// read a's.
		errA, errB = j.unfilter(0, h)
	}
	if err := nameErrors(errA, aName, errB, bName); err != nil {
		return pair{}, err
	}
	j.fillNeighbours()
	return pair{a: j.imgA, b: j.imgB, same: j.same}, nil
}

// jointRows is the state of a joint decode.
type jointRows struct {
	a, b       fastStream
	imgA, imgB *Image
	ftA, ftB   []uint8
	same       []bool
}

// nameErrors returns the first of two decode errors as the DecodeError of
// its image, or nil.
func nameErrors(errA error, aName string, errB error, bName string) error {
	if errA != nil {
		return &DecodeError{Name: aName, Err: errA}
	}
	if errB != nil {
		return &DecodeError{Name: bName, Err: errB}
	}
	return nil
}

// restart reports whether a filter type does not read the row above.
func restart(ft uint8) bool { return ft == ftNone || ft == ftSub }

// inflateB inflates b row by row into a scratch row and keeps only the rows
// that are not same (see decodePair) in b's pixel slots.
func (j *jointRows) inflateB(prog *progress) error {
	j.imgB.Pix = make([]uint8, 4*j.b.w*j.b.h) // fresh memory: untouched pages cost nothing
	scratch := make([]uint8, j.b.bpp*j.b.w)
	comparable := j.a.bpp == j.b.bpp
	err := j.b.inflateRows(j.ftB, func(y int) []uint8 {
		if y > 0 {
			j.keepB(y-1, scratch, comparable, prog) // row y-1 is complete
		}
		return scratch
	})
	if err == nil {
		j.keepB(j.b.h-1, scratch, comparable, prog)
	}
	return err
}

// keepB decides whether row y of b (in scratch) is same, and stores it when
// it is not.
func (j *jointRows) keepB(y int, scratch []uint8, comparable bool, prog *progress) {
	same := comparable && prog.wait(y) && j.ftA[y] == j.ftB[y] &&
		(y == 0 || restart(j.ftB[y]) || j.same[y-1]) &&
		bytes.Equal(scratch, j.a.samples(j.imgA.Pix, y))
	j.same[y] = same
	if !same {
		copy(j.b.samples(j.imgB.Pix, y), scratch)
	}
}

// rowCost estimates the relative time to unfilter a row of each filter
// type (measured on 1280-pixel RGB rows: Paeth is by far the slowest).
var rowCost = [5]int{ftNone: 2, ftSub: 3, ftUp: 4, ftAverage: 7, ftPaeth: 15}

// splitRow returns a row that is a restart row in both images and splits
// the estimated unfilter work in two halves as evenly as possible, or 0 when
// there is none (or the image is too small to bother).
func (j *jointRows) splitRow() int {
	h := j.a.h
	if h < 64 {
		return 0
	}
	cost := func(y int) int {
		c := rowCost[j.ftA[y]]
		if !j.same[y] {
			c += rowCost[j.ftB[y]]
		}
		return c
	}
	total := 0
	for y := range h {
		total += cost(y)
	}
	best, bestGap, before := 0, total, 0
	for y := range h {
		if y > 0 && restart(j.ftA[y]) && restart(j.ftB[y]) {
			if gap := max(before, total-before) - min(before, total-before); gap < bestGap {
				best, bestGap = y, gap
			}
		}
		before += cost(y)
	}
	return best
}

// unfilter decodes rows y0..y1-1: all of a and the rows of b that are not
// same. Row y0 is 0 or a restart row of both images. The row above a row of
// b is a's when it is same (b's copy of it is not stored).
func (j *jointRows) unfilter(y0, y1 int) (errA, errB error) {
	stride := 4 * j.a.w
	pixA, pixB := j.imgA.Pix, j.imgB.Pix
	for y := y0; y < y1; y++ {
		var prevA, prevB []uint8
		if y > y0 {
			prevA = pixA[(y-1)*stride : y*stride]
			prevB = prevA
			if !j.same[y-1] {
				prevB = pixB[(y-1)*stride : y*stride]
			}
		}
		if err := j.a.unfilterSlot(pixA, j.ftA[y], y, prevA); err != nil {
			return err, nil
		}
		if !j.same[y] {
			if err := j.b.unfilterSlot(pixB, j.ftB[y], y, prevB); err != nil {
				return nil, err
			}
		}
	}
	return nil, nil
}

// window marks the rows within 2 rows of a row that is not same: the rows
// the comparison reads, in both images.
func (j *jointRows) window() []bool {
	h := j.a.h
	win := make([]bool, h)
	for y, s := range j.same {
		if !s {
			for n := max(y-2, 0); n <= min(y+2, h-1); n++ {
				win[n] = true
			}
		}
	}
	return win
}

// neededRows returns the rows of a to unfilter for a comparison (the
// window, and above each of its rows the rows its filter chain reads, back
// to a None or Sub row) and their number.
func (j *jointRows) neededRows() ([]bool, int) {
	need := j.window()
	n := 0
	for y := j.a.h - 1; y >= 0; y-- {
		if need[y] {
			n++
			if y > 0 && !restart(j.ftA[y]) {
				need[y-1] = true
			}
		}
	}
	return need, n
}

// unfilterNeeded unfilters the needed rows of a and the rows of b that are
// not same (all inside the window), top down. The row above a needed row is
// needed too unless the row's filter does not read it; the row above a row
// of b that is not same is b's own or, when same, a's, which is in the
// window and so needed.
func (j *jointRows) unfilterNeeded(need []bool) (errA, errB error) {
	stride := 4 * j.a.w
	pixA, pixB := j.imgA.Pix, j.imgB.Pix
	for y := range j.a.h {
		var prevA, prevB []uint8
		if y > 0 {
			prevA = pixA[(y-1)*stride : y*stride]
			prevB = prevA
			if !j.same[y-1] {
				prevB = pixB[(y-1)*stride : y*stride]
			}
		}
		if need[y] {
			if err := j.a.unfilterSlot(pixA, j.ftA[y], y, prevA); err != nil {
				return err, nil
			}
		}
		if !j.same[y] {
			if err := j.b.unfilterSlot(pixB, j.ftB[y], y, prevB); err != nil {
				return nil, err
			}
		}
	}
	return nil, nil
}

// fillNeighbours copies a's rows into b where b's row is same but lies
// within 2 rows of a row that is not: the anti-aliasing check of a changed
// pixel reads b up to 2 rows away (a neighbour's neighbours).
func (j *jointRows) fillNeighbours() {
	stride := 4 * j.a.w
	h := j.a.h
	filled := -1 // last row filled, so overlapping windows copy once
	for y := range h {
		if j.same[y] {
			continue
		}
		for n := max(y-2, filled+1, 0); n <= min(y+2, h-1); n++ {
			if j.same[n] {
				copy(j.imgB.Pix[n*stride:(n+1)*stride], j.imgA.Pix[n*stride:(n+1)*stride])
			}
			filled = n
		}
	}
}
