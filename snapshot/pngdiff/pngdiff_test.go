package pngdiff

import (
	"bytes"
	"context"
	"errors"
	"image"
	"image/color"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolserver/toolserver/snapshot"
)

func TestParseRect(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want image.Rectangle
		err  string
	}{
		{in: "0,0,1280,64", want: image.Rect(0, 0, 1280, 64)},
		{in: " 10, 20 ,3,4", want: image.Rect(10, 20, 13, 24)},
		{in: "1,2,3", err: "want X,Y,W,H"},
		{in: "0,0,0,1", err: "W must be at least 1"},
		{in: "-1,0,1,1", err: "X must be a whole number of pixels"},
		{in: "0,x,1,1", err: `Y must be a whole number of pixels 0..67108864, got "x"`},
	} {
		got, err := ParseRect(tc.in)
		switch {
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("ParseRect(%q): got %v, want an error with %q", tc.in, err, tc.err)
		case tc.err == "" && (err != nil || got != tc.want):
			t.Errorf("ParseRect(%q): got %v, %v, want %v", tc.in, got, err, tc.want)
		}
	}
}

// TestCompareOptionsArgErrors: each option out of its range is an
// *ArgError naming its flag.
func TestCompareOptionsArgErrors(t *testing.T) {
	ok := Options{Threshold: 0.1, Metric: string(snapshot.MetricYIQ)}
	for _, tc := range []struct {
		name string
		edit func(*Options)
		want string
	}{
		{"threshold", func(o *Options) { o.Threshold = 1.5 }, "--threshold 1.5 is outside 0..1"},
		{"metric", func(o *Options) { o.Metric = "rgb" }, `--metric "rgb" is not one of yiq, oklab`},
		{"window", func(o *Options) { o.Window = -1 }, "--window -1 is outside 0..67108864 (0 counts the whole image)"},
		{"too many", func(o *Options) { o.Ignore = make([]string, MaxIgnoreRects+1) }, "257 --ignore rectangles, at most 256"},
		{"bad rect", func(o *Options) { o.Ignore = []string{"1,2"} }, `--ignore "1,2": want X,Y,W,H, four whole numbers of pixels`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := ok
			tc.edit(&o)
			_, err := o.CompareOptions()
			var ae *ArgError
			if !errors.As(err, &ae) || ae.Error() != tc.want {
				t.Errorf("got %v, want ArgError %q", err, tc.want)
			}
		})
	}
	co, err := Options{Threshold: 0, Metric: string(snapshot.MetricOKLab), Window: 16, Ignore: []string{"0,0,1,1"}, DiffFile: "d.png"}.CompareOptions()
	if err != nil || co.Metric != snapshot.MetricOKLab || co.WindowSize != 16 || len(co.Ignore) != 1 || !co.Diff {
		t.Errorf("got %+v, %v", co, err)
	}
}

func writePNG(t *testing.T, path string, dot bool) {
	t.Helper()
	img := image.NewNRGBA(image.Rect(0, 0, 8, 4))
	for i := range img.Pix {
		img.Pix[i] = 255
	}
	if dot {
		img.Set(2, 1, color.NRGBA{A: 255})
	}
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestFiles: two files that differ by a pixel, the diff image written,
// and the line a person reads.
func TestFiles(t *testing.T) {
	dir := t.TempDir()
	a, b, d := filepath.Join(dir, "a.png"), filepath.Join(dir, "b.png"), filepath.Join(dir, "diff.png")
	writePNG(t, a, false)
	writePNG(t, b, true)
	rep, err := Files(context.Background(), a, b, Options{Threshold: 0.1, Metric: string(snapshot.MetricYIQ), DiffFile: d})
	if err != nil {
		t.Fatal(err)
	}
	if rep.MismatchPixels != 1 || rep.DiffFile != d {
		t.Errorf("got %d pixels, diff %q; want 1, %q", rep.MismatchPixels, rep.DiffFile, d)
	}
	if _, err := os.Stat(d); err != nil {
		t.Errorf("diff image: %v", err)
	}
	want := "8x4: 1 pixel differ (3.12%) in 1 region; largest at 2,1 1x1; diff written to " + d
	if got := Summary(rep.Result, 0.1, d); got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	same, err := Files(context.Background(), a, a, Options{Threshold: 0.1, Metric: string(snapshot.MetricYIQ)})
	if err != nil || Summary(same.Result, 0.1, "") != "8x4: identical" {
		t.Errorf("got %q, %v; want identical", Summary(same.Result, 0.1, ""), err)
	}
	if _, err := Files(context.Background(), a, filepath.Join(dir, "none.png"), Options{Metric: string(snapshot.MetricYIQ)}); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a missing file: got %v, want os.ErrNotExist", err)
	}
}
