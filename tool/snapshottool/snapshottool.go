// Package snapshottool owns the screenshot-diff tool: it compares two PNG
// files a client sends (or one file against a live capture of a device)
// with the snapshot engine and returns the summary, the changed regions
// and the diff image as an artifact.
package snapshottool

import (
	"context"
	"errors"
	"fmt"
	"image"
	"os"
	"path/filepath"
	"time"

	"github.com/toolserver/toolserver/device/cdp"
	"github.com/toolserver/toolserver/fault"
	"github.com/toolserver/toolserver/flow"
	"github.com/toolserver/toolserver/internal/atomicfile"
	"github.com/toolserver/toolserver/snapshot"
	"github.com/toolserver/toolserver/store"
	"github.com/toolserver/toolserver/tool"
	"github.com/toolserver/toolserver/tool/devicetool"
	"github.com/toolserver/toolserver/wire"
)

// Tools is the snapshot tool set.
type Tools struct {
	Pool      *cdp.Pool
	Artifacts *store.Artifacts
}

// Register adds screenshot-diff to r.
func (t *Tools) Register(r *tool.Registry) { r.Add(t.diff()) }

func (t *Tools) diff() *tool.Tool {
	return &tool.Tool{
		Name: "screenshot-diff",
		Description: "Compare two PNG screenshots (baselinePath and currentPath), or a baseline against a live capture of a device, " +
			"with pixelmatch's algorithm. Returns the mismatch count and percent, the changed regions (largest first) and the diff image " +
			"(changed pixels red over a faded baseline, anti-aliasing yellow). Different sizes are reported as such, never as a percentage.",
		InputSchema: tool.Object(map[string]*tool.Schema{
			"baselinePath": tool.String("The baseline PNG."),
			"currentPath":  tool.String("The PNG to compare; omit it to capture the device instead."),
			"outputDir":    tool.String("Also write the diff image into this directory on the tool-server's machine."),
			"device":       tool.String("Device to capture when currentPath is not given, e.g. chromium-cdp-1280x800."),
			"udid":         tool.String("Alias of device."),
			"threshold":    tool.Number("pixelmatch threshold, 0..1 (default 0.1); smaller is more sensitive.", 0, 1),
			"includeAA":    tool.Bool("Count anti-aliased pixels as differences."),
			"maxMismatch":  tool.Number("Percent of pixels allowed to differ for passed to be true (default 0.5).", 0, 100),
			"metric":       tool.Enum("The colour distance: yiq (pixelmatch 7.2's, the default) or oklab (pixelmatch 8.0's).", "yiq", "oklab"),
			"windowSize":   tool.Integer("Count pixelmatch 8's windowed count: the most differing pixels in any N×N square (mismatchPercent is then of the square).", 1, flow.MaxWindowSize),
			"ignore":       ignoreSchema(),
		}, "baselinePath"),
		FileInputs: []wire.FileInput{
			{Target: "baselinePath", Path: "${baselinePath}", Kind: "file"},
			{Target: "currentPath", Path: "${currentPath}", Kind: "file", Optional: true},
			{Target: "outputDir", Path: "${outputDir}", Kind: "probe", Optional: true},
		},
		OutputHint: "image",
		Run:        t.run,
	}
}

type diffArgs struct {
	BaselinePath string      `json:"baselinePath"`
	CurrentPath  string      `json:"currentPath"`
	OutputDir    string      `json:"outputDir"`
	Device       string      `json:"device"`
	UDID         string      `json:"udid"`
	Threshold    *float64    `json:"threshold"`
	IncludeAA    bool        `json:"includeAA"`
	MaxMismatch  *float64    `json:"maxMismatch"`
	Metric       string      `json:"metric"`
	WindowSize   int         `json:"windowSize"`
	Ignore       []flow.Rect `json:"ignore"`
}

// ignoreSchema is the ignore argument: rectangles left out of the count.
func ignoreSchema() *tool.Schema {
	side := func(name string, min float64) *tool.Schema {
		return tool.Integer(name+" in pixels.", min, 1<<26)
	}
	rect := tool.Object(map[string]*tool.Schema{"x": side("Left", 0), "y": side("Top", 0), "width": side("Width", 1), "height": side("Height", 1)}, "x", "y", "width", "height")
	return &tool.Schema{Type: "array", Items: rect, Description: fmt.Sprintf("At most %d rectangles of the images, in pixels from the top left, left out of the comparison (pixelmatch 8's ignoreMask) and drawn unchanged in the diff.", flow.MaxIgnoreRegions)}
}

// readPNG returns the bytes of the PNG argument field names, and the
// name to give it in messages.
func (t *Tools) readPNG(call *tool.Call, field, path string) ([]byte, string, error) {
	if path == "" {
		return nil, "", fault.FieldError(field, "%s: required", field)
	}
	// The bytes sent with the call, named by the client's path. On a
	// remote server they are the only way in (tool.Registry.Remote).
	if f := call.Files[field]; f != nil && f.HasContent {
		return f.Content, f.Path, nil
	}
	b, err := readFile(field, path)
	return b, path, err
}

// readFile reads a PNG of this machine.
func readFile(field, path string) ([]byte, error) {
	st, err := os.Stat(path)
	if err == nil && st.Size() > snapshot.MaxPixels*4 {
		return nil, fault.FieldError(field, "%s: %s is too large to be a screenshot (%d bytes)", field, path, st.Size())
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fault.FieldError(field, "%s: %v", field, err)
	}
	return b, nil
}

func (t *Tools) run(ctx context.Context, call *tool.Call) (any, error) {
	a, err := tool.Decode[diffArgs](call)
	if err != nil {
		return nil, err
	}
	if call.Remote && a.OutputDir != "" {
		return nil, fault.FieldError("outputDir", "outputDir: this tool-server answers other machines, so it writes none of its own directories: the diff image is in the result as an artifact (diff)")
	}
	base, baseName, err := t.readPNG(call, "baselinePath", a.BaselinePath)
	if err != nil {
		return nil, err
	}
	var cur []byte
	var curName string
	switch {
	case a.CurrentPath != "":
		if cur, curName, err = t.readPNG(call, "currentPath", a.CurrentPath); err != nil {
			return nil, err
		}
	default:
		id := a.Device
		if id == "" {
			id = a.UDID
		}
		if id == "" {
			return nil, fault.FieldError("currentPath", "give currentPath, or device to compare with a live capture")
		}
		d, err := devicetool.Acquire(ctx, t.Pool, call, id)
		if err != nil {
			return nil, err
		}
		// The capture is a call on the device like any other: it takes
		// its turn (tool.Call.HoldDevice).
		if ctx, err = call.HoldDevice(ctx, d.ID()); err != nil {
			return nil, err
		}
		shot, err := d.StableScreenshot(ctx, 5)
		if err != nil {
			return nil, devicetool.DeviceError(err)
		}
		cur, curName = shot.PNG, "capture of "+id
	}
	opts := snapshot.DefaultOptions()
	if a.Threshold != nil {
		opts.Threshold = *a.Threshold
	}
	opts.IncludeAA = a.IncludeAA
	opts.Metric, opts.WindowSize = snapshot.Metric(a.Metric), a.WindowSize
	if len(a.Ignore) > flow.MaxIgnoreRegions {
		return nil, fault.FieldError("ignore", "ignore lists %d rectangles; at most %d", len(a.Ignore), flow.MaxIgnoreRegions)
	}
	for _, r := range a.Ignore {
		opts.Ignore = append(opts.Ignore, image.Rect(r.X, r.Y, r.X+r.Width, r.Y+r.Height))
	}
	// The diff image is drawn only where it goes somewhere: without it
	// the comparison decodes only the rows that differ.
	opts.Diff = t.Artifacts != nil || a.OutputDir != ""
	start := time.Now()
	res, err := snapshot.CompareBytes(baseName, base, curName, cur, opts)
	var sizes *snapshot.SizeMismatchError
	switch {
	case errors.As(err, &sizes):
		return map[string]any{
			"identical": false, "passed": false, "sizeMismatch": true,
			"baselineSize": map[string]int{"width": sizes.A.X, "height": sizes.A.Y},
			"currentSize":  map[string]int{"width": sizes.B.X, "height": sizes.B.Y},
			"summary":      err.Error(),
		}, nil
	case err != nil:
		return nil, &fault.Error{Kind: fault.Unprocessed, Message: err.Error(), Err: err}
	}
	max := snapshot.DefaultMaxMismatch
	if a.MaxMismatch != nil {
		max = *a.MaxMismatch
	}
	out := map[string]any{
		"width": res.Width, "height": res.Height, "identical": res.Identical,
		"mismatchPixels": res.MismatchPixels, "mismatchPercent": res.MismatchPercent,
		"antialiasedPixels": res.AntialiasedPixels, "regions": res.Regions, "regionCount": res.RegionCount,
		"passed": snapshot.Passes(res, max), "durationMs": float64(time.Since(start).Microseconds()) / 1000,
		"summary": summary(res),
	}
	if a.Metric != "" {
		out["metric"] = res.Metric
	}
	if a.WindowSize > 0 {
		out["windowSize"], out["totalMismatchPixels"] = res.WindowSize, res.TotalMismatchPixels
	}
	if res.Diff != nil && !res.Identical {
		png, err := snapshot.EncodePNG(res.Diff)
		if err != nil {
			return nil, err
		}
		if t.Artifacts != nil {
			h, err := t.Artifacts.Put("diff.png", "image/png", png)
			if err != nil {
				return nil, err
			}
			out["diff"] = h
		}
		if a.OutputDir != "" {
			p := filepath.Join(a.OutputDir, "diff.png")
			if err := os.MkdirAll(a.OutputDir, 0o755); err != nil {
				return nil, fault.FieldError("outputDir", "outputDir: %v", err)
			}
			if err := atomicfile.WriteFile(p, png); err != nil {
				return nil, fault.FieldError("outputDir", "outputDir: %v", err)
			}
			out["diffPath"] = p
		}
	}
	return out, nil
}

func summary(res snapshot.Result) string {
	if res.Identical || res.MismatchPixels == 0 {
		return fmt.Sprintf("%dx%d: no pixel differs", res.Width, res.Height)
	}
	s := fmt.Sprintf("%dx%d: %d pixels differ (%.2f%%) in %d changed areas", res.Width, res.Height, res.MismatchPixels, res.MismatchPercent, res.RegionCount)
	if len(res.Regions) > 0 {
		g := res.Regions[0]
		s += fmt.Sprintf("; the largest is %dx%d at (%d, %d)", g.Width, g.Height, g.X, g.Y)
	}
	return s
}
