package snapshot

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"testing"
)

type xscene struct {
	w, h  int
	bg    [2][4]float64 // gradient from, to (0..65535)
	discs []xdisc
	rects []xrect
	noise [4]int // x,y,w,h of noise area
	seed  uint64
}
type xdisc struct {
	cx, cy, r float64
	c         [4]float64
}
type xrect struct {
	x0, y0, x1, y1 int
	c              [4]float64
}

func randColor(r *rand.Rand, alpha bool) [4]float64 {
	c := [4]float64{float64(r.IntN(65536)), float64(r.IntN(65536)), float64(r.IntN(65536)), 65535}
	if alpha && r.IntN(2) == 0 {
		c[3] = float64(r.IntN(65536))
	}
	return c
}

func newScene(r *rand.Rand, w, h int, alpha bool) xscene {
	s := xscene{w: w, h: h, seed: r.Uint64()}
	s.bg[0] = randColor(r, alpha)
	if r.IntN(2) == 0 {
		s.bg[1] = s.bg[0]
	} else {
		s.bg[1] = randColor(r, alpha)
	}
	for range 1 + r.IntN(6) {
		s.discs = append(s.discs, xdisc{float64(r.IntN(w)) + r.Float64(), float64(r.IntN(h)) + r.Float64(), 1 + r.Float64()*float64(min(w, h))/3, randColor(r, alpha)})
	}
	for range r.IntN(5) {
		x0, y0 := r.IntN(w), r.IntN(h)
		s.rects = append(s.rects, xrect{x0, y0, x0 + 1 + r.IntN(w/2+1), y0 + 1 + r.IntN(h/2+1), randColor(r, alpha)})
	}
	return s
}

func (s xscene) perturb(r *rand.Rand) xscene {
	t := s
	t.discs = append([]xdisc(nil), s.discs...)
	t.rects = append([]xrect(nil), s.rects...)
	switch r.IntN(4) {
	case 0:
		i := r.IntN(len(t.discs))
		t.discs[i].cx += []float64{0.5, 1, -1, 0.25}[r.IntN(4)]
	case 1:
		i := r.IntN(len(t.discs))
		t.discs[i].c[r.IntN(4)] = float64(r.IntN(65536))
	case 2:
		if len(t.rects) > 0 {
			t.rects[r.IntN(len(t.rects))].c = randColor(r, true)
		}
	}
	if r.IntN(2) == 0 {
		t.noise = [4]int{r.IntN(s.w), r.IntN(s.h), 1 + r.IntN(s.w/4+1), 1 + r.IntN(s.h/4+1)}
		t.seed = r.Uint64()
	}
	return t
}

func over(dst [4]float64, src [4]float64, cov float64) [4]float64 {
	sa := src[3] / 65535 * cov
	da := dst[3] / 65535
	oa := sa + da*(1-sa)
	if oa == 0 {
		return [4]float64{}
	}
	var o [4]float64
	for i := range 3 {
		o[i] = (src[i]*sa + dst[i]*da*(1-sa)) / oa
	}
	o[3] = oa * 65535
	return o
}

func (s xscene) render() *image.NRGBA64 {
	m := image.NewNRGBA64(image.Rect(0, 0, s.w, s.h))
	nr := rand.New(rand.NewPCG(s.seed, 7))
	for y := range s.h {
		for x := range s.w {
			f := float64(x) / float64(max(s.w-1, 1))
			var c [4]float64
			for i := range 4 {
				c[i] = s.bg[0][i]*(1-f) + s.bg[1][i]*f
			}
			for _, rc := range s.rects {
				if x >= rc.x0 && x < rc.x1 && y >= rc.y0 && y < rc.y1 {
					c = over(c, rc.c, 1)
				}
			}
			for _, d := range s.discs {
				cov := 0.0
				for sy := range 4 {
					for sx := range 4 {
						px, py := float64(x)+(float64(sx)+0.5)/4, float64(y)+(float64(sy)+0.5)/4
						if math.Hypot(px-d.cx, py-d.cy) <= d.r {
							cov += 1.0 / 16
						}
					}
				}
				if cov > 0 {
					c = over(c, d.c, cov)
				}
			}
			if n := s.noise; n[2] > 0 && x >= n[0] && x < n[0]+n[2] && y >= n[1] && y < n[1]+n[3] && nr.IntN(3) == 0 {
				c[nr.IntN(4)] = float64(nr.IntN(65536))
			}
			m.SetNRGBA64(x, y, color.NRGBA64{uint16(c[0]), uint16(c[1]), uint16(c[2]), uint16(c[3])})
		}
	}
	return m
}

// encodeAs writes m in one PNG layout; key is a colour-key sample for tRNS.
func encodeAs(m *image.NRGBA64, layout string, interlace bool, pal color.Palette) []byte {
	w, h := m.Rect.Dx(), m.Rect.Dy()
	at := func(x, y int) color.NRGBA64 { return m.NRGBA64At(x, y) }
	p := rawPNG{width: w, height: h, interlace: interlace}
	switch layout {
	case "rgba8":
		p.depth, p.colorType = 8, ctRGBA
		p.sample = func(x, y int) []uint16 { c := at(x, y); return []uint16{c.R >> 8, c.G >> 8, c.B >> 8, c.A >> 8} }
	case "rgba16":
		p.depth, p.colorType = 16, ctRGBA
		p.sample = func(x, y int) []uint16 { c := at(x, y); return []uint16{c.R, c.G, c.B, c.A} }
	case "rgb8", "rgb8key":
		p.depth, p.colorType = 8, ctRGB
		p.sample = func(x, y int) []uint16 { c := at(x, y); return []uint16{c.R >> 8, c.G >> 8, c.B >> 8} }
		if layout == "rgb8key" {
			c := at(0, 0)
			p.trns = []byte{0, uint8(c.R >> 8), 0, uint8(c.G >> 8), 0, uint8(c.B >> 8)}
		}
	case "rgb16", "rgb16key":
		p.depth, p.colorType = 16, ctRGB
		p.sample = func(x, y int) []uint16 { c := at(x, y); return []uint16{c.R, c.G, c.B} }
		if layout == "rgb16key" {
			c := at(0, 0)
			p.trns = []byte{uint8(c.R >> 8), uint8(c.R), uint8(c.G >> 8), uint8(c.G), uint8(c.B >> 8), uint8(c.B)}
		}
	case "ga8", "ga16", "g1", "g2", "g4", "g8", "g16", "g4key", "g8key", "g16key":
		var d uint8
		switch layout {
		case "ga8", "g8", "g8key":
			d = 8
		case "ga16", "g16", "g16key":
			d = 16
		case "g1":
			d = 1
		case "g2":
			d = 2
		case "g4", "g4key":
			d = 4
		}
		p.depth = d
		p.colorType = ctGray
		alpha := layout[:2] == "ga"
		if alpha {
			p.colorType = ctGrayAlpha
		}
		p.sample = func(x, y int) []uint16 {
			c := at(x, y)
			g := c.G >> (16 - d)
			if alpha {
				return []uint16{g, c.A >> (16 - d)}
			}
			return []uint16{g}
		}
		if len(layout) > 3 && layout[len(layout)-3:] == "key" {
			g := at(0, 0).G >> (16 - d)
			p.trns = []byte{uint8(g >> 8), uint8(g)}
		}
	case "p8", "p4":
		p.depth, p.colorType = 8, ctPaletted
		n := 256
		if layout == "p4" {
			p.depth, n = 4, 16
		}
		for i := range n {
			c := color.NRGBAModel.Convert(pal[i]).(color.NRGBA)
			p.palette = append(p.palette, c)
		}
		p.sample = func(x, y int) []uint16 {
			c := at(x, y)
			return []uint16{uint16((uint32(c.R>>8)*7 + uint32(c.G>>8)*3 + uint32(c.B>>8) + uint32(c.A>>8)*5) % uint32(n))}
		}
	default:
		panic(layout)
	}
	return p.encode()
}

func trimKey(s string) string { return s }

func TestXCheckNode(t *testing.T) {
	dir := os.Getenv("XCHECK_DIR")
	if dir == "" {
		t.Skip("XCHECK_DIR not set")
	}
	os.MkdirAll(dir, 0o755)
	r := rand.New(rand.NewPCG(1, 2))
	layouts := []string{"rgba8", "rgba16", "rgb8", "rgb8key", "rgb16", "rgb16key", "ga8", "ga16", "g1", "g2", "g4", "g8", "g16", "g4key", "g8key", "g16key", "p8", "p4"}
	type item struct {
		A    string `json:"a"`
		B    string `json:"b"`
		Opts []map[string]any `json:"opts"`
	}
	opts := []map[string]any{
		{"threshold": 0.1},
		{"threshold": 0.0},
		{"threshold": 0.1, "includeAA": true},
		{"threshold": 0.1, "checkerboard": false},
		{"threshold": 0.05, "includeAA": true, "checkerboard": false},
		{"threshold": 0.3},
	}
	toOpts := func(m map[string]any) Options {
		o := Options{Threshold: m["threshold"].(float64)}
		if v, ok := m["includeAA"]; ok {
			o.IncludeAA = v.(bool)
		}
		if v, ok := m["checkerboard"]; ok {
			o.White = !v.(bool)
		}
		return o
	}
	var items []item
	n := 0
	for round := range 500 {
		w, h := 3+r.IntN(70), 3+r.IntN(50)
		if round%10 == 0 {
			w, h = 1+r.IntN(3), 1+r.IntN(3)
		}
		s := newScene(r, w, h, round%3 != 0)
		s2 := s.perturb(r)
		ma, mb := s.render(), s2.render()
		var pal color.Palette
		for range 256 {
			pal = append(pal, color.NRGBA{uint8(r.IntN(256)), uint8(r.IntN(256)), uint8(r.IntN(256)), []uint8{255, 255, 0, uint8(r.IntN(256))}[r.IntN(4)]})
		}
		layout := layouts[round%len(layouts)]
		il := round%4 == 1
		a, b := encodeAs(ma, layout, il, pal), encodeAs(mb, layout, il, pal)
		pa := filepath.Join(dir, fmt.Sprintf("%03d-%s-a.png", n, layout))
		pb := filepath.Join(dir, fmt.Sprintf("%03d-%s-b.png", n, layout))
		os.WriteFile(pa, a, 0o644)
		os.WriteFile(pb, b, 0o644)
		items = append(items, item{pa, pb, opts})
		n++
	}
	// large recolour pairs from the real screenshots
	base, _ := os.ReadFile(filepath.Join(vectorsDir, "images/1280x800/small-a.png"))
	img, _ := png.Decode(bytes.NewReader(base))
	rgba := img.(*image.RGBA)
	for i, blk := range []image.Rectangle{image.Rect(100, 100, 900, 500), image.Rect(0, 0, 1280, 300), image.Rect(300, 50, 700, 780)} {
		c := image.NewRGBA(rgba.Rect)
		copy(c.Pix, rgba.Pix)
		for y := blk.Min.Y; y < blk.Max.Y; y++ {
			for x := blk.Min.X; x < blk.Max.X; x++ {
				o := c.PixOffset(x, y)
				switch i {
				case 0:
					c.Pix[o], c.Pix[o+1], c.Pix[o+2] = 255-c.Pix[o], 255-c.Pix[o+1], 255-c.Pix[o+2]
				case 1:
					c.Pix[o], c.Pix[o+1], c.Pix[o+2] = c.Pix[o+2], c.Pix[o], c.Pix[o+1]
				case 2:
					c.Pix[o] = uint8(min(255, int(c.Pix[o])+40))
				}
			}
		}
		var buf bytes.Buffer
		png.Encode(&buf, c)
		pb := filepath.Join(dir, fmt.Sprintf("big-%d-b.png", i))
		os.WriteFile(pb, buf.Bytes(), 0o644)
		abs, _ := filepath.Abs(filepath.Join(vectorsDir, "images/1280x800/small-a.png"))
		items = append(items, item{abs, pb, opts})
	}
	list, _ := json.Marshal(items)
	os.WriteFile(filepath.Join(dir, "list.json"), list, 0o644)
	cmd := exec.Command("node", "/tmp/pmnode/count.mjs", filepath.Join(dir, "list.json"))
	cmd.Dir = "/tmp/pmnode"
	outp, err := cmd.Output()
	if err != nil {
		t.Fatalf("node: %v %s", err, outp)
	}
	var got []struct {
		HashA, HashB string
		Counts       []int
	}
	if err := json.Unmarshal(outp, &got); err != nil {
		t.Fatal(err)
	}
	bad := 0
	for i, it := range items {
		da, _ := os.ReadFile(it.A)
		db, _ := os.ReadFile(it.B)
		ia, err := Decode(it.A, da)
		if err != nil {
			t.Errorf("%s: %v", it.A, err)
			continue
		}
		ib, err := Decode(it.B, db)
		if err != nil {
			t.Errorf("%s: %v", it.B, err)
			continue
		}
		ha, hb := sha256.Sum256(ia.Pix), sha256.Sum256(ib.Pix)
		if hex.EncodeToString(ha[:]) != got[i].HashA || hex.EncodeToString(hb[:]) != got[i].HashB {
			t.Errorf("%s: decoded pixels differ from pngjs", it.A)
			bad++
			continue
		}
		for j, o := range it.Opts {
			res, err := Compare(ia, ib, toOpts(o))
			if err != nil {
				t.Fatal(err)
			}
			res2, err := CompareBytes(it.A, da, it.B, db, toOpts(o))
			if err != nil {
				t.Fatal(err)
			}
			if res2.MismatchPixels != got[i].Counts[j] || !reflect.DeepEqual(res, res2) {
				t.Errorf("%s %v: CompareBytes %+v vs Compare %+v", it.A, o, res2, res)
				bad++
			}
			if res.MismatchPixels != got[i].Counts[j] {
				t.Errorf("%s %v: got %d, pixelmatch %d", it.A, o, res.MismatchPixels, got[i].Counts[j])
				bad++
			}
		}
		t.Logf("%s: %v", filepath.Base(it.A), got[i].Counts)
	}
	t.Logf("%d items, %d bad", len(items), bad)
}
