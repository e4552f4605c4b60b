package snapshot

import (
	"bytes"
	"encoding/binary"
)

// YIQ weights (Kotsarenko and Ramos, as pixelmatch uses them).
const (
	yR, yG, yB = 0.29889531, 0.58662247, 0.11448223
	iR, iG, iB = 0.59597799, 0.27417610, 0.32180189
	qR, qG, qB = 0.21147017, 0.52261711, 0.31114694
)

// The float64(...) conversions below are deliberate: they forbid the
// compiler from fusing a multiply and an add (FMA, allowed by the Go spec on
// some architectures), so every operation rounds as it does in JavaScript and
// the counts match pixelmatch bit for bit.

// colorDelta is pixelmatch's colorDelta for the pixel at byte offset k of
// both images: the squared YIQ distance, negative when the second pixel is
// lighter (y of first minus second is positive). The caller has checked
// that the pixels differ.
func colorDelta(img1, img2 []uint8, k int, white bool) float64 {
	p1 := img1[k : k+4 : k+4]
	p2 := img2[k : k+4 : k+4]
	r1, g1, b1, a1 := int(p1[0]), int(p1[1]), int(p1[2]), int(p1[3])
	r2, g2, b2, a2 := int(p2[0]), int(p2[1]), int(p2[2]), int(p2[3])
	var dr, dg, db float64
	if a1 < 255 || a2 < 255 {
		rb, gb, bb := background(k, white)
		da := a1 - a2
		dr = float64(r1*a1-r2*a2-rb*da) / 255
		dg = float64(g1*a1-g2*a2-gb*da) / 255
		db = float64(b1*a1-b2*a2-bb*da) / 255
	} else {
		dr, dg, db = float64(r1-r2), float64(g1-g2), float64(b1-b2)
	}
	y := float64(float64(dr*yR)+float64(dg*yG)) + float64(db*yB)
	i := float64(float64(dr*iR)-float64(dg*iG)) - float64(db*iB)
	q := float64(float64(dr*qR)-float64(dg*qG)) + float64(db*qB)
	delta := float64(float64(0.5053*y*y)+float64(0.299*i*i)) + float64(0.1957*q*q)
	if y > 0 {
		return -delta
	}
	return delta
}

// background is the colour a translucent pixel at byte offset k is blended
// over: white, or pixelmatch 7's pseudo checkerboard
// (48 + 159 * (k % 2), 48 + 159 * (floor(k / phi) % 2),
// 48 + 159 * (floor(k / (phi+1)) % 2)). k is a multiple of 4, so red is
// always 48. The divisions are float64, as in JavaScript.
func background(k int, white bool) (r, g, b int) {
	if white {
		return 255, 255, 255
	}
	return 48 + 159*(k%2),
		48 + 159*(int(float64(k)/1.618033988749895)%2),
		48 + 159*(int(float64(k)/2.618033988749895)%2)
}

// aaBlend is how the anti-aliasing check blends a translucent pixel and its
// neighbour before taking their luma difference.
type aaBlend uint8

const (
	// aaChecker: pixelmatch 7, over its pseudo checkerboard at the
	// centre's offset.
	aaChecker aaBlend = iota
	// aaWhite: pixelmatch 7 with the checkerboard off, over white.
	aaWhite
	// aaWhiteAlpha: pixelmatch 8, always over white; when the blended
	// lumas are equal but the alphas are not, half the alpha difference
	// gives the direction, so only pixels equal in both are siblings.
	aaWhiteAlpha
)

// brightnessDelta is the y part of colorDelta between the centre pixel
// (offset k, colour r1..a1) and a neighbour at offset m of the same image,
// translucent pixels blended as bg says.
func brightnessDelta(img []uint8, k, m, r1, g1, b1, a1 int, bg aaBlend) float64 {
	p := img[m : m+4 : m+4]
	r2, g2, b2, a2 := int(p[0]), int(p[1]), int(p[2]), int(p[3])
	dr, dg, db, da := r1-r2, g1-g2, b1-b2, a1-a2
	if dr == 0 && dg == 0 && db == 0 && da == 0 {
		return 0
	}
	if a1 < 255 || a2 < 255 {
		rb, gb, bb := background(k, bg != aaChecker)
		fr := float64(r1*a1-r2*a2-rb*da) / 255
		fg := float64(g1*a1-g2*a2-gb*da) / 255
		fb := float64(b1*a1-b2*a2-bb*da) / 255
		d := float64(float64(fr*yR)+float64(fg*yG)) + float64(fb*yB)
		if bg == aaWhiteAlpha && d == 0 && da != 0 {
			return float64(da) / 2
		}
		return d
	}
	return float64(float64(float64(dr)*yR)+float64(float64(dg)*yG)) + float64(float64(db)*yB)
}

// antialiased is pixelmatch's anti-aliasing test for pixel (x1, y1) of img
// (after "Anti-aliased Pixel and Intensity Slope Detector", V. Vysniauskas,
// 2009): among the 8 neighbours, fewer than 3 are equal to it (counting an
// image edge as one), it has both a darker and a brighter neighbour, and the
// darkest or the brightest of them sits in a flat area (3+ equal neighbours)
// in both images. The neighbour order (x outer, y inner) and the strict
// comparisons decide ties exactly as pixelmatch does.
func antialiased(img, other []uint8, x1, y1, w, h int, bg aaBlend) bool {
	if x1 > 0 && y1 > 0 && x1 < w-1 && y1 < h-1 {
		return antialiasedInterior(img, other, (y1*w+x1)*4, 4*w, bg)
	}
	x0, y0 := max(x1-1, 0), max(y1-1, 0)
	x2, y2 := min(x1+1, w-1), min(y1+1, h-1)
	k := (y1*w + x1) * 4
	center := binary.LittleEndian.Uint32(img[k:])
	cr, cg, cb, ca := int(center&0xff), int(center>>8&0xff), int(center>>16&0xff), int(center>>24)
	zeroes := 0
	if x1 == x0 || x1 == x2 || y1 == y0 || y1 == y2 {
		zeroes = 1
	}
	var lo, hi float64
	var loX, loY, hiX, hiY int
	for x := x0; x <= x2; x++ {
		for y := y0; y <= y2; y++ {
			if x == x1 && y == y1 {
				continue
			}
			delta := neighbourDelta(img, k, (y*w+x)*4, center, cr, cg, cb, ca, bg)
			switch {
			case delta == 0:
				zeroes++
				if zeroes > 2 {
					return false
				}
			case delta < lo:
				lo, loX, loY = delta, x, y
			case delta > hi:
				hi, hiX, hiY = delta, x, y
			}
		}
	}
	if lo == 0 || hi == 0 {
		return false
	}
	return (hasManySiblings(img, loX, loY, w, h) && hasManySiblings(other, loX, loY, w, h)) ||
		(hasManySiblings(img, hiX, hiY, w, h) && hasManySiblings(other, hiX, hiY, w, h))
}

// antialiasedInterior is antialiased for a pixel at byte offset k that is
// not on the image border (w4 is the row length in bytes): the neighbours sit
// at fixed offsets, visited in pixelmatch's order.
func antialiasedInterior(img, other []uint8, k, w4 int, bg aaBlend) bool {
	center := binary.LittleEndian.Uint32(img[k:])
	cr, cg, cb, ca := int(center&0xff), int(center>>8&0xff), int(center>>16&0xff), int(center>>24)
	// x outer, y inner: (-1,-1) (-1,0) (-1,1) (0,-1) (0,1) (1,-1) (1,0) (1,1).
	offs := [8]int{-4 - w4, -4, -4 + w4, -w4, w4, 4 - w4, 4, 4 + w4}
	zeroes := 0
	var lo, hi float64
	var loK, hiK int
	for _, o := range offs {
		delta := neighbourDelta(img, k, k+o, center, cr, cg, cb, ca, bg)
		switch {
		case delta == 0:
			zeroes++
			if zeroes > 2 {
				return false
			}
		case delta < lo:
			lo, loK = delta, k+o
		case delta > hi:
			hi, hiK = delta, k+o
		}
	}
	if lo == 0 || hi == 0 {
		return false
	}
	w := w4 / 4
	return (manySiblingsAt(img, loK, w4, w) && manySiblingsAt(other, loK, w4, w)) ||
		(manySiblingsAt(img, hiK, w4, w) && manySiblingsAt(other, hiK, w4, w))
}

// neighbourDelta is pixelmatch's brightnessDelta between the centre (offset
// k, word center, channels cr..ca) and the neighbour at offset m, with the
// two cheap cases inline: the same RGBA (0) and two opaque pixels.
func neighbourDelta(img []uint8, k, m int, center uint32, cr, cg, cb, ca int, bg aaBlend) float64 {
	n := binary.LittleEndian.Uint32(img[m:])
	if n == center {
		return 0
	}
	if ca == 255 && n>>24 == 255 {
		dr, dg, db := cr-int(n&0xff), cg-int(n>>8&0xff), cb-int(n>>16&0xff)
		return float64(float64(float64(dr)*yR)+float64(float64(dg)*yG)) + float64(float64(db)*yB)
	}
	return brightnessDelta(img, k, m, cr, cg, cb, ca, bg)
}

// manySiblingsAt is hasManySiblings for the pixel at byte offset k, finding
// its position from k.
func manySiblingsAt(img []uint8, k, w4, w int) bool {
	x, y := (k%w4)/4, k/w4
	if x > 0 && y > 0 && x < w-1 && y < len(img)/w4-1 {
		val := binary.LittleEndian.Uint32(img[k:])
		s := img[k-w4-4 : k+w4+8]
		zeroes := 0
		for _, o := range [8]int{0, w4, 2 * w4, 4, 4 + 2*w4, 8, 8 + w4, 8 + 2*w4} {
			if binary.LittleEndian.Uint32(s[o:]) == val {
				zeroes++
				if zeroes > 2 {
					return true
				}
			}
		}
		return false
	}
	return hasManySiblings(img, x, y, w, len(img)/w4)
}

// hasManySiblings reports whether pixel (x1, y1) has more than 2 neighbours
// of exactly its RGBA value, an image edge counting as one.
func hasManySiblings(img []uint8, x1, y1, w, h int) bool {
	x0, y0 := max(x1-1, 0), max(y1-1, 0)
	x2, y2 := min(x1+1, w-1), min(y1+1, h-1)
	val := binary.LittleEndian.Uint32(img[(y1*w+x1)*4:])
	zeroes := 0
	if x1 == x0 || x1 == x2 || y1 == y0 || y1 == y2 {
		zeroes = 1
	}
	for x := x0; x <= x2; x++ {
		for y := y0; y <= y2; y++ {
			if x == x1 && y == y1 {
				continue
			}
			if binary.LittleEndian.Uint32(img[(y*w+x)*4:]) == val {
				zeroes++
				if zeroes > 2 {
					return true
				}
			}
		}
	}
	return false
}

// grayPixel draws one unchanged pixel of the diff image: the source's
// luminance faded towards white by diffFade and its alpha, truncated to a
// byte as pixelmatch's Uint8Array store does.
func grayPixel(dst, src []uint8) {
	r, g, b, a := float64(src[0]), float64(src[1]), float64(src[2]), float64(src[3])
	y := float64(float64(r*yR)+float64(g*yG)) + float64(b*yB)
	v := uint8(255 + float64(float64(float64(y-255)*diffFade)*a)/255)
	dst[0], dst[1], dst[2], dst[3] = v, v, v, 255
}

// grayRow draws row y of pix, unchanged, into row y of out (rows of
// rowBytes). Row prev of out (none when prev < 0) was drawn the same way:
// a screen repeats rows (margins, flat bands), and a row equal to it
// copies its drawing (about a fifth less time for a 1280x800 diff image).
func grayRow(out, pix []uint8, rowBytes, y, prev int) {
	row := func(b []uint8, y int) []uint8 { return b[y*rowBytes : (y+1)*rowBytes] }
	if prev >= 0 && bytes.Equal(row(pix, y), row(pix, prev)) {
		copy(row(out, y), row(out, prev))
		return
	}
	grayRun(row(out, y), row(pix, y))
}

// grayRun draws grayPixel for a run of pixels.
func grayRun(dst, src []uint8) {
	for p := 0; p+4 <= len(src); p += 4 {
		grayPixel(dst[p:p+4:p+4], src[p:p+4:p+4])
	}
}
