package snapshot

import (
	"bufio"
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"sync"
)

// EncodePNG encodes img as a PNG, favouring speed over size (diff images and
// crops are written often and read rarely). An image whose pixels are all
// opaque is written as RGB, otherwise as RGBA with straight alpha.
//
// Every row is filtered Sub (each byte minus the same byte of the pixel on
// its left) and the rows are deflated at zlib's fastest level. image/png
// instead tries all five filters on every row and keeps the one that looks
// smallest: on a 1280x800 screenshot or diff image that made the encode
// three times slower (59 ms against 17) for a file within 6% of the size.
func EncodePNG(img *Image) ([]byte, error) {
	if err := checkImage(img, "encoded"); err != nil {
		return nil, err
	}
	colorType, bpp := uint8(ctRGBA), 4
	if opaque(img.Pix) {
		colorType, bpp = ctRGB, 3
	}
	var out bytes.Buffer
	out.Grow(len(img.Pix)/8 + 64)
	out.Write(pngSignature)
	var ihdr [13]byte
	binary.BigEndian.PutUint32(ihdr[0:], uint32(img.Width))
	binary.BigEndian.PutUint32(ihdr[4:], uint32(img.Height))
	ihdr[8], ihdr[9] = 8, colorType // depth 8; compression, filter and interlace methods 0
	writeChunk(&out, "IHDR", ihdr[:])

	e := encoders.Get().(*encoder)
	defer func() {
		// The pooled encoder must not keep this output alive.
		e.chunks.Reset(idatWriter{})
		encoders.Put(e)
	}()
	e.chunks.Reset(idatWriter{&out})
	e.zw.Reset(e.chunks)
	row := e.row(1 + img.Width*bpp)
	row[0] = ftSub
	stride := 4 * img.Width
	for y := range img.Height {
		subRow(row[1:], img.Pix[y*stride:(y+1)*stride], bpp)
		if _, err := e.zw.Write(row); err != nil {
			return nil, fmt.Errorf("snapshot: encode %s: %w", img.Name, err)
		}
	}
	if err := e.zw.Close(); err != nil {
		return nil, fmt.Errorf("snapshot: encode %s: %w", img.Name, err)
	}
	if err := e.chunks.Flush(); err != nil {
		return nil, fmt.Errorf("snapshot: encode %s: %w", img.Name, err)
	}
	writeChunk(&out, "IEND", nil)
	return out.Bytes(), nil
}

// opaque reports whether every pixel of pix (RGBA) has alpha 255.
func opaque(pix []uint8) bool {
	for i := 3; i < len(pix); i += 4 {
		if pix[i] != 255 {
			return false
		}
	}
	return true
}

// subRow writes the RGBA row src into dst as bpp-byte pixels (3 drops the
// alpha), each byte minus the one of the pixel to its left.
func subRow(dst, src []uint8, bpp int) {
	var lr, lg, lb, la uint8
	for x := 0; x < len(src)/4; x++ {
		s := src[4*x : 4*x+4 : 4*x+4]
		r, g, b, a := s[0], s[1], s[2], s[3]
		d := dst[bpp*x : bpp*x+bpp : bpp*x+bpp]
		d[0], d[1], d[2] = r-lr, g-lg, b-lb
		if bpp == 4 {
			d[3] = a - la
		}
		lr, lg, lb, la = r, g, b, a
	}
}

// encoder holds the buffers one encode needs, reused across encodes: a
// deflate compressor alone allocates several hundred KiB.
type encoder struct {
	zw     *zlib.Writer
	chunks *bufio.Writer
	buf    []byte
}

var encoders = sync.Pool{New: func() any {
	chunks := bufio.NewWriterSize(idatWriter{}, 64<<10)
	// BestSpeed is a valid level: NewWriterLevel cannot fail.
	zw, _ := zlib.NewWriterLevel(chunks, zlib.BestSpeed)
	return &encoder{zw: zw, chunks: chunks}
}}

// row returns the encoder's row buffer, n bytes long.
func (e *encoder) row(n int) []byte {
	if cap(e.buf) < n {
		e.buf = make([]byte, n)
	}
	return e.buf[:n]
}

// idatWriter writes each Write as one IDAT chunk of out; the bufio.Writer
// in front of it makes them 64 KiB each.
type idatWriter struct{ out *bytes.Buffer }

func (w idatWriter) Write(p []byte) (int, error) {
	writeChunk(w.out, "IDAT", p)
	return len(p), nil
}

// writeChunk appends the PNG chunk typ with data to out: length, type,
// data, and the CRC of type and data.
func writeChunk(out *bytes.Buffer, typ string, data []byte) {
	var n [4]byte
	binary.BigEndian.PutUint32(n[:], uint32(len(data)))
	out.Write(n[:])
	out.WriteString(typ)
	out.Write(data)
	crc := crc32.Update(crc32.ChecksumIEEE([]byte(typ)), crc32.IEEETable, data)
	binary.BigEndian.PutUint32(n[:], crc)
	out.Write(n[:])
}
