package snapshot

import (
	"bytes"
	"image"
	"image/color"
	"image/png"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// maxFuzzPixels bounds the images FuzzDecode decodes, as image/png's own
// fuzz test does: a mutated header can claim any size, and a 1-bit image
// of a million pixels inflates from a hundred bytes. Every layout shows
// its rows, filters and passes at 256x256; a million pixels only made each
// run (two decodes, Check, and the reference read through At) slow enough
// that minimizing one new input took the fuzzer's whole minute.
const maxFuzzPixels = 1 << 16

// maxSeedBytes leaves the screenshots of testdata (40 to 200 KB) out of the
// seeds. The fuzzer minimizes every input that finds new coverage, and on
// a file that large one minimization takes its whole budget (a minute) to
// find what the small files and the generated layouts find at once.
const maxSeedBytes = 16 << 10

// FuzzDecode is a differential test of Decode against image/png: for every
// input both refuse, or both give the same pixels, image/png's read through
// At and converted by the rules Decode documents (fuzzWant). Check agrees
// with Decode on every input: the same verdict and the same size.
func FuzzDecode(f *testing.F) {
	for _, data := range fuzzSeeds(f) {
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if h, err := readHeader(data); err == nil && uint64(h.width)*uint64(h.height) > maxFuzzPixels {
			return
		}
		got, err := Decode("fuzz.png", data)
		ref, rerr := png.Decode(bytes.NewReader(data))
		switch {
		case err != nil && rerr != nil:
		case err != nil:
			t.Fatalf("Decode refused what image/png decodes: %v", err)
		case rerr != nil:
			t.Fatalf("Decode accepted what image/png refuses (%v)", rerr)
		default:
			want := fuzzWant(t, ref, data[25])
			if got.Width != ref.Bounds().Dx() || got.Height != ref.Bounds().Dy() {
				t.Fatalf("size: got %dx%d, want %v", got.Width, got.Height, ref.Bounds().Size())
			}
			if i := firstDiff(got.Pix, want); i >= 0 {
				p := i / 4
				t.Fatalf("pixel (%d, %d) of %T: got %v, want %v", p%got.Width, p/got.Width, ref, got.Pix[4*p:4*p+4], want[4*p:4*p+4])
			}
		}
		size, cerr := Check("fuzz.png", data)
		switch {
		case (cerr == nil) != (err == nil):
			t.Fatalf("Check: got %v, Decode: %v", cerr, err)
		case err == nil && size != got.Size():
			t.Fatalf("Check: got size %v, want %v", size, got.Size())
		}
	})
}

// fuzzWant converts what image/png decoded to the straight RGBA Decode
// promises, pixel by pixel through At: 16-bit samples rounded to 8 bits as
// pngjs rounds them, palette entries as they are, and a pixel a tRNS colour
// key made transparent (colour types without alpha) as 0,0,0,0. colorType
// is the IHDR byte.
func fuzzWant(t *testing.T, m image.Image, colorType uint8) []uint8 {
	round := func(v uint16) uint8 { return uint8((510*uint32(v) + 65535) / 131070) }
	b := m.Bounds()
	out := make([]uint8, 0, 4*b.Dx()*b.Dy())
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			var c color.NRGBA
			switch v := m.At(x, y).(type) {
			case color.NRGBA:
				c = v
			case color.NRGBA64:
				c = color.NRGBA{round(v.R), round(v.G), round(v.B), round(v.A)}
			case color.Gray:
				c = color.NRGBA{v.Y, v.Y, v.Y, 0xff}
			case color.Gray16:
				g := round(v.Y)
				c = color.NRGBA{g, g, g, 0xff}
			case color.RGBA:
				if v.A != 0xff {
					t.Fatalf("image/png returned a translucent premultiplied %v", v)
				}
				c = color.NRGBA{v.R, v.G, v.B, 0xff}
			case color.RGBA64:
				if v.A != 0xffff {
					t.Fatalf("image/png returned a translucent premultiplied %v", v)
				}
				c = color.NRGBA{round(v.R), round(v.G), round(v.B), 0xff}
			default:
				t.Fatalf("image/png returned a %T pixel", v)
			}
			if c.A == 0 && (colorType == ctGray || colorType == ctRGB) {
				c = color.NRGBA{}
			}
			out = append(out, c.R, c.G, c.B, c.A)
		}
	}
	return out
}

func firstDiff(a, b []uint8) int {
	if len(a) != len(b) {
		return 0
	}
	for i := range a {
		if a[i] != b[i] {
			return i
		}
	}
	return -1
}

// fuzzSeeds are the PNGs of the repository's testdata up to maxSeedBytes
// and a small image in each layout: every colour type at every bit depth,
// palettes with tRNS alpha, colour keys, and Adam7 interlacing.
func fuzzSeeds(f *testing.F) [][]byte {
	var seeds [][]byte
	err := filepath.WalkDir("../testdata", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".png") {
			return err
		}
		data, err := os.ReadFile(p)
		if len(data) <= maxSeedBytes {
			seeds = append(seeds, data)
		}
		return err
	})
	if err != nil {
		f.Fatal(err)
	}
	gradient := func(channels int, depth uint8) func(x, y int) []uint16 {
		levels := 1 << depth
		return func(x, y int) []uint16 {
			s := make([]uint16, channels)
			for c := range s {
				// Spread over the whole range, so 16-bit samples round.
				s[c] = uint16((x*37 + y*11 + c*97) * (levels/64 + 1) % levels)
			}
			return s
		}
	}
	for _, ct := range []uint8{ctGray, ctRGB, ctGrayAlpha, ctRGBA} {
		depths := []uint8{8, 16}
		if ct == ctGray {
			depths = []uint8{1, 2, 4, 8, 16}
		}
		for _, d := range depths {
			for _, interlace := range []bool{false, true} {
				seeds = append(seeds, rawPNG{width: 9, height: 7, depth: d, colorType: ct, interlace: interlace, sample: gradient(channels(ct), d)}.encode())
			}
		}
	}
	// Colour keys: the key colour becomes 0,0,0,0.
	seeds = append(seeds,
		rawPNG{width: 5, height: 4, depth: 8, colorType: ctGray, trns: []byte{0, 37}, sample: gradient(1, 8)}.encode(),
		rawPNG{width: 5, height: 4, depth: 16, colorType: ctRGB, trns: []byte{0, 0, 0, 11, 0, 97}, sample: func(x, y int) []uint16 {
			return []uint16{0, uint16(11 * (x % 2)), 97}
		}}.encode(),
	)
	palette := []color.NRGBA{{255, 0, 0, 255}, {0, 255, 0, 128}, {0, 0, 255, 0}, {9, 9, 9, 255}}
	for _, d := range []uint8{1, 2, 4, 8} {
		for _, interlace := range []bool{false, true} {
			seeds = append(seeds, rawPNG{width: 10, height: 6, depth: d, colorType: ctPaletted, interlace: interlace, palette: palette[:min(len(palette), 1<<d)],
				sample: func(x, y int) []uint16 { return []uint16{uint16((x + y) % min(len(palette), 1<<d))} }}.encode())
		}
	}
	// What image/png writes: a paletted and a 16-bit gray file.
	return append(seeds, palettedPNG(), gray16PNG())
}

// FuzzFullPageKey: no full-page key equals a viewport or crop key, for any
// two valid names and any sizes.
func FuzzFullPageKey(f *testing.F) {
	for _, a := range keyCases {
		for _, b := range keyCases[:3] {
			f.Add(a.name, a.w, a.h, b.name, b.w, b.h)
		}
	}
	f.Fuzz(func(t *testing.T, name string, w, h int, other string, ow, oh int) {
		full, err := FullPageKey(name, w, h)
		if err != nil || ValidateName(other) != nil {
			return
		}
		for _, k := range otherKeys(t, other, ow, oh) {
			if full == k {
				t.Fatalf("FullPageKey(%q, %d, %d) = %q, also the key of a viewport or crop baseline of %q", name, w, h, full, other)
			}
		}
	})
}
