package snapshot

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"image"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
)

// vectorsDir holds the reference pairs and pixelmatch 7.2's counts for them
// (pixelmatch.json), and pixelmatch 8.0's (pixelmatch8.json).
var vectorsDir = filepath.Join("..", "testdata", "vectors")

type vectorFile struct {
	Pairs []vectorPair `json:"pairs"`
}

type vectorPair struct {
	Name            string            `json:"name"`
	A               string            `json:"a"`
	B               string            `json:"b"`
	Width           int               `json:"width"`
	Height          int               `json:"height"`
	WidthB          int               `json:"widthB"`
	HeightB         int               `json:"heightB"`
	MismatchPixels  *int              `json:"mismatchPixels"`
	MismatchPercent float64           `json:"mismatchPercent"`
	Checks          []vectorCheck     `json:"checks"`
	SHA256          map[string]string `json:"sha256"`
}

type vectorCheck struct {
	Threshold    float64 `json:"threshold"`
	IncludeAA    bool    `json:"includeAA"`
	Checkerboard *bool   `json:"checkerboard"`
	// WindowSize and IgnoreRect ([x, y, width, height]) are pixelmatch 8's.
	WindowSize     int   `json:"windowSize"`
	IgnoreRect     []int `json:"ignoreRect"`
	MismatchPixels int   `json:"mismatchPixels"`
}

func (c vectorCheck) String() string {
	s := fmt.Sprintf("threshold=%v,includeAA=%v", c.Threshold, c.IncludeAA)
	if c.Checkerboard != nil {
		s += fmt.Sprintf(",checkerboard=%v", *c.Checkerboard)
	}
	if c.WindowSize != 0 {
		s += fmt.Sprintf(",windowSize=%d", c.WindowSize)
	}
	if c.IgnoreRect != nil {
		s += fmt.Sprintf(",ignoreRect=%v", c.IgnoreRect)
	}
	return s
}

// options are the check's options for metric m.
func (c vectorCheck) options(t testing.TB, m Metric) Options {
	t.Helper()
	o := Options{Metric: m, Threshold: c.Threshold, IncludeAA: c.IncludeAA, White: c.Checkerboard != nil && !*c.Checkerboard, WindowSize: c.WindowSize}
	if c.IgnoreRect != nil {
		if len(c.IgnoreRect) != 4 {
			t.Fatalf("%v: ignoreRect has %d numbers, want 4", c, len(c.IgnoreRect))
		}
		x, y, w, h := c.IgnoreRect[0], c.IgnoreRect[1], c.IgnoreRect[2], c.IgnoreRect[3]
		o.Ignore = []image.Rectangle{image.Rect(x, y, x+w, y+h)}
	}
	return o
}

// loadVectors reads the pairs of one file of vectorsDir.
func loadVectors(t testing.TB, file string) []vectorPair {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(vectorsDir, file))
	if err != nil {
		t.Fatal(err)
	}
	var vf vectorFile
	if err := json.Unmarshal(data, &vf); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	if len(vf.Pairs) == 0 {
		t.Fatalf("%s has no pairs", file)
	}
	return vf.Pairs
}

func readVector(t testing.TB, rel, wantSHA string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(vectorsDir, rel))
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(data)
	if got := hex.EncodeToString(sum[:]); got != wantSHA {
		t.Fatalf("%s: sha256 %s, want %s", rel, got, wantSHA)
	}
	return data
}

// vectorImages holds the decoded vector images, by path relative to
// vectorsDir: each reference PNG is decoded once per test binary (a 1280x800
// decode takes a second under -race). Callers must not modify the images.
var vectorImages sync.Map // string -> func() (*Image, error)

// decodeVector returns the decoded vector image rel, whose bytes are data.
func decodeVector(t testing.TB, rel string, data []byte) *Image {
	t.Helper()
	f, _ := vectorImages.LoadOrStore(rel, sync.OnceValues(func() (*Image, error) {
		return Decode(rel, data)
	}))
	m, err := f.(func() (*Image, error))()
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestVectors reproduces every count of every pair of pixelmatch.json
// (pixelmatch 7.2.0) with the YIQ metric.
func TestVectors(t *testing.T) {
	t.Parallel()
	var checks atomic.Int32
	// The pairs run in parallel; the group returns when they all did.
	t.Run("pairs", func(t *testing.T) {
		for _, p := range loadVectors(t, "pixelmatch.json") {
			t.Run(p.Name, func(t *testing.T) {
				t.Parallel()
				checkVector(t, p, MetricYIQ, &checks)
			})
		}
	})
	if n := checks.Load(); n < 30 {
		t.Errorf("ran %d checks, want every check of the file (at least 30)", n)
	}
}

// TestVectors8 reproduces every count of every pair of pixelmatch8.json
// (pixelmatch 8.0.0: thresholds, anti-aliasing, the white background,
// windows and ignore rectangles) with the OKLab metric.
func TestVectors8(t *testing.T) {
	t.Parallel()
	var checks atomic.Int32
	t.Run("pairs", func(t *testing.T) {
		for _, p := range loadVectors(t, "pixelmatch8.json") {
			t.Run(p.Name, func(t *testing.T) {
				t.Parallel()
				checkVector(t, p, MetricOKLab, &checks)
			})
		}
	})
	if n := checks.Load(); n < 96 {
		t.Errorf("ran %d checks, want every check of the file (8 pairs of 12)", n)
	}
}

// checkVector reproduces every count of one pair with metric m, adding to
// checks. A pair without a headline count (pixelmatch8.json has none) is
// checked through its checks only.
func checkVector(t *testing.T, p vectorPair, m Metric, checks *atomic.Int32) {
	aData := readVector(t, p.A, p.SHA256["a"])
	bData := readVector(t, p.B, p.SHA256["b"])
	a := decodeVector(t, p.A, aData)
	b := decodeVector(t, p.B, bData)
	if a.Width != p.Width || a.Height != p.Height {
		t.Fatalf("a decodes to %dx%d, want %dx%d", a.Width, a.Height, p.Width, p.Height)
	}
	if p.MismatchPixels == nil && p.Checks == nil {
		// pixelmatch refuses pairs of different sizes; so do we.
		_, err := Compare(a, b, DefaultOptions())
		var sm *SizeMismatchError
		if !errors.As(err, &sm) {
			t.Fatalf("got error %v, want *SizeMismatchError", err)
		}
		wantA, wantB := image.Pt(p.Width, p.Height), image.Pt(p.WidthB, p.HeightB)
		if sm.A != wantA || sm.B != wantB {
			t.Fatalf("got sizes %v vs %v, want %v vs %v", sm.A, sm.B, wantA, wantB)
		}
		want := fmt.Sprintf("snapshot: image sizes differ: %dx%d (%s) vs %dx%d (%s)", p.Width, p.Height, p.A, p.WidthB, p.HeightB, p.B)
		if err.Error() != want {
			t.Fatalf("got message %q, want %q", err.Error(), want)
		}
		return
	}
	// From the PNG bytes, CompareBytes decodes the pair jointly: partially
	// without a diff image, fully with one. The decode depends on the
	// bytes and on that choice only, so each is done once and every check
	// compares it, as CompareBytes would (a 1280x800 full decode takes
	// seconds under -race). The headline result (pixelmatch's defaults, no
	// diff image) comes from CompareBytes itself.
	joint := make(map[bool]pair, 2)
	for _, full := range []bool{false, true} {
		jp, err := decodePair(p.A, aData, p.B, bData, full)
		if err != nil {
			t.Fatalf("decode the pair (full=%v): %v", full, err)
		}
		joint[full] = jp
	}
	for _, c := range p.Checks {
		opts := c.options(t, m)
		// Compare on the decoded images; then the joint decodes, the full
		// one drawing the diff image (the same loop draws it for Compare).
		res, err := Compare(a, b, opts)
		if err != nil {
			t.Fatalf("%v: %v", c, err)
		}
		if res.MismatchPixels != c.MismatchPixels {
			t.Errorf("Compare %v: got %d mismatched pixels, want %d", c, res.MismatchPixels, c.MismatchPixels)
		}
		for _, diff := range []bool{false, true} {
			opts.Diff = diff
			res, err := compare(joint[diff], opts)
			if err != nil {
				t.Fatalf("%v: %v", c, err)
			}
			if res.MismatchPixels != c.MismatchPixels {
				t.Errorf("joint decode %v diff=%v: got %d mismatched pixels, want %d", c, diff, res.MismatchPixels, c.MismatchPixels)
			}
		}
		checks.Add(1)
	}
	if p.MismatchPixels == nil {
		return
	}
	res, err := CompareBytes(p.A, aData, p.B, bData, DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	if res.MismatchPixels != *p.MismatchPixels {
		t.Errorf("CompareBytes: got %d, want %d", res.MismatchPixels, *p.MismatchPixels)
	}
	if got := roundTo(res.MismatchPercent, 4); got != p.MismatchPercent {
		t.Errorf("got %v percent, want %v", got, p.MismatchPercent)
	}
	// Identical files take the fast path; the others do not.
	if wantIdentical := p.SHA256["a"] == p.SHA256["b"]; res.Identical != wantIdentical {
		t.Errorf("got Identical %v, want %v", res.Identical, wantIdentical)
	}
	if res.Identical && (res.MismatchPixels != 0 || res.AntialiasedPixels != 0 || len(res.Regions) != 0) {
		t.Errorf("identical pair reports changes: %+v", res)
	}
}

func roundTo(v float64, digits int) float64 {
	var f float64 = 1
	for range digits {
		f *= 10
	}
	return float64(int64(v*f+0.5)) / f
}
