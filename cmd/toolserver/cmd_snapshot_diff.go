package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/toolserver/toolserver/snapshot"
	"github.com/toolserver/toolserver/snapshot/pngdiff"
)

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
	rep, err := pngdiff.Files(ctx, files[0], files[1], pngdiff.Options{
		Threshold: opts.threshold,
		IncludeAA: opts.includeAA,
		Metric:    opts.metric,
		Window:    opts.window,
		Ignore:    opts.ignore,
		DiffFile:  opts.diff,
	})
	var ae *pngdiff.ArgError
	if errors.As(err, &ae) {
		return usageError("snapshot diff: %s", ae.Error())
	}
	if err != nil {
		return err
	}
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
		fmt.Fprintln(opts.stdout, pngdiff.Summary(rep.Result, opts.threshold, opts.diff))
	}
	if rep.MismatchPixels > 0 {
		return failed(nil)
	}
	return nil
}
