package snapshot

import (
	"bytes"
	"image"
	"image/color"
	"image/png"
	"math/rand/v2"
	"testing"
)

// TestEncodePNG: opaque images are written as RGB, translucent ones as RGBA
// with their straight colour; both decode back to the same bytes.
func TestEncodePNG(t *testing.T) {
	opaque := gradient(20, 10)
	translucent := gradient(20, 10)
	translucent.Pix[3], translucent.Pix[7] = 0, 90
	// Noise deflates to more than one 64 KiB IDAT chunk.
	noise := NewImage(300, 200)
	r := rand.New(rand.NewPCG(3, 4))
	for i := range noise.Pix {
		noise.Pix[i] = uint8(r.Uint32())
	}
	one := NewImage(1, 1)
	copy(one.Pix, []uint8{9, 8, 7, 255})
	for _, c := range []struct {
		name      string
		img       *Image
		colorType uint8
	}{{"opaque", opaque, ctRGB}, {"translucent", translucent, ctRGBA}, {"noise", noise, ctRGBA}, {"one pixel", one, ctRGB}} {
		data, err := EncodePNG(c.img)
		if err != nil {
			t.Fatal(err)
		}
		// The encoders are pooled: a second encode gives the same bytes.
		if again, err := EncodePNG(c.img); err != nil || !bytes.Equal(again, data) {
			t.Errorf("%s: a second encode differs (%v)", c.name, err)
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
		std, err := png.Decode(bytes.NewReader(data))
		if err != nil {
			t.Errorf("%s: image/png cannot read it: %v", c.name, err)
		} else if got := FromImage(std); !bytes.Equal(got.Pix, c.img.Pix) {
			t.Errorf("%s: image/png reads other pixels", c.name)
		}
	}
	if _, err := EncodePNG(&Image{Name: "broken", Pix: make([]uint8, 3), Width: 1, Height: 1}); err == nil {
		t.Error("inconsistent image: got no error")
	}
}

// TestFromImage keeps straight colour exactly and un-premultiplies
// premultiplied types; sub-images start at their own origin.
func TestFromImage(t *testing.T) {
	nrgba := image.NewNRGBA(image.Rect(0, 0, 4, 2))
	for i := range nrgba.Pix {
		nrgba.Pix[i] = uint8(i * 9)
	}
	sub := nrgba.SubImage(image.Rect(1, 1, 3, 2))
	if got := FromImage(sub); got.Width != 2 || got.Height != 1 || !bytes.Equal(got.Pix, nrgba.Pix[20:28]) {
		t.Errorf("NRGBA sub-image: got %dx%d %v, want 2x1 %v", got.Width, got.Height, got.Pix, nrgba.Pix[20:28])
	}
	rgba := image.NewRGBA(image.Rect(0, 0, 2, 1))
	copy(rgba.Pix, []uint8{100, 50, 0, 200, 10, 20, 30, 255})
	want := []uint8{127, 63, 0, 200, 10, 20, 30, 255}
	if got := FromImage(rgba); !bytes.Equal(got.Pix, want) {
		t.Errorf("premultiplied RGBA: got %v, want %v", got.Pix, want)
	}
	pal := image.NewPaletted(image.Rect(0, 0, 3, 1), color.Palette{color.NRGBA{1, 2, 3, 4}, color.Gray{9}})
	pal.Pix = []uint8{1, 0, 1}
	if got := FromImage(pal); !bytes.Equal(got.Pix, []uint8{9, 9, 9, 255, 1, 2, 3, 4, 9, 9, 9, 255}) {
		t.Errorf("paletted: got %v", got.Pix)
	}
	g16 := image.NewGray16(image.Rect(0, 0, 1, 1))
	g16.SetGray16(0, 0, color.Gray16{Y: 0x8080})
	if got := FromImage(g16); !bytes.Equal(got.Pix, []uint8{128, 128, 128, 255}) {
		t.Errorf("gray16: got %v", got.Pix)
	}
}
