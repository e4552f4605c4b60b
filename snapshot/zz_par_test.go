package snapshot

import (
	"testing"
	"time"
)

func TestZZPar(t *testing.T) {
	p := makeBenchPairs(t)[3]
	a, _ := Decode("a", p.a)
	b, _ := Decode("b", p.b)
	for _, wk := range []int{1, 2, 1, 2, 1, 2, 1, 2} {
		c := &comparer{a: a.Pix, b: b.Pix, w: a.Width, h: a.Height, maxDelta: 352.15, grid: newGrid(a.Width, a.Height)}
		st := time.Now()
		done := make(chan time.Duration, 2)
		for i := 0; i < wk; i++ {
			go func() { s := time.Now(); c.work(); done <- time.Since(s) }()
		}
		var ds []time.Duration
		for i := 0; i < wk; i++ {
			ds = append(ds, <-done)
		}
		t.Logf("workers %d: %v %v mismatch %d", wk, time.Since(st), ds, c.mismatch.Load())
	}
}
