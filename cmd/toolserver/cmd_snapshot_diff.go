package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"runtime/debug"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/toolserver/toolserver/internal/atomicfile"
	"github.com/toolserver/toolserver/snapshot"
)

// diffReport is the -o json|yaml output of snapshot diff: the comparison
// result (width, height, mismatchPixels, mismatchPercent, identical,
// regions, ...) plus the in-process time of decoding and comparing.
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
	diff      string
	output    outputFlags
}

func newSnapshotDiffCommand(s streams) *cobra.Command {
	opts := snapshotDiffOptions{streams: s}
	cmd := &cobra.Command{
		Use:   "diff A.png B.png [flags]",
		Short: "Compare two PNG files pixel by pixel",
		Long: `Compare two PNG files of the same size with pixelmatch's algorithm and print
how many pixels differ and where. Flags may come before, between or after
the two files.`,
		Example: `  toolserver snapshot diff baseline.png current.png
  toolserver snapshot diff a.png b.png --threshold 0 --diff diff.png -o json`,
		Args: exactArgs(2, "two PNG files"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runSnapshotDiff(cmd.Context(), opts, args)
		},
	}
	setExitStatus(cmd, exitStatusSnapshotDiff)
	f := cmd.Flags()
	f.Float64Var(&opts.threshold, "threshold", 0.1, "matching threshold 0..1; smaller is more sensitive")
	f.BoolVar(&opts.includeAA, "include-aa", false, "count anti-aliased pixels as differences")
	f.StringVar(&opts.diff, "diff", "", "write the diff image to this PNG `file`")
	opts.output.register(cmd, f)
	cmd.ValidArgsFunction = completePNGFiles
	_ = cmd.MarkFlagFilename("diff", "png")
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

	co := snapshot.DefaultOptions()
	co.Threshold = opts.threshold
	co.IncludeAA = opts.includeAA
	co.Diff = opts.diff != ""
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
	default:
		pct := fmt.Sprintf("%.2f", res.MismatchPercent)
		if res.MismatchPercent < 0.1 {
			pct = fmt.Sprintf("%.4f", res.MismatchPercent)
		}
		fmt.Fprintf(&b, "%d %s differ (%s%%) in %d %s", res.MismatchPixels, plural(res.MismatchPixels, "pixel", "pixels"),
			pct, res.RegionCount, plural(res.RegionCount, "region", "regions"))
		if len(res.Regions) > 0 {
			r := res.Regions[0]
			fmt.Fprintf(&b, "; largest at %d,%d %dx%d", r.X, r.Y, r.Width, r.Height)
		}
	}
	if res.AntialiasedPixels > 0 {
		fmt.Fprintf(&b, " (%d anti-aliased %s ignored)", res.AntialiasedPixels, plural(res.AntialiasedPixels, "pixel", "pixels"))
	}
	if diffFile != "" {
		fmt.Fprintf(&b, "; diff written to %s", diffFile)
	}
	return b.String()
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
