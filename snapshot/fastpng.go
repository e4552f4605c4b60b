package snapshot

import (
	"bytes"
	"compress/flate"
	"compress/zlib"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
)

// fastStream is a PNG in the layout of browser screenshots, 8-bit RGB or
// RGBA without interlacing, with its IDAT data gathered, ready to inflate.
// For this layout the package unfilters rows itself, straight into the RGBA
// output: no intermediate image and no per-pixel conversion pass. Inflating
// is compress/flate's. Every chunk's CRC-32 is verified, as image/png does,
// so corrupted data is refused; the zlib stream's own Adler-32 of the
// inflated bytes is not (it costs about a fifth of the inflate time and
// adds protection only against a broken encoder; libpng can skip it the
// same way, with its PNG_IGNORE_ADLER32 option).
type fastStream struct {
	w, h, bpp int
	idat      []byte
}

// rowLen is the length of one inflated row: filter byte and samples.
func (s fastStream) rowLen() int { return 1 + s.bpp*s.w }

// openFast returns the fastStream of data. handled is false for any other
// layout, and for a truecolour tRNS chunk: the caller then decodes with
// image/png.
func openFast(data []byte, h header) (s fastStream, handled bool, err error) {
	switch {
	case h.depth == 8 && h.colorType == ctRGB:
		s.bpp = 3
	case h.depth == 8 && h.colorType == ctRGBA:
		s.bpp = 4
	default:
		return s, false, nil
	}
	if data[28] != 0 || data[26] != 0 || data[27] != 0 { // interlace, compression, filter method
		return s, false, nil
	}
	idat, trns, err := collectIDAT(data)
	if err != nil {
		return s, true, err
	}
	if trns {
		return s, false, nil
	}
	s.w, s.h, s.idat = int(h.width), int(h.height), idat
	return s, true, nil
}

// inflateInPlace inflates every row into pix (the RGBA output, 4*w bytes
// a row): the samples of row y go to the end of row y's own slot, its
// filter type into ft[y]. unfilterSlot then decodes each row inside its
// slot, so no separate buffer of inflated rows exists (on a fresh process
// each page of memory costs a fault). The stream's end and every filter
// type are checked.
// done, when not nil, is called after every row with the rows done so far.
func (s fastStream) inflateInPlace(pix, ft []uint8, done func(rows int)) error {
	return s.inflateRows(ft, func(y int) []uint8 {
		if done != nil && y > 0 {
			done(y)
		}
		return s.samples(pix, y)
	})
}

// inflateRows inflates the stream row by row: the filter type of row y goes
// to ft[y] and its samples to the buffer that into(y) returns (3*w or 4*w
// bytes). It checks every filter type and the end of the stream.
func (s fastStream) inflateRows(ft []uint8, into func(y int) []uint8) error {
	zr, err := s.inflater()
	if err != nil {
		return err
	}
	for y := 0; y < s.h; y++ {
		if _, err := io.ReadFull(zr, ft[y:y+1]); err != nil {
			return inflateError(err)
		}
		if ft[y] > ftPaeth {
			return fmt.Errorf("%w: bad filter type %d in row %d", ErrCorrupt, ft[y], y)
		}
		if _, err := io.ReadFull(zr, into(y)); err != nil {
			return inflateError(err)
		}
	}
	return checkEnd(zr)
}

// samples returns the slot of row y where inflateInPlace puts the row's
// inflated samples: the end of the row's 4*w output bytes.
func (s fastStream) samples(pix []uint8, y int) []uint8 {
	stride := 4 * s.w
	return pix[y*stride+(4-s.bpp)*s.w : (y+1)*stride]
}

// unfilterSlot unfilters row y of pix in place, from the samples at the end
// of the row's slot (see samples). This is safe because the unfilter loops
// read all samples of a pixel before writing it, and a pixel's 4 output
// bytes never reach the samples of the next pixel (output pixel x ends at
// 4x+4, the samples of pixel x+1 start at w+3x+3 for RGB and at 4x+4 for
// RGBA). prev is the unfiltered row above, nil when the filter is not to
// read one (row 0, or a None or Sub row that starts a split).
func (s fastStream) unfilterSlot(pix []uint8, ft uint8, y int, prev []uint8) error {
	stride := 4 * s.w
	cur := pix[y*stride : (y+1)*stride]
	raw := cur[(4-s.bpp)*s.w:]
	if s.bpp == 3 {
		return unfilterRGB(cur, prev, ft, raw)
	}
	return unfilterRGBA(cur, prev, ft, raw)
}

// unfilterRow reverses the filter of one inflated row (filter byte first)
// into cur; prev is the unfiltered row above, nil for the first row.
func unfilterRow(cur, prev, raw []uint8, bpp int) error {
	if bpp == 3 {
		return unfilterRGB(cur, prev, raw[0], raw[1:])
	}
	return unfilterRGBA(cur, prev, raw[0], raw[1:])
}

// decodeFast decodes a PNG of the screenshot layout (see fastStream),
// streaming: each row is inflated into a small buffer and unfiltered into
// its place in Pix, with the previous output row as the "up" row. handled is
// false for other layouts.
//
// With checkOnly, the file is checked as thoroughly (every chunk CRC, the
// whole compressed stream, the row count, every filter type) but no pixels
// are produced and img is nil.
func decodeFast(data []byte, h header, checkOnly bool) (img *Image, handled bool, err error) {
	s, handled, err := openFast(data, h)
	if !handled || err != nil {
		return nil, handled, err
	}
	zr, err := s.inflater()
	if err != nil {
		return nil, true, err
	}
	raw := make([]uint8, s.rowLen())
	if !checkOnly {
		img = &Image{Pix: make([]uint8, 4*s.w*s.h), Width: s.w, Height: s.h}
	}
	stride := 4 * s.w
	var prev []uint8 // nil on the first row: "up" is 0
	for y := 0; y < s.h; y++ {
		if _, err := io.ReadFull(zr, raw); err != nil {
			return nil, true, inflateError(err)
		}
		if checkOnly {
			if raw[0] > ftPaeth {
				return nil, true, fmt.Errorf("%w: bad filter type %d in row %d", ErrCorrupt, raw[0], y)
			}
			continue
		}
		cur := img.Pix[y*stride : (y+1)*stride]
		if err := unfilterRow(cur, prev, raw, s.bpp); err != nil {
			return nil, true, err
		}
		prev = cur
	}
	if err := checkEnd(zr); err != nil {
		return nil, true, err
	}
	return img, true, nil
}

// inflater checks the zlib header of the IDAT data (RFC 1950: deflate, a
// valid check value, no preset dictionary) and returns a reader of the
// deflate stream after it.
func (s fastStream) inflater() (io.Reader, error) {
	if len(s.idat) < 2 {
		return nil, fmt.Errorf("%w: the compressed image data ends early", ErrTruncated)
	}
	cmf, flg := s.idat[0], s.idat[1]
	if cmf&0x0f != 8 || cmf>>4 > 7 || (uint(cmf)<<8|uint(flg))%31 != 0 {
		return nil, fmt.Errorf("%w: %v", ErrCorrupt, zlib.ErrHeader)
	}
	if flg&0x20 != 0 {
		return nil, fmt.Errorf("%w: %v", ErrCorrupt, zlib.ErrDictionary)
	}
	return flate.NewReader(bytes.NewReader(s.idat[2:])), nil
}

// checkEnd reads the deflate stream to its final block; data past the
// image is an error, as in image/png.
func checkEnd(zr io.Reader) error {
	var one [1]byte
	n, err := zr.Read(one[:])
	if n != 0 {
		return fmt.Errorf("%w: too much pixel data", ErrCorrupt)
	}
	if err != io.EOF {
		return inflateError(err)
	}
	return nil
}

// collectIDAT walks the chunks after IHDR up to IEND, verifying each CRC,
// and returns the IDAT data (joined when there are several chunks) and
// whether a tRNS chunk exists.
func collectIDAT(data []byte) (idat []byte, trns bool, err error) {
	var parts [][]byte
	total := 0
	seenIDAT, idatDone := false, false
	for off := 8; ; {
		if len(data)-off < 12 {
			return nil, false, fmt.Errorf("%w: the data ends before the IEND chunk", ErrTruncated)
		}
		n := binary.BigEndian.Uint32(data[off:])
		if n > 0x7fffffff {
			return nil, false, fmt.Errorf("%w: a chunk length over 2^31-1", ErrCorrupt)
		}
		typ := string(data[off+4 : off+8])
		if uint64(len(data)-off-12) < uint64(n) {
			return nil, false, fmt.Errorf("%w: the data ends inside the chunk %s", ErrTruncated, chunkName(typ, n))
		}
		body := data[off+8 : off+8+int(n)]
		if crc32.ChecksumIEEE(data[off+4:off+8+int(n)]) != binary.BigEndian.Uint32(data[off+8+int(n):]) {
			return nil, false, fmt.Errorf("%w: chunk %s: invalid checksum", ErrCorrupt, chunkName(typ, n))
		}
		off += 12 + int(n)
		switch typ {
		case "IDAT":
			if idatDone {
				// image/png ignores IDAT chunks after other chunks.
				continue
			}
			seenIDAT = true
			parts = append(parts, body)
			total += len(body)
			continue
		case "IEND":
			if !seenIDAT {
				return nil, false, fmt.Errorf("%w: no IDAT chunk", ErrCorrupt)
			}
			if len(parts) == 1 {
				return parts[0], trns, nil
			}
			idat = make([]byte, 0, total)
			for _, p := range parts {
				idat = append(idat, p...)
			}
			return idat, trns, nil
		case "tRNS":
			trns = true
		case "IHDR":
			if off != 8+12+13 {
				return nil, false, fmt.Errorf("%w: a second IHDR chunk", ErrCorrupt)
			}
		}
		if seenIDAT {
			idatDone = true
		}
	}
}

func inflateError(err error) error {
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
		return fmt.Errorf("%w: the compressed image data ends early", ErrTruncated)
	}
	return fmt.Errorf("%w: %v", ErrCorrupt, err)
}

// PNG filter types (PNG spec, section 9.2).
const (
	ftNone    = 0
	ftSub     = 1
	ftUp      = 2
	ftAverage = 3
	ftPaeth   = 4
)

// unfilterRGB reverses a row's filter from 3-byte pixels in raw into 4-byte
// pixels in cur (alpha 255). Filters work per byte on the file's layout:
// "left" is the same channel of the previous pixel and "up" the same channel
// one row up, both already unfiltered, which is what cur and prev hold.
func unfilterRGB(cur, prev []uint8, ft uint8, raw []uint8) error {
	n := len(raw) / 3
	cur = cur[:4*n]
	raw = raw[:3*n]
	switch ft {
	case ftNone:
		for x := 0; x < n; x++ {
			d, s := cur[4*x:4*x+4:4*x+4], raw[3*x:3*x+3:3*x+3]
			d[0], d[1], d[2], d[3] = s[0], s[1], s[2], 255
		}
	case ftSub:
		var l0, l1, l2 uint8
		for x := 0; x < n; x++ {
			d, s := cur[4*x:4*x+4:4*x+4], raw[3*x:3*x+3:3*x+3]
			l0, l1, l2 = s[0]+l0, s[1]+l1, s[2]+l2
			d[0], d[1], d[2], d[3] = l0, l1, l2, 255
		}
	case ftUp:
		if prev == nil {
			return unfilterRGB(cur, nil, ftNone, raw)
		}
		if allZero(raw) {
			// The row above again: a screen repeats rows (margins, flat
			// bands), and its encoder writes them so.
			copy(cur, prev[:4*n])
			return nil
		}
		d, s, u := cur, raw, prev[:4*n]
		for len(d) >= 4 && len(s) >= 3 && len(u) >= 4 {
			d[0], d[1], d[2], d[3] = s[0]+u[0], s[1]+u[1], s[2]+u[2], 255
			d, s, u = d[4:], s[3:], u[4:]
		}
	case ftAverage:
		var l0, l1, l2 uint8
		for x := 0; x < n; x++ {
			d, s := cur[4*x:4*x+4:4*x+4], raw[3*x:3*x+3:3*x+3]
			var u0, u1, u2 uint8
			if prev != nil {
				u := prev[4*x : 4*x+4 : 4*x+4]
				u0, u1, u2 = u[0], u[1], u[2]
			}
			l0 = s[0] + uint8((int(l0)+int(u0))/2)
			l1 = s[1] + uint8((int(l1)+int(u1))/2)
			l2 = s[2] + uint8((int(l2)+int(u2))/2)
			d[0], d[1], d[2], d[3] = l0, l1, l2, 255
		}
	case ftPaeth:
		if prev == nil {
			// With no row above, Paeth predicts from the left: Sub.
			return unfilterRGB(cur, nil, ftSub, raw)
		}
		prev = prev[:4*n]
		// The Paeth predictor (PNG spec, section 9.4), inline and unrolled
		// over the three channels so their dependency chains (each output
		// is the next "left") stay in registers and overlap.
		prev = prev[:4*n]
		var a0, a1, a2, c0, c1, c2 int // left and up-left per channel
		for x := 0; x < n; x++ {
			d, s, u := cur[4*x:4*x+4:4*x+4], raw[3*x:3*x+3:3*x+3], prev[4*x:4*x+4:4*x+4]
			b0, b1, b2 := int(u[0]), int(u[1]), int(u[2])
			a0 = int(s[0] + uint8(paethPick(a0, b0, c0)))
			a1 = int(s[1] + uint8(paethPick(a1, b1, c1)))
			a2 = int(s[2] + uint8(paethPick(a2, b2, c2)))
			c0, c1, c2 = b0, b1, b2
			d[0], d[1], d[2], d[3] = uint8(a0), uint8(a1), uint8(a2), 255
		}
	default:
		return fmt.Errorf("%w: bad filter type %d", ErrCorrupt, ft)
	}
	return nil
}

// unfilterRGBA reverses a row's filter for 4-byte pixels; the layout of raw
// and cur is the same, so this is the textbook per-byte reversal with a
// pixel distance of 4.
func unfilterRGBA(cur, prev []uint8, ft uint8, raw []uint8) error {
	cur = cur[:len(raw)]
	switch ft {
	case ftNone:
		copy(cur, raw)
	case ftSub:
		copy(cur, raw)
		for i := 4; i < len(cur); i++ {
			cur[i] += cur[i-4]
		}
	case ftUp:
		if prev != nil && allZero(raw) {
			copy(cur, prev[:len(cur)])
			return nil
		}
		copy(cur, raw)
		if prev != nil {
			prev = prev[:len(cur)]
			for i := range cur {
				cur[i] += prev[i]
			}
		}
	case ftAverage:
		for i := range cur {
			var l, u int
			if i >= 4 {
				l = int(cur[i-4])
			}
			if prev != nil {
				u = int(prev[i])
			}
			cur[i] = raw[i] + uint8((l+u)/2)
		}
	case ftPaeth:
		if prev == nil {
			return unfilterRGBA(cur, nil, ftSub, raw)
		}
		prev = prev[:len(cur)]
		for i := 0; i < 4 && i < len(cur); i++ {
			cur[i] = raw[i] + prev[i] // left and up-left are 0: predicts up
		}
		for i := 4; i < len(cur); i++ {
			cur[i] = raw[i] + uint8(paethPick(int(cur[i-4]), int(prev[i]), int(prev[i-4])))
		}
	default:
		return fmt.Errorf("%w: bad filter type %d", ErrCorrupt, ft)
	}
	return nil
}

// zeroBytes is what allZero compares with, a chunk at a time.
var zeroBytes [4096]uint8

// allZero reports whether b holds only zeros (memcmp speed, stopping at
// the first chunk that does not).
func allZero(b []uint8) bool {
	for len(b) > 0 {
		n := min(len(b), len(zeroBytes))
		if !bytes.Equal(b[:n], zeroBytes[:n]) {
			return false
		}
		b = b[n:]
	}
	return true
}

// paethPick is the Paeth predictor of left a, up b and up-left c (PNG spec,
// section 9.4): whichever of the three is closest to a + b - c, preferring a,
// then b. Small enough to inline; the selects compile to conditional moves.
func paethPick(a, b, c int) int {
	// Squares order the distances like absolute values do, and are cheaper
	// for the inliner.
	p, q := b-c, a-c
	pa, pb, pc := p*p, q*q, (p+q)*(p+q)
	if pb < pa {
		a, pa = b, pb
	}
	if pc < pa {
		a = c
	}
	return a
}
