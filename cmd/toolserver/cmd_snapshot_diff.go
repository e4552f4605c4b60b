package main

import (
	"context"
	"encoding/json"
	"fmt"
	"image"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/toolserver/toolserver/fault"
	"github.com/toolserver/toolserver/internal/atomicfile"
	"github.com/toolserver/toolserver/snapshot"
)

// diffReport is the -o json|yaml output of snapshot diff: the comparison
// result (width, height, metric, windowSize, mismatchPixels,
// mismatchPercent, identical, regions, ...) plus the in-process time of
// decoding and comparing.
type diffReport struct {
	snapshot.Result
	DurationMs float64 `json:"durationMs"`
	DiffFile   string  `json:"diffFile,omitempty"`
}

// snapshotDiffOptions are the flags of snapshot diff.
type snapshotDiffOptions struct {
	streams
	threshold float64
	includeAA bool
	metric    string
	window    int
	ignore    []string
	diff      string
	output    outputFlags
}

// Caps on --ignore: rectangles per call, and the digits of each number
// (no image is wider or taller than snapshot.MaxPixels).
const (
	maxIgnoreRects = 256
	maxIgnoreValue = snapshot.MaxPixels
)

func newSnapshotDiffCommand(s streams) *cobra.Command {
	opts := snapshotDiffOptions{streams: s}
	cmd := &cobra.Command{
		Use:   "diff A.png B.png [flags]",
		Short: "Compare two PNG files pixel by pixel",
		Long: `Compare two PNG files of the same size with pixelmatch's algorithm and print
how many pixels differ and where. Flags may come before, between or after
the two files.`,
		Example: `  toolserver snapshot diff baseline.png current.png
  toolserver snapshot diff a.png b.png --threshold 0 --diff diff.png -o json
  toolserver snapshot diff a.png b.png --metric oklab --window 16 --ignore 0,0,1280,64`,
		Args: exactArgs(2, "two PNG files"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runSnapshotDiff(cmd.Context(), opts, args)
		},
	}
	setExitStatus(cmd, exitStatusSnapshotDiff)
	f := cmd.Flags()
	f.Float64Var(&opts.threshold, "threshold", 0.1, "matching threshold 0..1; smaller is more sensitive")
	f.BoolVar(&opts.includeAA, "include-aa", false, "count anti-aliased pixels as differences")
	f.StringVar(&opts.metric, "metric", string(snapshot.MetricYIQ), "colour distance: yiq (pixelmatch 7.2) or oklab (pixelmatch 8.0)")
	f.IntVar(&opts.window, "window", 0, "count the most differing pixels in any `N`xN square instead of all (0: all)")
	f.StringArrayVar(&opts.ignore, "ignore", nil, "leave the pixels of the rectangle `X,Y,W,H` out of the comparison (repeatable)")
	f.StringVar(&opts.diff, "diff", "", "write the diff image to this PNG `file`")
	opts.output.register(cmd, f)
	cmd.ValidArgsFunction = completePNGFiles
	_ = cmd.MarkFlagFilename("diff", "png")
	_ = cmd.RegisterFlagCompletionFunc("metric", cobra.FixedCompletions([]string{string(snapshot.MetricYIQ), string(snapshot.MetricOKLab)}, cobra.ShellCompDirectiveNoFileComp))
	return cmd
}

// runSnapshotDiff compares two PNG files: exit 0 when no pixel differs,
// 1 when some do, 2 on an error (a size mismatch included).
func runSnapshotDiff(ctx context.Context, opts snapshotDiffOptions, files []string) error {
	format, err := opts.output.resolve()
	if err != nil {
		return err
	}
	if opts.threshold < 0 || opts.threshold > 1 {
		return usageError("snapshot diff: --threshold %v is outside 0..1", opts.threshold)
	}
	co := snapshot.DefaultOptions()
	co.Threshold = opts.threshold
	co.IncludeAA = opts.includeAA
	co.Diff = opts.diff != ""
	if err := opts.compareOptions(&co); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	a, err := os.ReadFile(files[0])
	if err != nil {
		return err
	}
	b, err := os.ReadFile(files[1])
	if err != nil {
		return err
	}

	// One comparison allocates its images once, and they stay live until
	// the command ends; a collection meanwhile finds nothing to free and
	// takes one of the cores the decoders run on (about 1-2 ms of 10 on a
	// 1280x800 pair on 2 cores). So the collector waits until we are done.
	defer debug.SetGCPercent(debug.SetGCPercent(-1))

	start := time.Now()
	res, err := snapshot.CompareBytes(files[0], a, files[1], b, co)
	elapsed := time.Since(start)
	if err != nil {
		return err
	}
	if opts.diff != "" {
		data, err := snapshot.EncodePNG(res.Diff)
		if err == nil {
			err = atomicfile.WriteFile(opts.diff, data)
		}
		if err != nil {
			return err
		}
	}

	rep := diffReport{Result: res, DurationMs: float64(elapsed.Microseconds()) / 1000, DiffFile: opts.diff}
	switch format {
	case formatJSON:
		// One object on one line, as scripts and the benchmarks read it.
		if err := json.NewEncoder(opts.stdout).Encode(rep); err != nil {
			return err
		}
	case formatYAML:
		if err := printYAML(opts.stdout, rep); err != nil {
			return err
		}
	default:
		fmt.Fprintln(opts.stdout, summaryLine(res, opts.threshold, opts.diff))
	}
	if res.MismatchPixels > 0 {
		return failed(nil)
	}
	return nil
}

// compareOptions checks --metric, --window and --ignore into co: a usage
// error names the flag and the value.
func (opts snapshotDiffOptions) compareOptions(co *snapshot.Options) error {
	switch m := snapshot.Metric(opts.metric); m {
	case snapshot.MetricYIQ, snapshot.MetricOKLab:
		co.Metric = m
	default:
		return usageError("snapshot diff: --metric %q is not one of yiq, oklab", opts.metric)
	}
	if opts.window < 0 || opts.window > maxIgnoreValue {
		return usageError("snapshot diff: --window %d is outside 0..%d (0 counts the whole image)", opts.window, maxIgnoreValue)
	}
	co.WindowSize = opts.window
	if len(opts.ignore) > maxIgnoreRects {
		return usageError("snapshot diff: %d --ignore rectangles, at most %d", len(opts.ignore), maxIgnoreRects)
	}
	for _, v := range opts.ignore {
		r, err := parseRect(v)
		if err != nil {
			return usageError("snapshot diff: --ignore %q: %v", fault.Clip(v, 64, fault.Beyond, fault.Bytewise), err)
		}
		co.Ignore = append(co.Ignore, r)
	}
	return nil
}

// parseRect reads "X,Y,W,H" in pixels: X and Y from 0, W and H from 1.
func parseRect(v string) (image.Rectangle, error) {
	parts := strings.Split(v, ",")
	if len(parts) != 4 {
		return image.Rectangle{}, fmt.Errorf("want X,Y,W,H, four whole numbers of pixels")
	}
	var n [4]int
	for i, p := range parts {
		x, err := strconv.Atoi(strings.TrimSpace(p))
		if err != nil || x < 0 || x > maxIgnoreValue {
			return image.Rectangle{}, fmt.Errorf("%s must be a whole number of pixels 0..%d, got %q", "XYWH"[i:i+1], maxIgnoreValue, fault.Clip(p, 24, fault.Beyond, fault.Bytewise))
		}
		if i >= 2 && x == 0 {
			return image.Rectangle{}, fmt.Errorf("%s must be at least 1", "XYWH"[i:i+1])
		}
		n[i] = x
	}
	return image.Rect(n[0], n[1], n[0]+n[2], n[1]+n[3]), nil
}

// summaryLine is the human answer of snapshot diff, for example
// "1280x800: 4120 pixels differ (0.40%) in 3 regions; largest at 10,20 300x40".
func summaryLine(res snapshot.Result, threshold float64, diffFile string) string {
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
