package snapshot

import (
	"encoding/binary"
	"math"
	"testing"
)

func TestZZStats(t *testing.T) {
	p := makeBenchPairs(t)[3]
	a, _ := Decode("a", p.a)
	b, _ := Decode("b", p.b)
	w, h := a.Width, a.Height
	var differ, over, flatA, flatB, aaA, aaB int
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			k := (y*w + x) * 4
			if binary.LittleEndian.Uint32(a.Pix[k:]) == binary.LittleEndian.Uint32(b.Pix[k:]) {
				continue
			}
			differ++
			d := colorDelta(a.Pix, b.Pix, k, false)
			if !(math.Abs(d) > 352.15) {
				continue
			}
			over++
			cnt := func(img []uint8) int {
				c := binary.LittleEndian.Uint32(img[k:])
				n := 0
				for yy := max(y-1, 0); yy <= min(y+1, h-1); yy++ {
					for xx := max(x-1, 0); xx <= min(x+1, w-1); xx++ {
						if binary.LittleEndian.Uint32(img[(yy*w+xx)*4:]) == c {
							n++
						}
					}
				}
				return n - 1
			}
			if cnt(a.Pix) > 2 {
				flatA++
			} else if antialiased(a.Pix, b.Pix, x, y, w, h, false) {
				aaA++
			}
			if cnt(b.Pix) > 2 {
				flatB++
			} else if antialiased(b.Pix, a.Pix, x, y, w, h, false) {
				aaB++
			}
		}
	}
	t.Logf("differ %d over %d flatA %d flatB %d aaA %d aaB %d", differ, over, flatA, flatB, aaA, aaB)
}
