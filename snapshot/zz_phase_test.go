package snapshot

import (
	"sync"
	"testing"
	"time"
)

func TestZZPhases(t *testing.T) {
	p := makeBenchPairs(t)[1]
	for range 6 {
		t0 := time.Now()
		ha, _ := readHeader(p.a)
		hb, _ := readHeader(p.b)
		sa, _, _ := openFast(p.a, ha)
		sb, _, _ := openFast(p.b, hb)
		w, h := sa.w, sa.h
		j := &jointRows{a: sa, b: sb, imgA: &Image{Width: w, Height: h}, imgB: &Image{Width: w, Height: h}, ftA: make([]uint8, h), ftB: make([]uint8, h), same: make([]bool, h)}
		prog := &progress{}
		prog.cond.L = &prog.mu
		var wg sync.WaitGroup
		var tB time.Duration
		t1 := time.Now()
		wg.Go(func() { s := time.Now(); j.inflateB(prog); tB = time.Since(s) })
		j.imgA.Pix = make([]uint8, 4*w*h)
		sa.inflateInPlace(j.imgA.Pix, j.ftA, func(rows int) {
			if rows%progressBatch == 0 {
				prog.publish(rows, false)
			}
		})
		tA := time.Since(t1)
		prog.publish(h, true)
		wg.Wait()
		t2 := time.Now()
		m := j.splitRow()
		var tlo time.Duration
		wg.Go(func() { s := time.Now(); j.unfilter(0, m); tlo = time.Since(s) })
		s := time.Now()
		j.unfilter(m, h)
		thi := time.Since(s)
		wg.Wait()
		t3 := time.Now()
		j.fillNeighbours()
		t4 := time.Now()
		res, _ := compare(pair{a: j.imgA, b: j.imgB, same: j.same}, DefaultOptions())
		t5 := time.Now()
		ns := 0
		for _, s := range j.same {
			if !s {
				ns++
			}
		}
		t.Logf("open %v | inflate A %v B %v wall %v | split %d unfilter lo %v hi %v wall %v | fill %v | compare %v (%d) | total %v | notsame %d", t1.Sub(t0), tA, tB, t2.Sub(t1), m, tlo, thi, t3.Sub(t2), t4.Sub(t3), t5.Sub(t4), res.MismatchPixels, t5.Sub(t0), ns)
	}
}
