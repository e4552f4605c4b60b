package snapshot

import (
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"image/color"
)

// rawPNG builds a PNG byte by byte, for layouts image/png never writes:
// gray+alpha, colour-key tRNS, bit depths 1, 2 and 4, 16-bit gray+alpha,
// Adam7 interlacing, and broken headers.
type rawPNG struct {
	width, height int
	depth         uint8
	colorType     uint8
	interlace     bool
	palette       []color.NRGBA // PLTE, plus tRNS when an entry is translucent
	trns          []byte        // tRNS data for gray and truecolour
	// sample returns the samples of pixel (x, y) in channel order, each
	// below 2^depth (a palette index for colour type 3).
	sample func(x, y int) []uint16
}

func channels(colorType uint8) int {
	return map[uint8]int{ctGray: 1, ctRGB: 3, ctPaletted: 1, ctGrayAlpha: 2, ctRGBA: 4}[colorType]
}

// adam7 lists the interlace passes: x start, y start, x step, y step.
var adam7 = [7][4]int{{0, 0, 8, 8}, {4, 0, 8, 8}, {0, 4, 4, 8}, {2, 0, 4, 4}, {0, 2, 2, 4}, {1, 0, 2, 2}, {0, 1, 1, 2}}

func (p rawPNG) encode() []byte {
	var raw bytes.Buffer
	passes := [][4]int{{0, 0, 1, 1}}
	if p.interlace {
		passes = adam7[:]
	}
	for _, ps := range passes {
		for y := ps[1]; y < p.height; y += ps[3] {
			var bits []uint16
			for x := ps[0]; x < p.width; x += ps[2] {
				bits = append(bits, p.sample(x, y)...)
			}
			if len(bits) == 0 {
				continue
			}
			raw.WriteByte(0) // filter type None
			raw.Write(packSamples(bits, p.depth))
		}
	}
	var z bytes.Buffer
	zw := zlib.NewWriter(&z)
	zw.Write(raw.Bytes())
	zw.Close()

	var out bytes.Buffer
	out.Write(pngSignature)
	ihdr := make([]byte, 13)
	binary.BigEndian.PutUint32(ihdr[0:], uint32(p.width))
	binary.BigEndian.PutUint32(ihdr[4:], uint32(p.height))
	ihdr[8], ihdr[9] = p.depth, p.colorType
	if p.interlace {
		ihdr[12] = 1
	}
	writeChunk(&out, "IHDR", ihdr)
	if p.palette != nil {
		var plte, trns []byte
		translucent := false
		for _, c := range p.palette {
			plte = append(plte, c.R, c.G, c.B)
			trns = append(trns, c.A)
			translucent = translucent || c.A != 255
		}
		writeChunk(&out, "PLTE", plte)
		if translucent {
			writeChunk(&out, "tRNS", trns)
		}
	}
	if p.trns != nil {
		writeChunk(&out, "tRNS", p.trns)
	}
	writeChunk(&out, "IDAT", z.Bytes())
	writeChunk(&out, "IEND", nil)
	return out.Bytes()
}

func packSamples(s []uint16, depth uint8) []byte {
	switch depth {
	case 8:
		b := make([]byte, len(s))
		for i, v := range s {
			b[i] = uint8(v)
		}
		return b
	case 16:
		b := make([]byte, 2*len(s))
		for i, v := range s {
			binary.BigEndian.PutUint16(b[2*i:], v)
		}
		return b
	}
	perByte := 8 / int(depth)
	b := make([]byte, (len(s)+perByte-1)/perByte)
	for i, v := range s {
		shift := 8 - int(depth)*(i%perByte+1)
		b[i/perByte] |= uint8(v) << shift
	}
	return b
}

// headerOnly returns a PNG signature and an IHDR chunk with a valid CRC
// declaring the given size, followed by IEND: enough for the header checks.
func headerOnly(w, h uint32, depth, colorType uint8) []byte {
	var out bytes.Buffer
	out.Write(pngSignature)
	ihdr := make([]byte, 13)
	binary.BigEndian.PutUint32(ihdr[0:], w)
	binary.BigEndian.PutUint32(ihdr[4:], h)
	ihdr[8], ihdr[9] = depth, colorType
	writeChunk(&out, "IHDR", ihdr)
	writeChunk(&out, "IEND", nil)
	return out.Bytes()
}
