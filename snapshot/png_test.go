package snapshot

import (
	"bytes"
	"image/png"
	"testing"
)

// TestEncodePNG: opaque images are written as RGB, translucent ones as RGBA
// with their straight colour; both decode back to the same bytes.
func TestEncodePNG(t *testing.T) {
	opaque := gradient(20, 10)
	translucent := gradient(20, 10)
	translucent.Pix[3], translucent.Pix[7] = 0, 90
	for _, c := range []struct {
		name      string
		img       *Image
		colorType uint8
	}{{"opaque", opaque, ctRGB}, {"translucent", translucent, ctRGBA}} {
		data, err := EncodePNG(c.img)
		if err != nil {
			t.Fatal(err)
		}
		h, err := readHeader(data)
		if err != nil {
			t.Fatal(err)
		}
		if h.colorType != c.colorType {
			t.Errorf("%s: colour type %d, want %d", c.name, h.colorType, c.colorType)
		}
		back, err := Decode(c.name, data)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(back.Pix, c.img.Pix) {
			t.Errorf("%s: pixels changed in the round trip", c.name)
		}
		if _, err := png.Decode(bytes.NewReader(data)); err != nil {
			t.Errorf("%s: image/png cannot read it: %v", c.name, err)
		}
	}
	if _, err := EncodePNG(&Image{Name: "broken", Pix: make([]uint8, 3), Width: 1, Height: 1}); err == nil {
		t.Error("inconsistent image: got no error")
	}
}
