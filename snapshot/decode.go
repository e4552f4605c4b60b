package snapshot

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"image"
	"image/png"
	"io"
)

// MaxPixels is the largest image Decode accepts: 64 megapixels (2^26). The
// header is checked before any pixel memory is allocated, so a PNG that
// claims to be 100000x100000 costs nothing to refuse.
const MaxPixels = 64 << 20

// Sentinel errors that a DecodeError wraps; callers branch on them with
// errors.Is.
var (
	// ErrNotPNG means the data does not start with the PNG signature.
	ErrNotPNG = errors.New("not a PNG file")
	// ErrTruncated means the PNG data ends before the image is complete.
	ErrTruncated = errors.New("truncated PNG")
	// ErrCorrupt means the PNG structure or compressed data is invalid.
	ErrCorrupt = errors.New("corrupt PNG")
	// ErrEmpty means the header declares a width or height of zero.
	ErrEmpty = errors.New("image has no pixels")
	// ErrTooLarge means the header declares more than MaxPixels pixels.
	ErrTooLarge = errors.New("image too large")
)

// DecodeError reports an input that could not be decoded. Name is the file
// name or key the caller gave; Err wraps one of the sentinel errors or an
// error of image/png.
type DecodeError struct {
	Name string
	Err  error
}

// Error returns "snapshot: decode <name>: <reason>".
func (e *DecodeError) Error() string {
	if e.Name == "" {
		return "snapshot: decode: " + e.Err.Error()
	}
	return "snapshot: decode " + e.Name + ": " + e.Err.Error()
}

// Unwrap returns the reason, so errors.Is finds the sentinels.
func (e *DecodeError) Unwrap() error { return e.Err }

var pngSignature = []byte("\x89PNG\r\n\x1a\n")

// PNG colour types (PNG spec, section 11.2.2).
const (
	ctGray      = 0
	ctRGB       = 2
	ctPaletted  = 3
	ctGrayAlpha = 4
	ctRGBA      = 6
)

// header is the part of IHDR that Decode needs before decoding.
type header struct {
	width, height uint32
	depth         uint8
	colorType     uint8
}

// otherFormat names the image format data starts with, when it is one a
// screenshot is often mistaken for, as " (it is a JPEG image)"; else "".
func otherFormat(data []byte) string {
	switch {
	case bytes.HasPrefix(data, []byte{0xff, 0xd8, 0xff}):
		return " (it is a JPEG image)"
	case bytes.HasPrefix(data, []byte("GIF8")):
		return " (it is a GIF image)"
	case len(data) >= 12 && bytes.Equal(data[:4], []byte("RIFF")) && bytes.Equal(data[8:12], []byte("WEBP")):
		return " (it is a WebP image)"
	}
	return ""
}

// chunkName describes a chunk by its type when the type is a PNG chunk
// name (four ASCII letters, PNG spec section 5.4) and by nothing of the
// file otherwise; n is its length.
func chunkName(typ string, n uint32) string {
	for i := 0; i < len(typ); i++ {
		if c := typ[i] | 0x20; c < 'a' || c > 'z' {
			return "not a chunk (its type is not four letters)"
		}
	}
	if n > 0x7fffffff {
		return typ + " with an impossible length"
	}
	return fmt.Sprintf("%s of %d bytes", typ, n)
}

// readHeader checks the signature and the IHDR chunk without decoding pixels.
func readHeader(data []byte) (header, error) {
	if len(data) == 0 {
		return header{}, fmt.Errorf("%w: the file is empty", ErrNotPNG)
	}
	if len(data) < len(pngSignature) && bytes.HasPrefix(pngSignature, data) {
		return header{}, fmt.Errorf("%w: the data ends inside the signature", ErrTruncated)
	}
	if !bytes.HasPrefix(data, pngSignature) {
		// Never the bytes themselves: the file may be anything (a caller
		// naming /etc/passwd as a baseline), and a message travels.
		return header{}, fmt.Errorf("%w: the data does not start with the PNG signature%s", ErrNotPNG, otherFormat(data))
	}
	// Signature, then the IHDR chunk: length (4), type (4), 13 data bytes.
	if len(data) < 8+8+13 {
		return header{}, fmt.Errorf("%w: the data ends inside the IHDR chunk", ErrTruncated)
	}
	if n, typ := binary.BigEndian.Uint32(data[8:12]), string(data[12:16]); typ != "IHDR" || n != 13 {
		return header{}, fmt.Errorf("%w: the first chunk is %s, not IHDR of 13 bytes", ErrCorrupt, chunkName(typ, n))
	}
	h := header{
		width:     binary.BigEndian.Uint32(data[16:20]),
		height:    binary.BigEndian.Uint32(data[20:24]),
		depth:     data[24],
		colorType: data[25],
	}
	if h.width == 0 || h.height == 0 {
		return h, fmt.Errorf("%w: the header says %dx%d", ErrEmpty, h.width, h.height)
	}
	if px := uint64(h.width) * uint64(h.height); px > MaxPixels {
		return h, fmt.Errorf("%w: %dx%d is %d pixels, the limit is %d (64 megapixels)", ErrTooLarge, h.width, h.height, px, MaxPixels)
	}
	return h, nil
}

// Check validates PNG data as thoroughly as Decode does (header limits,
// every chunk checksum, the whole compressed stream, every row's filter) and
// returns the image size, without producing pixels when the layout allows:
// for 8-bit RGB and RGBA files it costs about half a Decode.
func Check(name string, data []byte) (image.Point, error) {
	h, err := readHeader(data)
	if err != nil {
		return image.Point{}, &DecodeError{Name: name, Err: err}
	}
	size := image.Point{X: int(h.width), Y: int(h.height)}
	if _, handled, err := decodeFast(data, h, true); handled {
		if err != nil {
			return image.Point{}, &DecodeError{Name: name, Err: err}
		}
		return size, nil
	}
	if _, err := Decode(name, data); err != nil {
		return image.Point{}, err
	}
	return size, nil
}

// Decode decodes PNG data into straight 8-bit RGBA exactly as stored in the
// file, the way pngjs (pixelmatch's decoder) does: 16-bit samples are scaled
// with rounding, paletted pixels take their palette entry (with tRNS alpha),
// and a pixel made transparent by a gray or truecolour tRNS chunk becomes
// 0,0,0,0. Interlaced files are supported. name only labels errors.
//
// The header is checked first: a zero-sized image fails with ErrEmpty and one
// over MaxPixels with ErrTooLarge, before any pixel memory is allocated.
func Decode(name string, data []byte) (*Image, error) {
	h, err := readHeader(data)
	if err != nil {
		return nil, &DecodeError{Name: name, Err: err}
	}
	if m, handled, err := decodeFast(data, h, false); handled {
		if err != nil {
			return nil, &DecodeError{Name: name, Err: err}
		}
		m.Name = name
		return m, nil
	}
	// Walk the chunks first (structure, every CRC, IEND), so that every
	// layout reports a cut or damaged file the same way.
	if _, _, err := collectIDAT(data); err != nil {
		return nil, &DecodeError{Name: name, Err: err}
	}
	img, err := png.Decode(bytes.NewReader(data))
	if err != nil {
		return nil, &DecodeError{Name: name, Err: classify(err)}
	}
	m := fromDecoded(img, h)
	m.Name = name
	return m, nil
}

// classify maps an image/png error onto the sentinels, keeping its text.
// The chunks were walked before, so what remains is the compressed stream
// ending early (truncated) or a format, stream or unsupported-layout error
// (corrupt).
func classify(err error) error {
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
		return fmt.Errorf("%w: the compressed image data ends early", ErrTruncated)
	}
	return fmt.Errorf("%w: %v", ErrCorrupt, err)
}

// fromDecoded converts what image/png returned into straight RGBA without
// calling At. The common screenshot case, 8-bit RGB, comes back as an opaque
// *image.RGBA whose bytes are already straight RGBA and are used in place.
func fromDecoded(img image.Image, h header) *Image {
	w, ht := int(h.width), int(h.height)
	out := &Image{Width: w, Height: ht}
	// A file without an alpha channel only gets alpha 0 from a tRNS colour
	// key; pngjs writes such pixels as 0,0,0,0.
	keyed := h.colorType == ctGray || h.colorType == ctRGB
	switch m := img.(type) {
	case *image.RGBA:
		if tight(m.Rect, m.Stride, 4) && h.colorType != ctGrayAlpha && h.colorType != ctRGBA {
			// image/png only returns *image.RGBA for truecolour without
			// tRNS, so every alpha is 255 and premultiplied equals straight.
			out.Pix = m.Pix
			return out
		}
	case *image.NRGBA:
		if tight(m.Rect, m.Stride, 4) {
			out.Pix = m.Pix
			if keyed {
				zeroTransparent(out.Pix)
			}
			return out
		}
	case *image.Gray:
		if tight(m.Rect, m.Stride, 1) {
			out.Pix = make([]uint8, 4*w*ht)
			for i, g := range m.Pix {
				d := out.Pix[4*i : 4*i+4 : 4*i+4]
				d[0], d[1], d[2], d[3] = g, g, g, 0xff
			}
			return out
		}
	case *image.Paletted:
		if tight(m.Rect, m.Stride, 1) {
			out.Pix = make([]uint8, 4*w*ht)
			lut := paletteLUT(m.Palette)
			expandPaletted(out.Pix, m.Pix, &lut)
			return out
		}
	case *image.Gray16:
		if tight(m.Rect, m.Stride, 2) {
			out.Pix = make([]uint8, 4*w*ht)
			for i := 0; i < w*ht; i++ {
				g := scale16(uint16(m.Pix[2*i])<<8 | uint16(m.Pix[2*i+1]))
				d := out.Pix[4*i : 4*i+4 : 4*i+4]
				d[0], d[1], d[2], d[3] = g, g, g, 0xff
			}
			return out
		}
	case *image.RGBA64:
		// image/png returns RGBA64 only for opaque 16-bit truecolour, so
		// the stored samples are straight.
		if tight(m.Rect, m.Stride, 8) && h.colorType != ctGrayAlpha && h.colorType != ctRGBA {
			out.Pix = scale16Pix(m.Pix)
			return out
		}
	case *image.NRGBA64:
		if tight(m.Rect, m.Stride, 8) {
			out.Pix = scale16Pix(m.Pix)
			if keyed {
				zeroTransparent(out.Pix)
			}
			return out
		}
	}
	// Any other shape (never returned by image/png today): the generic path.
	conv := FromImage(img)
	if keyed {
		zeroTransparent(conv.Pix)
	}
	return conv
}

// tight reports whether an image's pixels start at the origin and have no
// row padding, so its Pix can be read as one run.
func tight(r image.Rectangle, stride, bpp int) bool {
	return r.Min == (image.Point{}) && stride == bpp*r.Dx()
}

// scale16Pix scales big-endian 16-bit samples to 8 bits with scale16.
func scale16Pix(src []uint8) []uint8 {
	dst := make([]uint8, len(src)/2)
	for i := range dst {
		dst[i] = scale16(uint16(src[2*i])<<8 | uint16(src[2*i+1]))
	}
	return dst
}

// zeroTransparent sets every pixel with alpha 0 to 0,0,0,0.
func zeroTransparent(pix []uint8) {
	for i := 0; i+3 < len(pix); i += 4 {
		if pix[i+3] == 0 {
			pix[i], pix[i+1], pix[i+2] = 0, 0, 0
		}
	}
}
