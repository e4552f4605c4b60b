package snapshot

import (
	"image"
	"image/color"
)

// Image is a decoded picture as straight (not premultiplied) 8-bit RGBA,
// four bytes per pixel, rows top to bottom without padding: the same layout
// pixelmatch works on.
type Image struct {
	// Name says where the image came from (a file name or a baseline key);
	// errors quote it. It may be empty.
	Name string
	// Pix holds Width*Height*4 bytes: R, G, B, A of each pixel.
	Pix    []uint8
	Width  int
	Height int
}

// NewImage returns a transparent black image of the given size.
func NewImage(width, height int) *Image {
	return &Image{Pix: make([]uint8, 4*width*height), Width: width, Height: height}
}

// Size returns the image's width and height as a point.
func (m *Image) Size() image.Point { return image.Point{X: m.Width, Y: m.Height} }

// NRGBA returns an *image.NRGBA that shares m's pixels, for the standard
// image packages (encoding, drawing).
func (m *Image) NRGBA() *image.NRGBA {
	return &image.NRGBA{Pix: m.Pix, Stride: 4 * m.Width, Rect: image.Rect(0, 0, m.Width, m.Height)}
}

// FromImage converts any image.Image to straight RGBA. Pixel types that store
// straight colour (NRGBA, Gray, Paletted with NRGBA entries) keep their exact
// bytes; premultiplied types are un-premultiplied. The result never shares
// memory with img.
func FromImage(img image.Image) *Image {
	b := img.Bounds()
	out := NewImage(b.Dx(), b.Dy())
	switch m := img.(type) {
	case *image.NRGBA:
		for y := 0; y < out.Height; y++ {
			src := m.Pix[m.PixOffset(b.Min.X, b.Min.Y+y):]
			copy(out.Pix[4*out.Width*y:4*out.Width*(y+1)], src)
		}
		return out
	case *image.Paletted:
		lut := paletteLUT(m.Palette)
		for y := 0; y < out.Height; y++ {
			src := m.Pix[m.PixOffset(b.Min.X, b.Min.Y+y):]
			expandPaletted(out.Pix[4*out.Width*y:4*out.Width*(y+1)], src[:out.Width], &lut)
		}
		return out
	}
	i := 0
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			c := straight(img.At(x, y))
			out.Pix[i+0], out.Pix[i+1], out.Pix[i+2], out.Pix[i+3] = c.R, c.G, c.B, c.A
			i += 4
		}
	}
	return out
}

// straight returns c as straight 8-bit RGBA. Straight colour types pass
// through unchanged; anything else goes through color.NRGBAModel, which
// un-premultiplies. Never call c.RGBA() on a translucent pixel and keep the
// result: that is premultiplied and breaks the pixelmatch counts.
func straight(c color.Color) color.NRGBA {
	switch v := c.(type) {
	case color.NRGBA:
		return v
	case color.Gray:
		return color.NRGBA{v.Y, v.Y, v.Y, 0xff}
	case color.NRGBA64:
		return color.NRGBA{scale16(v.R), scale16(v.G), scale16(v.B), scale16(v.A)}
	case color.Gray16:
		g := scale16(v.Y)
		return color.NRGBA{g, g, g, 0xff}
	case color.RGBA:
		if v.A == 0xff {
			return color.NRGBA{v.R, v.G, v.B, 0xff}
		}
	case color.RGBA64:
		if v.A == 0xffff {
			return color.NRGBA{scale16(v.R), scale16(v.G), scale16(v.B), 0xff}
		}
	}
	return color.NRGBAModel.Convert(c).(color.NRGBA)
}

// scale16 maps a 16-bit sample to 8 bits the way pngjs does
// (floor(v*255/65535 + 0.5)), not by keeping the high byte as image/color
// does, so 16-bit PNGs compare like they do in the reference.
func scale16(v uint16) uint8 {
	return uint8((uint32(v)*2 + 257) / 514)
}

// paletteLUT turns a palette into little-endian RGBA words. Indices past the
// palette are opaque black, as image/png decodes them.
func paletteLUT(p color.Palette) [256]uint32 {
	var lut [256]uint32
	for i := range lut {
		c := color.NRGBA{0, 0, 0, 0xff}
		if i < len(p) && p[i] != nil {
			c = straight(p[i])
		}
		lut[i] = uint32(c.R) | uint32(c.G)<<8 | uint32(c.B)<<16 | uint32(c.A)<<24
	}
	return lut
}

func expandPaletted(dst, idx []uint8, lut *[256]uint32) {
	dst = dst[:4*len(idx)]
	for i, v := range idx {
		w := lut[v]
		d := dst[4*i : 4*i+4 : 4*i+4]
		d[0], d[1], d[2], d[3] = uint8(w), uint8(w>>8), uint8(w>>16), uint8(w>>24)
	}
}
