package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"strings"
	"time"

	"github.com/toolserver/toolserver/internal/atomicfile"

	"github.com/toolserver/toolserver/snapshot"
)

const snapshotUsage = "usage: toolserver snapshot diff A.png B.png [--threshold 0.1] [--include-aa] [--diff OUT.png] [--json]"

// diffReport is the --json output of snapshot diff: the comparison result
// (width, height, mismatchPixels, mismatchPercent, identical, regions, ...)
// plus the in-process time of decoding and comparing.
type diffReport struct {
	snapshot.Result
	DurationMs float64 `json:"durationMs"`
	DiffFile   string  `json:"diffFile,omitempty"`
}

// runSnapshot runs `toolserver snapshot diff`: it compares two PNG files and
// exits 0 when no pixel differs, 1 when some do, 2 on an error (a size
// mismatch included). Flags may come before or after the two files.
func runSnapshot(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 || args[0] != "diff" {
		if len(args) > 0 && (args[0] == "-h" || args[0] == "--help") {
			fmt.Fprintln(stderr, snapshotUsage)
			return flag.ErrHelp
		}
		return usageError("%s", snapshotUsage)
	}
	fs := flag.NewFlagSet("snapshot diff", flag.ContinueOnError)
	fs.SetOutput(io.Discard) // errors are reported once, by report
	threshold := fs.Float64("threshold", 0.1, "matching threshold 0..1; smaller is more sensitive")
	includeAA := fs.Bool("include-aa", false, "count anti-aliased pixels as differences")
	diffOut := fs.String("diff", "", "write the diff image to this PNG file")
	asJSON := fs.Bool("json", false, "print one JSON object")
	files, err := parseInterspersed(fs, args[1:])
	if errors.Is(err, flag.ErrHelp) {
		fmt.Fprintln(stderr, snapshotUsage)
		fs.SetOutput(stderr)
		fs.PrintDefaults()
		return err
	}
	if err != nil {
		return usageError("snapshot diff: %v\n%s", err, snapshotUsage)
	}
	if len(files) != 2 {
		return usageError("snapshot diff: want two PNG files, got %d\n%s", len(files), snapshotUsage)
	}
	if *threshold < 0 || *threshold > 1 {
		return usageError("snapshot diff: --threshold %v is outside 0..1", *threshold)
	}
	if err := ctx.Err(); err != nil {
		return withExit(exitInfra, err)
	}
	a, err := os.ReadFile(files[0])
	if err != nil {
		return withExit(exitInfra, err)
	}
	b, err := os.ReadFile(files[1])
	if err != nil {
		return withExit(exitInfra, err)
	}

	// One comparison allocates its images once, and they stay live until
	// the command ends; a collection meanwhile finds nothing to free and
	// takes one of the cores the decoders run on (about 1-2 ms of 10 on a
	// 1280x800 pair on 2 cores). So the collector waits until we are done.
	defer debug.SetGCPercent(debug.SetGCPercent(-1))

	opts := snapshot.DefaultOptions()
	opts.Threshold = *threshold
	opts.IncludeAA = *includeAA
	opts.Diff = *diffOut != ""
	start := time.Now()
	res, err := snapshot.CompareBytes(files[0], a, files[1], b, opts)
	elapsed := time.Since(start)
	if err != nil {
		return withExit(exitInfra, err)
	}
	if *diffOut != "" {
		data, err := snapshot.EncodePNG(res.Diff)
		if err == nil {
			err = atomicfile.WriteFile(*diffOut, data)
		}
		if err != nil {
			return withExit(exitInfra, err)
		}
	}

	if *asJSON {
		rep := diffReport{Result: res, DurationMs: float64(elapsed.Microseconds()) / 1000, DiffFile: *diffOut}
		enc := json.NewEncoder(stdout)
		if err := enc.Encode(rep); err != nil {
			return withExit(exitInfra, err)
		}
	} else {
		fmt.Fprintln(stdout, summaryLine(res, *threshold, *diffOut))
	}
	if res.MismatchPixels > 0 {
		return silentExit(exitFailed)
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

// parseInterspersed parses flags that may appear before, between and after
// the positional arguments, which flag.FlagSet alone stops at. After "--"
// everything is positional.
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return pos, nil
		}
		// fs.Parse consumed a "--" if it stopped there.
		if consumed := len(args) - len(rest); consumed > 0 && args[consumed-1] == "--" {
			return append(pos, rest...), nil
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}
