package snapshot

import (
	"errors"
	"image"
	"math"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

func TestValidateName(t *testing.T) {
	good := []string{"home", "Home_2", "checkout-step-3", "v1.2", "a", strings.Repeat("x", 128)}
	bad := []string{"", ".hidden", "a..b", "..", "with space", "slash/name", `back\slash`, "ümlaut", "a:b", strings.Repeat("x", 129)}
	for _, n := range good {
		if err := ValidateName(n); err != nil {
			t.Errorf("ValidateName(%q) = %v, want nil", n, err)
		}
	}
	for _, n := range bad {
		err := ValidateName(n)
		if !errors.Is(err, ErrInvalidName) || !strings.Contains(err.Error(), strconv.Quote(n)) {
			t.Errorf("ValidateName(%q) = %v, want ErrInvalidName quoting the name", n, err)
		}
	}
}

func TestBaselineKeys(t *testing.T) {
	k, err := BaselineKey("home", 1280, 800)
	if err != nil || k != "home__chromium-1280x800.png" {
		t.Fatalf("got %q, %v, want home__chromium-1280x800.png", k, err)
	}
	k, err = CropBaselineKey("card", 390, 844, "291b06ae")
	if err != nil || k != "card__chromium-390x844-crop-291b06ae.png" {
		t.Fatalf("got %q, %v, want card__chromium-390x844-crop-291b06ae.png", k, err)
	}
	if _, err := BaselineKey("../etc", 1, 1); !errors.Is(err, ErrInvalidName) {
		t.Fatalf("got %v, want ErrInvalidName", err)
	}
	for _, bad := range []string{"", "291B06AE", "291b06a", "../../x", "291b06ae0"} {
		if _, err := CropBaselineKey("x", 1, 1, bad); err == nil {
			t.Fatalf("crop hash %q: got no error", bad)
		}
	}
}

func TestBaselineDir(t *testing.T) {
	cases := []struct{ canonical, fallback, want string }{
		{"/p/.argent/flows/checkout.yaml", "", "/p/.argent/flows/__baselines__/checkout"},
		{"/p/.argent/flows/checkout.yaml", "other", "/p/.argent/flows/__baselines__/checkout"},
		// A canonical stem that is not a flow name gives way to the
		// spelling's stem, or a nested flow's step name.
		{"/p/.argent/flows/Check Out.yaml", "/p/.argent/flows/checkout.yaml", "/p/.argent/flows/__baselines__/checkout"},
		{"/p/shared/login.flow.yaml", "login", "/p/shared/__baselines__/login"},
		{"/p/shared/login.flow.yaml", "", "/p/shared/__baselines__/login.flow"},
	}
	for _, c := range cases {
		if got := BaselineDir(filepath.FromSlash(c.canonical), c.fallback); got != filepath.FromSlash(c.want) {
			t.Errorf("BaselineDir(%q, %q) = %q, want %q", c.canonical, c.fallback, got, c.want)
		}
	}
}

func TestPasses(t *testing.T) {
	cases := []struct {
		pct, max float64
		want     bool
	}{
		{0, DefaultMaxMismatch, true},
		{0.5, DefaultMaxMismatch, true},
		{0.5001, DefaultMaxMismatch, false},
		{0.01, 0, false},
		{0, 0, true},
		{12, 15, true},
	}
	for _, c := range cases {
		if got := Passes(Result{MismatchPercent: c.pct}, c.max); got != c.want {
			t.Errorf("Passes(%v%%, max %v) = %v, want %v", c.pct, c.max, got, c.want)
		}
	}
}

// gradient returns an image whose pixel (x, y) is (x, y, 7, 255), so a crop
// shows where it came from.
func gradient(w, h int) *Image {
	m := NewImage(w, h)
	for y := range h {
		for x := range w {
			p := m.Pix[4*(y*w+x):]
			p[0], p[1], p[2], p[3] = uint8(x), uint8(y), 7, 255
		}
	}
	return m
}

func TestCrop(t *testing.T) {
	img := gradient(100, 50)
	img.Name = "capture"
	cases := []struct {
		f    Frame
		want image.Rectangle
	}{
		{Frame{0, 0, 1, 1}, image.Rect(0, 0, 100, 50)},
		{Frame{0.1, 0.2, 0.5, 0.5}, image.Rect(10, 10, 60, 35)},
		// Edges round on their own: 0.105*100 = 10.5 -> 11, (0.105+0.1)*100 = 20.5 -> 21.
		{Frame{0.105, 0, 0.1, 0.1}, image.Rect(11, 0, 21, 5)},
		{Frame{0.104, 0, 0.1, 0.1}, image.Rect(10, 0, 20, 5)},
		// Clamped to the image.
		{Frame{-0.2, -1, 0.5, 1.5}, image.Rect(0, 0, 30, 25)},
		{Frame{0.9, 0.9, 0.5, 0.5}, image.Rect(90, 45, 100, 50)},
	}
	for _, c := range cases {
		got, err := Crop(img, c.f)
		if err != nil {
			t.Fatalf("Crop(%+v): %v", c.f, err)
		}
		if got.Width != c.want.Dx() || got.Height != c.want.Dy() {
			t.Fatalf("Crop(%+v): got %dx%d, want %v", c.f, got.Width, got.Height, c.want)
		}
		// The top-left and bottom-right pixels come from the right places.
		first, last := got.Pix[:4], got.Pix[len(got.Pix)-4:]
		if int(first[0]) != c.want.Min.X || int(first[1]) != c.want.Min.Y || int(last[0]) != c.want.Max.X-1 || int(last[1]) != c.want.Max.Y-1 {
			t.Fatalf("Crop(%+v): corners %v %v, want from %v", c.f, first, last, c.want)
		}
	}
	for _, f := range []Frame{{0.5, 0.5, 0, 0.2}, {2, 0, 0.5, 0.5}, {0, 0, 0.001, 1}, {math.NaN(), 0, 1, 1}, {0, math.Inf(1), 1, 1}} {
		if _, err := Crop(img, f); err == nil || !strings.Contains(err.Error(), "capture") {
			t.Errorf("Crop(%+v): got %v, want an error naming the image", f, err)
		}
	}
}

// TestCropSizeChangeFails: when the element's frame changes size between the
// baseline and the capture, the comparison fails with both sizes.
func TestCropSizeChangeFails(t *testing.T) {
	img := gradient(100, 50)
	base, _ := Crop(img, Frame{0.1, 0.1, 0.3, 0.3})
	cur, _ := Crop(img, Frame{0.1, 0.1, 0.32, 0.3})
	_, err := Compare(base, cur, DefaultOptions())
	var sm *SizeMismatchError
	if !errors.As(err, &sm) || sm.A != image.Pt(30, 15) || sm.B != image.Pt(32, 15) {
		t.Fatalf("got %v, want a size mismatch 30x15 vs 32x15", err)
	}
}

func TestCropRect(t *testing.T) {
	// CropRect is Crop's rectangle: the same frames crop the same pixels
	// (TestCrop checks where they come from).
	img := gradient(100, 50)
	for _, f := range []Frame{{0, 0, 1, 1}, {0.105, 0, 0.1, 0.1}, {-0.2, -1, 0.5, 1.5}, {0.9, 0.9, 0.5, 0.5}, {0.333, 0.517, 0.2071, 0.093}} {
		r, err := CropRect(f, img.Width, img.Height)
		if err != nil {
			t.Fatalf("CropRect(%+v): %v", f, err)
		}
		got, err := Crop(img, f)
		if err != nil {
			t.Fatal(err)
		}
		if r.Dx() != got.Width || r.Dy() != got.Height || int(got.Pix[0]) != r.Min.X || int(got.Pix[1]) != r.Min.Y {
			t.Errorf("CropRect(%+v) = %v, but Crop copies %dx%d from (%d, %d)", f, r, got.Width, got.Height, got.Pix[0], got.Pix[1])
		}
		if !r.In(image.Rect(0, 0, 100, 50)) {
			t.Errorf("CropRect(%+v) = %v, outside the 100x50 image", f, r)
		}
	}
	for _, f := range []Frame{{0.5, 0.5, 0, 0.2}, {2, 0, 0.5, 0.5}, {math.NaN(), 0, 1, 1}} {
		if _, err := CropRect(f, 100, 50); err == nil || !strings.Contains(err.Error(), "frame") {
			t.Errorf("CropRect(%+v): got %v, want an error naming the frame", f, err)
		}
	}
}

// keyCases are names and sizes that look most like another key: names
// spelling a key's suffix, sizes of every sign and length.
var keyCases = []struct {
	name string
	w, h int
}{
	{"home", 1280, 800},
	{"home", 1280, 8000},
	{"full", 1, 1},
	{"home__chromium-1280x800-full", 1280, 800},
	{"home__chromium-1280x800", 1280, 800},
	{"home__chromium-1280x800-crop-291b06ae", 1280, 800},
	{"x-full", 0, 0},
	{"x", -1, -1},
	{"a_", 12, 80},
	{"a", 12, 80},
}

func TestFullPageKey(t *testing.T) {
	k, err := FullPageKey("home", 1280, 800)
	if err != nil || k != "home__chromium-1280x800-full.png" {
		t.Fatalf("got %q, %v, want home__chromium-1280x800-full.png", k, err)
	}
	if _, err := FullPageKey("../etc", 1, 1); !errors.Is(err, ErrInvalidName) {
		t.Fatalf("got %v, want ErrInvalidName", err)
	}
	for _, a := range keyCases {
		full, err := FullPageKey(a.name, a.w, a.h)
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range keyCases {
			for _, other := range otherKeys(t, b.name, b.w, b.h) {
				if full == other {
					t.Errorf("FullPageKey(%q, %d, %d) = %q, also the key of a viewport or crop baseline", a.name, a.w, a.h, full)
				}
			}
		}
	}
}

// otherKeys are the viewport key and crop keys of a name.
func otherKeys(t testing.TB, name string, w, h int) []string {
	t.Helper()
	keys := []string{}
	k, err := BaselineKey(name, w, h)
	if err != nil {
		t.Fatal(err)
	}
	keys = append(keys, k)
	for _, hash := range []string{"291b06ae", "00000000", "ffffffff", "0f0f0f0f"} {
		k, err := CropBaselineKey(name, w, h, hash)
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, k)
	}
	return keys
}
