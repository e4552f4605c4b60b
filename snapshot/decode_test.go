package snapshot

import (
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"errors"
	"image"
	"image/color"
	"image/png"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"sync"
	"testing"
)

// vectorPNG returns the bytes of the vector image rel, a slash path
// under the vectors' images directory.
func vectorPNG(t testing.TB, rel string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(vectorsDir, "images", filepath.FromSlash(rel)))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// screenshotPNG returns the bytes of the vectors' 1280x800 screenshot.
func screenshotPNG(t testing.TB) []byte { return vectorPNG(t, "1280x800/small-a.png") }

// withBadIDAT flips a byte of the first IDAT chunk's data, keeping its CRC.
func withBadIDAT(data []byte) []byte {
	out := bytes.Clone(data)
	i := bytes.Index(out, []byte("IDAT"))
	out[i+4+10] ^= 0xff
	return out
}

// withFilterType returns a small RGB PNG whose first row has filter type ft.
func withFilterType(ft uint8) []byte {
	p := rawPNG{width: 4, height: 2, depth: 8, colorType: ctRGB, sample: func(x, y int) []uint16 { return []uint16{1, 2, 3} }}
	return rawWithFilter(p, ft)
}

// rawWithFilter encodes p with filter byte ft in front of its first row
// (the row bytes are written unfiltered, so ft changes the pixels).
func rawWithFilter(p rawPNG, ft uint8) []byte {
	data := p.encode()
	var raw bytes.Buffer
	for y := 0; y < p.height; y++ {
		if y == 0 {
			raw.WriteByte(ft)
		} else {
			raw.WriteByte(0)
		}
		for x := 0; x < p.width; x++ {
			for _, s := range p.sample(x, y) {
				raw.WriteByte(uint8(s))
			}
		}
	}
	return replaceIDAT(data, zlibBytes(raw.Bytes()))
}

// TestDecodeInvalid maps bad files (written as testdata-style invalid-*
// files into a temp dir) to their errors. Each error is a *DecodeError that
// names the file and wraps the sentinel.
func TestDecodeInvalid(t *testing.T) {
	shot := screenshotPNG(t)
	cases := []struct {
		file string
		data []byte
		want error
		text string // a part of the message
	}{
		{"invalid-empty.png", nil, ErrNotPNG, "not a PNG file"},
		{"invalid-text.png", []byte("hello, this is not an image\n"), ErrNotPNG, "not a PNG file"},
		{"invalid-html.png", []byte("<!DOCTYPE html><html><body>404</body></html>"), ErrNotPNG, "not a PNG file"},
		{"invalid-jpeg.png", []byte{0xff, 0xd8, 0xff, 0xe0, 0, 0x10, 'J', 'F', 'I', 'F', 0}, ErrNotPNG, "it is a JPEG image"},
		{"invalid-signature-only.png", shot[:8], ErrTruncated, "truncated"},
		{"invalid-half-signature.png", shot[:5], ErrTruncated, "truncated"},
		{"invalid-cut-in-ihdr.png", shot[:20], ErrTruncated, "truncated"},
		{"invalid-cut-in-idat.png", shot[:len(shot)/2], ErrTruncated, "truncated"},
		{"invalid-no-iend.png", shot[:len(shot)-12], ErrTruncated, "truncated"},
		{"invalid-0x0.png", headerOnly(0, 0, 8, ctRGB), ErrEmpty, "0x0"},
		{"invalid-0x10.png", headerOnly(0, 10, 8, ctRGBA), ErrEmpty, "0x10"},
		{"invalid-huge.png", headerOnly(100000, 100000, 8, ctRGB), ErrTooLarge, "100000x100000"},
		{"invalid-huge-narrow.png", headerOnly(1, 1<<27, 8, ctRGB), ErrTooLarge, "64 megapixels"},
		{"invalid-idat-crc.png", withBadIDAT(shot), ErrCorrupt, "checksum"},
		{"invalid-ihdr-first.png", textFirst(), ErrCorrupt, "not IHDR"},
		{"invalid-filter.png", withFilterType(9), ErrCorrupt, "filter"},
		{"invalid-zlib.png", replaceIDAT(headerAndIDAT(), []byte("\x78\x9c not deflate data")), ErrCorrupt, "flate"},
		{"invalid-zlib-header.png", replaceIDAT(headerAndIDAT(), []byte("\x00\x00 not zlib")), ErrCorrupt, "zlib"},
		{"invalid-zlib-dictionary.png", replaceIDAT(headerAndIDAT(), []byte("\x78\xbb\x00\x00\x00\x00")), ErrCorrupt, "dictionary"},
		{"invalid-idat-empty.png", replaceIDAT(headerAndIDAT(), nil), ErrTruncated, "truncated"},
		{"invalid-idat-too-short.png", replaceIDAT(headerAndIDAT(), zlibBytes([]byte{0, 9, 9, 9})), ErrTruncated, "truncated"},
		// Layouts decoded by image/png: its errors map to the same sentinels.
		{"invalid-16bit-cut.png", gray16PNG()[:len(gray16PNG())-30], ErrTruncated, "truncated"},
		{"invalid-paletted-crc.png", withBadIDAT(palettedPNG()), ErrCorrupt, "checksum"},
		{"invalid-interlaced-filter.png", interlacedBadFilter(), ErrCorrupt, "filter"},
		{"invalid-idat-too-long.png", replaceIDAT(headerAndIDAT(), zlibBytes(bytes.Repeat([]byte{0, 9, 9, 9, 9, 9, 9}, 3))), ErrCorrupt, "too much"},
	}
	dir := t.TempDir()
	for _, c := range cases {
		t.Run(c.file, func(t *testing.T) {
			path := filepath.Join(dir, c.file)
			if err := os.WriteFile(path, c.data, 0o644); err != nil {
				t.Fatal(err)
			}
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			for _, fn := range []struct {
				name string
				run  func() error
			}{
				{"Decode", func() error { _, err := Decode(path, data); return err }},
				{"Check", func() error { _, err := Check(path, data); return err }},
			} {
				err := fn.run()
				if !errors.Is(err, c.want) {
					t.Fatalf("%s: got error %v, want %v", fn.name, err, c.want)
				}
				var de *DecodeError
				if !errors.As(err, &de) || de.Name != path {
					t.Fatalf("%s: got %T %v, want a *DecodeError naming %s", fn.name, err, err, path)
				}
				msg := err.Error()
				if !strings.HasPrefix(msg, "snapshot: decode "+path+": ") || !strings.Contains(msg, c.text) {
					t.Fatalf("%s: got message %q, want it to start with the file and mention %q", fn.name, msg, c.text)
				}
				// A message never quotes the file: it may be any file
				// (a caller naming /etc/passwd as a baseline).
				if !bytes.HasPrefix(c.data, pngSignature) && len(c.data) >= 4 && strings.Contains(msg, string(c.data[:4])) {
					t.Fatalf("%s: got message %q, which quotes the file's bytes %q", fn.name, msg, c.data[:4])
				}
			}
		})
	}
}

// TestDecodeHugeDoesNotAllocate proves the size cap acts before decoding.
func TestDecodeHugeDoesNotAllocate(t *testing.T) {
	data := headerOnly(100000, 100000, 8, ctRGBA)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err := Decode("huge.png", data)
	runtime.ReadMemStats(&after)
	if !errors.Is(err, ErrTooLarge) {
		t.Fatalf("got %v, want ErrTooLarge", err)
	}
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 1<<20 {
		t.Fatalf("refusing a huge image allocated %d bytes, want under 1 MiB", grew)
	}
}

// gray16PNG is a small 16-bit gray PNG made by image/png.
func gray16PNG() []byte {
	m := image.NewGray16(image.Rect(0, 0, 16, 16))
	for i := range m.Pix {
		m.Pix[i] = uint8(i * 7)
	}
	var b bytes.Buffer
	png.Encode(&b, m)
	return b.Bytes()
}

// palettedPNG is a small paletted PNG made by image/png.
func palettedPNG() []byte {
	m := image.NewPaletted(image.Rect(0, 0, 16, 16), color.Palette{color.White, color.Black})
	for i := range m.Pix {
		m.Pix[i] = uint8(i % 2)
	}
	var b bytes.Buffer
	png.Encode(&b, m)
	return b.Bytes()
}

// interlacedBadFilter is an interlaced RGB PNG with a filter byte of 7.
func interlacedBadFilter() []byte {
	p := rawPNG{width: 2, height: 2, depth: 8, colorType: ctRGB, interlace: true, sample: func(x, y int) []uint16 { return []uint16{1, 2, 3} }}
	// Pass 1 holds pixel (0,0) only: one row of 1 + 3 bytes. Passes 2 to 5
	// are empty for a 2x2 image; pass 6 holds (1,0), pass 7 row 1.
	raw := []byte{7, 1, 2, 3, 0, 1, 2, 3, 0, 1, 2, 3, 1, 2, 3}
	return replaceIDAT(p.encode(), zlibBytes(raw))
}

// textFirst is a PNG whose first chunk is tEXt instead of IHDR.
func textFirst() []byte {
	var b bytes.Buffer
	b.Write(pngSignature)
	writeChunk(&b, "tEXt", []byte("Title\x00not IHDR"))
	writeChunk(&b, "IEND", nil)
	return b.Bytes()
}

func headerAndIDAT() []byte {
	return rawPNG{width: 2, height: 2, depth: 8, colorType: ctRGB, sample: func(x, y int) []uint16 { return []uint16{9, 9, 9} }}.encode()
}

func zlibBytes(raw []byte) []byte {
	var b bytes.Buffer
	zw := zlib.NewWriter(&b)
	zw.Write(raw)
	zw.Close()
	return b.Bytes()
}

// replaceIDAT swaps the data of the (single) IDAT chunk, fixing its CRC.
func replaceIDAT(pngData, idat []byte) []byte {
	i := bytes.Index(pngData, []byte("IDAT")) - 4
	n := int(binary.BigEndian.Uint32(pngData[i:]))
	var out bytes.Buffer
	out.Write(pngData[:i])
	writeChunk(&out, "IDAT", idat)
	out.Write(pngData[i+12+n:])
	return out.Bytes()
}

// pix builds the expected straight RGBA bytes from a list of colours.
func pix(cs ...color.NRGBA) []uint8 {
	var b []uint8
	for _, c := range cs {
		b = append(b, c.R, c.G, c.B, c.A)
	}
	return b
}

// TestDecodeFormats decodes every PNG layout to the straight RGBA bytes
// pngjs (pixelmatch's decoder) produces: 16-bit samples rounded to 8 bits,
// palette entries with their tRNS alpha, a tRNS colour key as 0,0,0,0, low
// bit depths scaled, and translucent colour never premultiplied.
func TestDecodeFormats(t *testing.T) {
	// The fastest zlib level: the pairs only need to be valid PNGs that
	// share their unchanged rows, and a 1280x800 encode at the default
	// level takes seconds under -race.
	enc := png.Encoder{CompressionLevel: png.BestSpeed}
	encode := func(m image.Image) []byte {
		var b bytes.Buffer
		if err := enc.Encode(&b, m); err != nil {
			t.Fatal(err)
		}
		return b.Bytes()
	}
	nrgba64 := image.NewNRGBA64(image.Rect(0, 0, 3, 1))
	nrgba64.SetNRGBA64(0, 0, color.NRGBA64{0xffff, 0x8000, 0x0080, 0x7f7f})
	nrgba64.SetNRGBA64(1, 0, color.NRGBA64{0x1234, 0x0000, 0xff7f, 0x0000})
	nrgba64.SetNRGBA64(2, 0, color.NRGBA64{0x00ff, 0x0101, 0x807f, 0xffff})
	rgba64 := image.NewRGBA64(image.Rect(0, 0, 2, 1))
	rgba64.SetRGBA64(0, 0, color.RGBA64{0x8080, 0x7f80, 0x0000, 0xffff})
	rgba64.SetRGBA64(1, 0, color.RGBA64{0xffff, 0x0181, 0x0180, 0xffff})
	gray16 := image.NewGray16(image.Rect(0, 0, 2, 1))
	gray16.SetGray16(0, 0, color.Gray16{0x8080})
	gray16.SetGray16(1, 0, color.Gray16{0x0080})
	gray := image.NewGray(image.Rect(0, 0, 2, 1))
	gray.SetGray(0, 0, color.Gray{7})
	gray.SetGray(1, 0, color.Gray{200})
	pal := image.NewPaletted(image.Rect(0, 0, 3, 1), color.Palette{
		color.NRGBA{10, 20, 30, 255}, color.NRGBA{200, 100, 50, 128}, color.NRGBA{90, 80, 70, 0},
	})
	pal.Pix = []uint8{2, 1, 0}
	translucent := image.NewNRGBA(image.Rect(0, 0, 2, 1))
	translucent.Pix = []uint8{200, 100, 50, 1, 17, 34, 51, 0}

	cases := []struct {
		name string
		data []byte
		want []uint8
		w, h int
	}{
		{"rgba16 via image/png", encode(nrgba64), pix(
			color.NRGBA{255, 128, 0, 127}, color.NRGBA{18, 0, 255, 0}, color.NRGBA{1, 1, 128, 255}), 3, 1},
		{"rgb16 via image/png", encode(rgba64), pix(
			color.NRGBA{128, 127, 0, 255}, color.NRGBA{255, 1, 1, 255}), 2, 1},
		{"gray16 via image/png", encode(gray16), pix(
			color.NRGBA{128, 128, 128, 255}, color.NRGBA{0, 0, 0, 255}), 2, 1},
		{"gray8 via image/png", encode(gray), pix(
			color.NRGBA{7, 7, 7, 255}, color.NRGBA{200, 200, 200, 255}), 2, 1},
		{"paletted with tRNS via image/png", encode(pal), pix(
			color.NRGBA{90, 80, 70, 0}, color.NRGBA{200, 100, 50, 128}, color.NRGBA{10, 20, 30, 255}), 3, 1},
		{"rgba8 translucent keeps straight colour", encode(translucent), pix(
			color.NRGBA{200, 100, 50, 1}, color.NRGBA{17, 34, 51, 0}), 2, 1},
		{"gray+alpha 8", rawPNG{width: 2, height: 1, depth: 8, colorType: ctGrayAlpha,
			sample: func(x, y int) []uint16 { return [][]uint16{{90, 3}, {255, 0}}[x] }}.encode(), pix(
			color.NRGBA{90, 90, 90, 3}, color.NRGBA{255, 255, 255, 0}), 2, 1},
		{"gray+alpha 16", rawPNG{width: 1, height: 1, depth: 16, colorType: ctGrayAlpha,
			sample: func(x, y int) []uint16 { return []uint16{0x7f80, 0x0081} }}.encode(), pix(
			color.NRGBA{127, 127, 127, 1}), 1, 1},
		{"gray 1-bit", rawPNG{width: 3, height: 1, depth: 1, colorType: ctGray,
			sample: func(x, y int) []uint16 { return []uint16{uint16(x % 2)} }}.encode(), pix(
			color.NRGBA{0, 0, 0, 255}, color.NRGBA{255, 255, 255, 255}, color.NRGBA{0, 0, 0, 255}), 3, 1},
		{"gray 2-bit", rawPNG{width: 4, height: 1, depth: 2, colorType: ctGray,
			sample: func(x, y int) []uint16 { return []uint16{uint16(x)} }}.encode(), pix(
			color.NRGBA{0, 0, 0, 255}, color.NRGBA{85, 85, 85, 255}, color.NRGBA{170, 170, 170, 255}, color.NRGBA{255, 255, 255, 255}), 4, 1},
		{"gray 4-bit with colour key", rawPNG{width: 2, height: 1, depth: 4, colorType: ctGray, trns: []byte{0, 3},
			sample: func(x, y int) []uint16 { return []uint16{uint16(3 + x)} }}.encode(), pix(
			color.NRGBA{0, 0, 0, 0}, color.NRGBA{68, 68, 68, 255}), 2, 1},
		{"rgb8 with colour key", rawPNG{width: 2, height: 1, depth: 8, colorType: ctRGB, trns: []byte{0, 1, 0, 2, 0, 3},
			sample: func(x, y int) []uint16 { return [][]uint16{{1, 2, 3}, {1, 2, 4}}[x] }}.encode(), pix(
			color.NRGBA{0, 0, 0, 0}, color.NRGBA{1, 2, 4, 255}), 2, 1},
		{"rgb16 with colour key", rawPNG{width: 2, height: 1, depth: 16, colorType: ctRGB, trns: []byte{1, 0, 2, 0, 3, 0},
			sample: func(x, y int) []uint16 { return [][]uint16{{0x100, 0x200, 0x300}, {0x100, 0x200, 0x301}}[x] }}.encode(), pix(
			color.NRGBA{0, 0, 0, 0}, color.NRGBA{1, 2, 3, 255}), 2, 1},
		{"paletted 2-bit", rawPNG{width: 3, height: 1, depth: 2, colorType: ctPaletted,
			palette: []color.NRGBA{{1, 2, 3, 255}, {4, 5, 6, 7}, {8, 9, 10, 255}},
			sample:  func(x, y int) []uint16 { return []uint16{uint16(2 - x)} }}.encode(), pix(
			color.NRGBA{8, 9, 10, 255}, color.NRGBA{4, 5, 6, 7}, color.NRGBA{1, 2, 3, 255}), 3, 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m, err := Decode(c.name, c.data)
			if err != nil {
				t.Fatal(err)
			}
			if m.Width != c.w || m.Height != c.h {
				t.Fatalf("got %dx%d, want %dx%d", m.Width, m.Height, c.w, c.h)
			}
			if !bytes.Equal(m.Pix, c.want) {
				t.Fatalf("got pixels %v, want %v", m.Pix, c.want)
			}
		})
	}
}

// TestDecodeInterlaced decodes Adam7 files of every size class to the same
// pixels as their plain twins.
func TestDecodeInterlaced(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, ct := range []uint8{ctRGB, ctRGBA, ctGray, ctGrayAlpha} {
		for _, size := range [][2]int{{1, 1}, {3, 5}, {9, 9}, {17, 4}} {
			vals := make([]uint16, size[0]*size[1]*channels(ct))
			for i := range vals {
				vals[i] = uint16(r.IntN(256))
			}
			p := rawPNG{width: size[0], height: size[1], depth: 8, colorType: ct, sample: func(x, y int) []uint16 {
				n := channels(ct)
				i := (y*size[0] + x) * n
				return vals[i : i+n]
			}}
			plain, err := Decode("plain", p.encode())
			if err != nil {
				t.Fatal(err)
			}
			p.interlace = true
			inter, err := Decode("interlaced", p.encode())
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(plain.Pix, inter.Pix) {
				t.Fatalf("colour type %d %v: interlaced pixels differ from plain ones", ct, size)
			}
		}
	}
}

// TestDecodeFastPathMatchesImagePNG checks the screenshot fast path against
// image/png on images whose rows use every filter type.
func TestDecodeFastPathMatchesImagePNG(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for i := range 12 {
		w, h := 1+r.IntN(40), 1+r.IntN(30)
		m := image.NewNRGBA(image.Rect(0, 0, w, h))
		for j := range m.Pix {
			// Smooth areas, noise and flat runs make the encoder pick
			// different filters per row.
			switch (j / 4 / w / 3) % 3 {
			case 0:
				m.Pix[j] = uint8(j/4%w*5 + j/4/w*3)
			case 1:
				m.Pix[j] = uint8(r.IntN(256))
			default:
				m.Pix[j] = 77
			}
			if i%2 == 0 && j%4 == 3 {
				m.Pix[j] = 255 // opaque: encoded as RGB
			}
		}
		var b bytes.Buffer
		if err := png.Encode(&b, m); err != nil {
			t.Fatal(err)
		}
		data := b.Bytes()
		h0, err := readHeader(data)
		if err != nil {
			t.Fatal(err)
		}
		fast, handled, err := decodeFast(data, h0, false)
		if !handled || err != nil {
			t.Fatalf("image %d: fast path handled=%v err=%v", i, handled, err)
		}
		ref, err := png.Decode(bytes.NewReader(data))
		if err != nil {
			t.Fatal(err)
		}
		if want := fromDecoded(ref, h0); !bytes.Equal(fast.Pix, want.Pix) {
			t.Fatalf("image %d (%dx%d): fast path differs from image/png", i, w, h)
		}
		if _, handled, err := decodeFast(data, h0, true); !handled || err != nil {
			t.Fatalf("image %d: check-only handled=%v err=%v", i, handled, err)
		}
	}
	// Every filter type on a row of its own, including the first row.
	for ft := range uint8(5) {
		p := rawPNG{width: 5, height: 3, depth: 8, colorType: ctRGBA, sample: func(x, y int) []uint16 {
			return []uint16{uint16(x * 40), uint16(y * 90), uint16(x * y * 20), 200}
		}}
		data := rawWithFilter(p, ft)
		got, err := Decode("filter", data)
		if ft != ftNone {
			// The row's bytes are raw values, so a real filter changes
			// them; image/png is the referee.
			ref, rerr := png.Decode(bytes.NewReader(data))
			if rerr != nil || err != nil {
				t.Fatalf("filter %d: %v / %v", ft, err, rerr)
			}
			h0, _ := readHeader(data)
			if want := fromDecoded(ref, h0); !bytes.Equal(got.Pix, want.Pix) {
				t.Fatalf("filter %d: got %v, want %v", ft, got.Pix, want.Pix)
			}
		} else if err != nil {
			t.Fatal(err)
		}
	}
}

// TestCheck validates without decoding: the size of a good file, the same
// errors as Decode for bad ones.
func TestCheck(t *testing.T) {
	size, err := Check("shot.png", screenshotPNG(t))
	if err != nil || size != image.Pt(1280, 800) {
		t.Fatalf("got %v, %v, want 1280x800", size, err)
	}
	gray := rawPNG{width: 3, height: 2, depth: 4, colorType: ctGray, sample: func(x, y int) []uint16 { return []uint16{5} }}.encode()
	if size, err := Check("gray.png", gray); err != nil || size != image.Pt(3, 2) {
		t.Fatalf("gray: got %v, %v, want 3x2", size, err)
	}
}

// TestDecodePairMatchesDecode: the joint decoder of CompareBytes gives
// exactly the pixels of image/png (converted as Decode converts them), whether it splits the rows or not, shares rows
// or not, and whatever the two layouts are.
func TestDecodePairMatchesDecode(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(7, 8))
	// The fastest zlib level: the pairs only need to be valid PNGs that
	// share their unchanged rows, and a 1280x800 encode at the default
	// level takes seconds under -race.
	enc := png.Encoder{CompressionLevel: png.BestSpeed}
	encode := func(m image.Image) []byte {
		var b bytes.Buffer
		if err := enc.Encode(&b, m); err != nil {
			t.Fatal(err)
		}
		return b.Bytes()
	}
	// page returns a 120x90 picture with flat areas, gradients and noise,
	// opaque or translucent; seed picks the content.
	page := func(seed int, translucent bool) *image.NRGBA {
		m := image.NewNRGBA(image.Rect(0, 0, 120, 90))
		rr := rand.New(rand.NewPCG(uint64(seed), 1))
		for y := range 90 {
			for x := range 120 {
				c := color.NRGBA{uint8(x * 2), uint8(y * 3), 200, 255}
				switch {
				case y > 30 && y < 50 && x > 20:
					c = color.NRGBA{uint8(rr.IntN(256)), uint8(rr.IntN(256)), uint8(rr.IntN(256)), 255}
				case y >= 60:
					c = color.NRGBA{240, 240, 240, 255}
				}
				if translucent {
					c.A = uint8(x + y)
				}
				m.SetNRGBA(x, y, c)
			}
		}
		return m
	}
	shot := screenshotPNG(t)
	base := decodeVector(t, "images/1280x800/small-a.png", shot)
	// The phone-sized screenshot; its error cases below decode it up to
	// the error.
	phone := vectorPNG(t, "390x844/aa-a.png")
	pairs := []struct {
		name string
		a, b []byte
	}{
		{"screenshots, one word changed", shot, vectorPNG(t, "1280x800/small-b.png")},
		{"screenshots, h1 moved", phone, vectorPNG(t, "390x844/aa-b.png")},
		{"same content, different encoders", shot, encode(base.NRGBA())},
		{"rgb pages", encode(page(1, false)), encode(page(2, false))},
		{"rgba pages", encode(page(1, true)), encode(page(2, true))},
		{"rgb vs rgba", encode(page(1, false)), encode(page(1, true))},
		{"equal rgba pages", encode(page(3, true)), encode(page(3, true))},
		{"small", encode(page(1, false).SubImage(image.Rect(0, 0, 30, 20))), encode(page(2, false).SubImage(image.Rect(0, 0, 30, 20)))},
	}
	// A 320x200 crop of the screenshot against itself with a few pixels
	// changed, both encoded by image/png: all other rows are shared, so the
	// partial decode reads only a few rows. (Which rows are decoded does not
	// depend on the size; the full-size screenshots above cover that.)
	crop := base.NRGBA().SubImage(image.Rect(0, 0, 320, 200)).(*image.NRGBA)
	edit := func(points ...[2]int) []byte {
		c := image.NewNRGBA(image.Rect(0, 0, 320, 200))
		for y := range 200 {
			copy(c.Pix[y*c.Stride:(y+1)*c.Stride], crop.Pix[y*crop.Stride:])
		}
		for _, pt := range points {
			c.SetNRGBA(pt[0], pt[1], color.NRGBA{255, 0, 255, 255})
		}
		return encode(c)
	}
	plain := edit()
	for _, e := range []struct {
		name   string
		points [][2]int
	}{
		{"first row changed", [][2]int{{0, 0}, {160, 0}}},
		{"last row changed", [][2]int{{319, 199}, {3, 199}}},
		{"one pixel", [][2]int{{175, 100}}},
		{"far apart rows", [][2]int{{10, 25}, {300, 162}, {150, 163}}},
	} {
		pairs = append(pairs, struct {
			name string
			a, b []byte
		}{e.name, plain, edit(e.points...)})
	}
	// A pair with no restart row at all: every row filtered Up or Paeth.
	noRestart := rawPNG{width: 70, height: 80, depth: 8, colorType: ctRGB, sample: func(x, y int) []uint16 {
		return []uint16{uint16(r.IntN(256)), uint16(x), uint16(y)}
	}}
	pairs = append(pairs, struct {
		name string
		a, b []byte
	}{"no row to split at", withFilters(noRestart, ftUp), withFilters(noRestart, ftPaeth)})

	// The screenshot is in two pairs; image/png decodes it once.
	var refs refDecodes
	for _, p := range pairs {
		t.Run(p.name, func(t *testing.T) {
			t.Parallel()
			// The references: image/png's pixels and Compare's answers on
			// them, computed once for both decode paths.
			wa, wb := refs.decode(t, p.a), refs.decode(t, p.b)
			optionSets := []Options{DefaultOptions(), {Threshold: 0, IncludeAA: true}}
			want := make([]Result, len(optionSets))
			for i, opts := range optionSets {
				var err error
				if want[i], err = Compare(wa, wb, opts); err != nil {
					t.Fatal(err)
				}
			}
			// Compared as they are, partial and sparse pairs give
			// Compare's answer on the full reference images.
			var jp pair
			for _, full := range []bool{false, true} {
				var err error
				jp, err = decodePair("a", p.a, "b", p.b, full)
				if err != nil {
					t.Fatal(err)
				}
				if wantPartial := !full && partialCases[p.name]; jp.partial != wantPartial {
					t.Errorf("full=%v: got partial %v, want %v", full, jp.partial, wantPartial)
				}
				for i, opts := range optionSets {
					got, err := compare(jp, opts)
					if err != nil {
						t.Fatal(err)
					}
					if !reflect.DeepEqual(got, want[i]) {
						t.Errorf("full=%v options %+v: got %+v, want %+v", full, opts, got, want[i])
					}
				}
			}
			// The full decode, its rows filled in (compare only reads a
			// pair), has image/png's pixels.
			jp.materialize()
			ja, jb := jp.a, jp.b
			if !bytes.Equal(ja.Pix, wa.Pix) {
				t.Error("a: joint pixels differ from image/png's")
			}
			if !bytes.Equal(jb.Pix, wb.Pix) {
				t.Error("b: joint pixels differ from image/png's")
			}
		})
	}
	// Errors name the right file, on both decode paths.
	bad := withBadIDAT(phone)
	if _, err := decodePair("a.png", bad, "b.png", phone, false); !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "a.png") {
		t.Errorf("got %v, want a corrupt-PNG error naming a.png", err)
	}
	if _, err := decodePair("a.png", phone, "b.png", phone[:len(phone)/2], false); !errors.Is(err, ErrTruncated) || !strings.Contains(err.Error(), "b.png") {
		t.Errorf("got %v, want a truncation error naming b.png", err)
	}
	if _, err := decodePair("a.png", gray16PNG(), "b.png", withBadIDAT(palettedPNG()), false); !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "b.png") {
		t.Errorf("image/png path: got %v, want a corrupt-PNG error naming b.png", err)
	}
	if _, err := decodePair("a.png", phone, "b.png", bad, false); !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "b.png") {
		t.Errorf("got %v, want a corrupt-PNG error naming b.png", err)
	}
	if _, err := decodePair("a.png", phone[:len(phone)-20], "b.png", phone, false); !errors.Is(err, ErrTruncated) || !strings.Contains(err.Error(), "a.png") {
		t.Errorf("got %v, want a truncation error naming a.png", err)
	}
}

// refDecodes are the reference decodes: image/png's, converted as Decode
// converts them, each done once for the PNG it came from (the same file
// is the reference of several cases).
type refDecodes struct{ m sync.Map } // &data[0] -> func() (*Image, error)

// decode returns the reference image of data. Callers must not modify it.
func (r *refDecodes) decode(t *testing.T, data []byte) *Image {
	t.Helper()
	f, _ := r.m.LoadOrStore(&data[0], sync.OnceValues(func() (*Image, error) {
		h, err := readHeader(data)
		if err != nil {
			return nil, err
		}
		m, err := png.Decode(bytes.NewReader(data))
		if err != nil {
			return nil, err
		}
		return fromDecoded(m, h), nil
	}))
	m, err := f.(func() (*Image, error))()
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// partialCases are the pairs of TestDecodePairMatchesDecode that differ in
// so few rows that CompareBytes decodes only those.
var partialCases = map[string]bool{
	"screenshots, one word changed": true, "screenshots, h1 moved": true,
	"first row changed": true, "last row changed": true, "one pixel": true, "far apart rows": true,
	"equal rgba pages": true, "same content, different encoders": true, "small": true,
}

func mustDecode(t *testing.T, data []byte) *Image {
	t.Helper()
	m, err := Decode("x", data)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// withFilters encodes p with every row's filter byte set to ft, the bytes
// after it being the raw samples (so the pixels are whatever ft makes of
// them; image/png is the referee in the tests that use this).
func withFilters(p rawPNG, ft uint8) []byte {
	var raw bytes.Buffer
	for y := 0; y < p.height; y++ {
		raw.WriteByte(ft)
		for x := 0; x < p.width; x++ {
			for _, s := range p.sample(x, y) {
				raw.WriteByte(uint8(s))
			}
		}
	}
	return replaceIDAT(p.encode(), zlibBytes(raw.Bytes()))
}
