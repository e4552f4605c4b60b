package snapshot

import "image"

// ignoreMask is Options.Ignore as one flag per pixel (row-major), the
// ignoreMask pixelmatch 8 takes; nil when no rectangle covers a pixel of a
// w×h image.
func ignoreMask(rects []image.Rectangle, w, h int) []bool {
	var mask []bool
	bounds := image.Rect(0, 0, w, h)
	for _, r := range rects {
		r = r.Canon().Intersect(bounds)
		if r.Empty() {
			continue
		}
		if mask == nil {
			mask = make([]bool, w*h)
		}
		for y := r.Min.Y; y < r.Max.Y; y++ {
			row := mask[y*w+r.Min.X : y*w+r.Max.X]
			for i := range row {
				row[i] = true
			}
		}
	}
	return mask
}

// windowSide is the side of the windows of Options.WindowSize n on a w×h
// image: n clamped to 1..min(w, h), as pixelmatch 8 clamps it.
func windowSide(n, w, h int) int {
	return min(max(n, 1), w, h)
}

// hitMap records the counted pixels of a comparison for the windowed
// count. Each stripe of rows writes only its own rows.
type hitMap struct {
	w, h    int
	hit     []uint8 // 1 for a counted pixel, row-major
	rowHits []int32 // counted pixels per row
}

func newHitMap(w, h int) *hitMap {
	return &hitMap{w: w, h: h, hit: make([]uint8, w*h), rowHits: make([]int32, h)}
}

func (m *hitMap) add(x, y int) {
	m.hit[y*m.w+x] = 1
	m.rowHits[y]++
}

// maxWindow returns the largest number of counted pixels in any n×n window
// that lies wholly inside the image (pixelmatch 8's windowed count), sliding
// the window by one pixel in both directions. Column sums over the last n
// rows are kept as rows enter and leave; a band of n rows is scanned across
// only when its total could beat the best so far, and rows without hits
// cost nothing.
func (m *hitMap) maxWindow(n int) int {
	first, last := -1, -1
	for y, c := range m.rowHits {
		if c > 0 {
			if first < 0 {
				first = y
			}
			last = y
		}
	}
	if first < 0 {
		return 0
	}
	colSum := make([]int32, m.w)
	var best, band int32
	for y := first; y <= min(m.h-1, last+n-1); y++ {
		if m.rowHits[y] > 0 {
			for x, v := range m.hit[y*m.w : (y+1)*m.w] {
				colSum[x] += int32(v)
			}
			band += m.rowHits[y]
		}
		if out := y - n; out >= 0 && m.rowHits[out] > 0 {
			for x, v := range m.hit[out*m.w : (out+1)*m.w] {
				colSum[x] -= int32(v)
			}
			band -= m.rowHits[out]
		}
		if y < n-1 || band <= best {
			continue
		}
		var sum int32
		for x := range n - 1 {
			sum += colSum[x]
		}
		for x := n - 1; x < m.w; x++ {
			sum += colSum[x]
			best = max(best, sum)
			sum -= colSum[x-n+1]
		}
	}
	return int(best)
}
