package snapshot

import (
	"bytes"
	"flag"
	"image"
	"image/color"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"testing"
)

// update rewrites the golden files in testdata/baselines from their
// generators. CI never passes it: a baseline must not change silently.
var update = flag.Bool("update", false, "rewrite testdata/baselines from the generators")

var baselinesDir = filepath.Join("..", "testdata", "baselines")

// homePage draws a tiny page: white, a dark header bar, a card, and an
// anti-aliased diagonal line. cardColor tells the two versions apart.
func homePage(cardColor color.NRGBA) *Image {
	m := solid(64, 48, 255, 255, 255)
	fill(m, image.Rect(0, 0, 64, 8), 0x1f, 0x29, 0x37)
	fill(m, image.Rect(16, 12, 48, 36), cardColor.R, cardColor.G, cardColor.B)
	for y := 38; y < 48; y++ {
		for x := 0; x < 64; x++ {
			// Coverage of the line y = 38 + x/6, one pixel thick.
			d := math.Abs(float64(y) + 0.5 - (38 + (float64(x)+0.5)/6))
			cov := math.Max(0, 1-d)
			v := uint8(255 - cov*200)
			p := m.Pix[4*(y*64+x):]
			p[0], p[1], p[2] = v, v, 255
		}
	}
	return m
}

// cardCropHash is the crop hash of the card golden's selector { id: card }
// as the flow package computes it (Argent's crop identity).
const cardCropHash = "291b06ae"

// cardFrame is where the card sits in homePage, normalized.
var cardFrame = Frame{X: 16.0 / 64, Y: 12.0 / 48, Width: 32.0 / 64, Height: 24.0 / 48}

// goldens generates each file of testdata/baselines.
func goldens(t *testing.T) map[string][]byte {
	t.Helper()
	enc := func(m *Image) []byte {
		data, err := EncodePNG(m)
		if err != nil {
			t.Fatal(err)
		}
		return data
	}
	stdEnc := func(m image.Image) []byte {
		var b bytes.Buffer
		if err := png.Encode(&b, m); err != nil {
			t.Fatal(err)
		}
		return b.Bytes()
	}
	home := homePage(color.NRGBA{0x3b, 0x82, 0xf6, 255})
	card, err := Crop(home, cardFrame)
	if err != nil {
		t.Fatal(err)
	}
	cardKey, err := CropBaselineKey("card", 64, 48, cardCropHash)
	if err != nil {
		t.Fatal(err)
	}
	translucent := NewImage(32, 32)
	for y := range 32 {
		for x := range 32 {
			p := translucent.Pix[4*(y*32+x):]
			p[0], p[1], p[2], p[3] = uint8(x*8), 64, uint8(255-y*8), uint8(x*8+y)
		}
	}
	pal := image.NewPaletted(image.Rect(0, 0, 8, 8), color.Palette{
		color.NRGBA{255, 0, 0, 255}, color.NRGBA{0, 0, 255, 128}, color.NRGBA{0, 0, 0, 0},
	})
	gray16 := image.NewGray16(image.Rect(0, 0, 8, 8))
	for i := range pal.Pix {
		pal.Pix[i] = uint8(i % 3)
		gray16.SetGray16(i%8, i/8, color.Gray16{Y: uint16(i * 1031)})
	}
	return map[string][]byte{
		"home__chromium-64x48.png":         enc(home),
		"home-changed__chromium-64x48.png": enc(homePage(color.NRGBA{0xef, 0x44, 0x44, 255})),
		cardKey:                            enc(card),
		"translucent__chromium-32x32.png":  enc(translucent),
		"paletted-8x8.png":                 stdEnc(pal),
		"gray16-8x8.png":                   stdEnc(gray16),
	}
}

// TestGoldenBaselines checks that every golden file decodes to exactly the
// pixels its generator makes (pixels, not bytes: encoders may change), and
// pins what the flow engine's tests rely on.
func TestGoldenBaselines(t *testing.T) {
	gen := goldens(t)
	for name, want := range gen {
		path := filepath.Join(baselinesDir, name)
		if *update {
			if err := os.MkdirAll(baselinesDir, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, want, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		got, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%v (run go test ./snapshot -run TestGoldenBaselines -update once to create it)", err)
		}
		res, err := CompareBytes(path, got, name+" (generated)", want, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if !res.Identical {
			t.Errorf("%s: decoded pixels differ from the generator's (%d pixels at threshold 0)", name, res.MismatchPixels)
		}
	}
	entries, err := os.ReadDir(baselinesDir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if _, ok := gen[e.Name()]; !ok && filepath.Ext(e.Name()) == ".png" {
			t.Errorf("%s: a PNG in testdata/baselines without a generator", e.Name())
		}
	}

	read := func(name string) []byte {
		data, err := os.ReadFile(filepath.Join(baselinesDir, name))
		if err != nil {
			t.Fatal(err)
		}
		return data
	}
	// The two home versions differ exactly in the card: 32x24 pixels.
	res, err := CompareBytes("home", read("home__chromium-64x48.png"), "home-changed", read("home-changed__chromium-64x48.png"), DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	if res.MismatchPixels != 768 || Passes(res, DefaultMaxMismatch) || len(res.Regions) != 1 || res.Regions[0] != (Region{X: 16, Y: 12, Width: 32, Height: 24, Pixels: 768}) {
		t.Errorf("home vs home-changed: got %d pixels, regions %+v; want 768 in one 32x24 region at 16,12", res.MismatchPixels, res.Regions)
	}
	if res.Width != 64 || res.Height != 48 {
		t.Errorf("got %dx%d, want 64x48", res.Width, res.Height)
	}
	// The crop golden is the card of home, under the key of its selector.
	if _, ok := gen["card__chromium-64x48-crop-291b06ae.png"]; !ok {
		t.Errorf("crop golden key changed: %v", gen)
	}
	card, err := Decode("card", read("card__chromium-64x48-crop-291b06ae.png"))
	if err != nil {
		t.Fatal(err)
	}
	if card.Width != 32 || card.Height != 24 {
		t.Errorf("card crop is %dx%d, want 32x24", card.Width, card.Height)
	}
}
