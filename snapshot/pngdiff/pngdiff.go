// Package pngdiff compares two PNG files as toolserver snapshot diff
// does: the comparison's options as the command's flags give them
// (checked, with their caps), the files read and compared, the diff
// image written, and the one-line answer a person reads.
//
// The pixel code is package snapshot's; this package adds the files and
// the words. It prints nothing and knows no flag parser.
package pngdiff

import (
	"context"
	"fmt"
	"image"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	"github.com/toolserver/toolserver/fault"
	"github.com/toolserver/toolserver/internal/atomicfile"
	"github.com/toolserver/toolserver/snapshot"
)

// Caps on Ignore: rectangles per call, and the value of each number (no
// image is wider or taller than snapshot.MaxPixels).
const (
	MaxIgnoreRects = 256
	MaxIgnoreValue = snapshot.MaxPixels
)

// Options are a comparison's settings, as snapshot diff's flags name
// them.
type Options struct {
	// Threshold is pixelmatch's matching threshold, 0..1.
	Threshold float64
	// IncludeAA counts anti-aliased pixels as differences.
	IncludeAA bool
	// Metric is the colour distance: snapshot.MetricYIQ or MetricOKLab.
	Metric string
	// Window, when above 0, counts the most differing pixels of any
	// Window x Window square instead of all.
	Window int
	// Ignore are rectangles "X,Y,W,H" left out of the comparison.
	Ignore []string
	// DiffFile, when set, is where the diff image is written.
	DiffFile string
}

// An ArgError is an option out of its range; its message names the flag
// and the value (the CLI shows it as a usage error).
type ArgError struct{ msg string }

func (e *ArgError) Error() string { return e.msg }

func argError(format string, a ...any) error { return &ArgError{msg: fmt.Sprintf(format, a...)} }

// Report is a comparison's result (width, height, metric, windowSize,
// mismatchPixels, mismatchPercent, identical, regions, ...) plus the
// in-process time of decoding and comparing: snapshot diff's -o json.
type Report struct {
	snapshot.Result
	DurationMs float64 `json:"durationMs"`
	DiffFile   string  `json:"diffFile,omitempty"`
}

// CompareOptions checks o into the comparison's options; an option out
// of its range is an *ArgError.
func (o Options) CompareOptions() (snapshot.Options, error) {
	if o.Threshold < 0 || o.Threshold > 1 {
		return snapshot.Options{}, argError("--threshold %v is outside 0..1", o.Threshold)
	}
	co := snapshot.DefaultOptions()
	co.Threshold = o.Threshold
	co.IncludeAA = o.IncludeAA
	co.Diff = o.DiffFile != ""
	switch m := snapshot.Metric(o.Metric); m {
	case snapshot.MetricYIQ, snapshot.MetricOKLab:
		co.Metric = m
	default:
		return snapshot.Options{}, argError("--metric %q is not one of yiq, oklab", o.Metric)
	}
	if o.Window < 0 || o.Window > MaxIgnoreValue {
		return snapshot.Options{}, argError("--window %d is outside 0..%d (0 counts the whole image)", o.Window, MaxIgnoreValue)
	}
	co.WindowSize = o.Window
	if len(o.Ignore) > MaxIgnoreRects {
		return snapshot.Options{}, argError("%d --ignore rectangles, at most %d", len(o.Ignore), MaxIgnoreRects)
	}
	for _, v := range o.Ignore {
		r, err := ParseRect(v)
		if err != nil {
			return snapshot.Options{}, argError("--ignore %q: %v", fault.Clip(v, 64, fault.Beyond, fault.Bytewise), err)
		}
		co.Ignore = append(co.Ignore, r)
	}
	return co, nil
}

// Files compares the PNG files a and b, and writes the diff image to
// o.DiffFile when set. Bad options are an *ArgError; a file that cannot
// be read or decoded, or two sizes, are the error as it comes.
func Files(ctx context.Context, a, b string, o Options) (Report, error) {
	co, err := o.CompareOptions()
	if err != nil {
		return Report{}, err
	}
	if err := ctx.Err(); err != nil {
		return Report{}, err
	}
	ab, err := os.ReadFile(a)
	if err != nil {
		return Report{}, err
	}
	bb, err := os.ReadFile(b)
	if err != nil {
		return Report{}, err
	}

	// One comparison allocates its images once, and they stay live until
	// the command ends; a collection meanwhile finds nothing to free and
	// takes one of the cores the decoders run on (about 1-2 ms of 10 on a
	// 1280x800 pair on 2 cores). So the collector waits until we are done.
	defer debug.SetGCPercent(debug.SetGCPercent(-1))

	start := time.Now()
	res, err := snapshot.CompareBytes(a, ab, b, bb, co)
	elapsed := time.Since(start)
	if err != nil {
		return Report{}, err
	}
	if o.DiffFile != "" {
		data, err := snapshot.EncodePNG(res.Diff)
		if err == nil {
			err = atomicfile.WriteFile(o.DiffFile, data)
		}
		if err != nil {
			return Report{}, err
		}
	}
	return Report{Result: res, DurationMs: float64(elapsed.Microseconds()) / 1000, DiffFile: o.DiffFile}, nil
}

// ParseRect reads "X,Y,W,H" in pixels: X and Y from 0, W and H from 1.
func ParseRect(v string) (image.Rectangle, error) {
	parts := strings.Split(v, ",")
	if len(parts) != 4 {
		return image.Rectangle{}, fmt.Errorf("want X,Y,W,H, four whole numbers of pixels")
	}
	var n [4]int
	for i, p := range parts {
		x, err := strconv.Atoi(strings.TrimSpace(p))
		if err != nil || x < 0 || x > MaxIgnoreValue {
			return image.Rectangle{}, fmt.Errorf("%s must be a whole number of pixels 0..%d, got %q", "XYWH"[i:i+1], MaxIgnoreValue, fault.Clip(p, 24, fault.Beyond, fault.Bytewise))
		}
		if i >= 2 && x == 0 {
			return image.Rectangle{}, fmt.Errorf("%s must be at least 1", "XYWH"[i:i+1])
		}
		n[i] = x
	}
	return image.Rect(n[0], n[1], n[0]+n[2], n[1]+n[3]), nil
}

// Summary is the human answer of snapshot diff, for example
// "1280x800: 4120 pixels differ (0.40%) in 3 regions; largest at 10,20 300x40".
func Summary(res snapshot.Result, threshold float64, diffFile string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%dx%d: ", res.Width, res.Height)
	switch {
	case res.Identical:
		b.WriteString("identical")
	case res.MismatchPixels == 0:
		fmt.Fprintf(&b, "no pixel differs above threshold %v", threshold)
	case res.WindowSize > 0:
		n := min(res.WindowSize, res.Width, res.Height)
		fmt.Fprintf(&b, "%d %s differ in the worst %dx%d window (%.2f%% of it; %d in all)", res.MismatchPixels, plural(res.MismatchPixels, "pixel", "pixels"),
			n, n, res.MismatchPercent, res.TotalMismatchPixels)
		writeRegions(&b, res)
	default:
		pct := fmt.Sprintf("%.2f", res.MismatchPercent)
		if res.MismatchPercent < 0.1 {
			pct = fmt.Sprintf("%.4f", res.MismatchPercent)
		}
		fmt.Fprintf(&b, "%d %s differ (%s%%)", res.MismatchPixels, plural(res.MismatchPixels, "pixel", "pixels"), pct)
		writeRegions(&b, res)
	}
	if res.AntialiasedPixels > 0 {
		fmt.Fprintf(&b, " (%d anti-aliased %s ignored)", res.AntialiasedPixels, plural(res.AntialiasedPixels, "pixel", "pixels"))
	}
	if diffFile != "" {
		fmt.Fprintf(&b, "; diff written to %s", diffFile)
	}
	return b.String()
}

// writeRegions ends a summary with " in 3 regions; largest at 10,20 300x40".
func writeRegions(b *strings.Builder, res snapshot.Result) {
	fmt.Fprintf(b, " in %d %s", res.RegionCount, plural(res.RegionCount, "region", "regions"))
	if len(res.Regions) > 0 {
		r := res.Regions[0]
		fmt.Fprintf(b, "; largest at %d,%d %dx%d", r.X, r.Y, r.Width, r.Height)
	}
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
