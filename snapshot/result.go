package snapshot

import (
	"fmt"
	"image"
)

// Result is the outcome of comparing two images of the same size.
type Result struct {
	Width  int `json:"width"`
	Height int `json:"height"`
	// Metric is the colour distance compared with (Options.Metric).
	Metric Metric `json:"metric"`
	// WindowSize is Options.WindowSize: 0, or the side of the windows
	// MismatchPixels was counted in.
	WindowSize int `json:"windowSize"`
	// MismatchPixels is the count a limit sees, pixelmatch's return value:
	// the pixels whose colour distance exceeds the threshold and that are
	// neither excluded as anti-aliasing nor ignored; with a WindowSize, the
	// most of them in any window.
	MismatchPixels int `json:"mismatchPixels"`
	// MismatchPercent is MismatchPixels as a percentage of all pixels, or
	// with a WindowSize of the window's area (N×N, N clamped to the image).
	MismatchPercent float64 `json:"mismatchPercent"`
	// TotalMismatchPixels counts the differing pixels of the whole image:
	// MismatchPixels without a WindowSize.
	TotalMismatchPixels int `json:"totalMismatchPixels"`
	// AntialiasedPixels counts pixels above the threshold that were judged
	// anti-aliasing and therefore not counted (always 0 with IncludeAA).
	AntialiasedPixels int `json:"antialiasedPixels"`
	// Identical is true when the two pixel buffers are byte for byte equal;
	// the comparison then took the fast path without any colour distance.
	Identical bool `json:"identical"`
	// Regions are the changed areas, largest first, at most MaxRegions.
	Regions []Region `json:"regions"`
	// RegionCount is the number of changed areas before the MaxRegions cap.
	RegionCount int `json:"regionCount"`
	// Diff is the diff image when Options.Diff was set, else nil: changed
	// pixels red, or green where the second image is darker, anti-aliased
	// pixels yellow, everything else (ignored pixels included) a faded
	// grayscale copy of the first image.
	Diff *Image `json:"-"`
}

// Region is the bounding box of one connected changed area and the number
// of changed pixels inside it.
type Region struct {
	X      int `json:"x"`
	Y      int `json:"y"`
	Width  int `json:"width"`
	Height int `json:"height"`
	Pixels int `json:"pixels"`
}

// SizeMismatchError reports two images that cannot be compared because their
// sizes differ. A and B are the sizes; NameA and NameB label the inputs when
// known. A size change is never reported as a percentage.
type SizeMismatchError struct {
	A, B         image.Point
	NameA, NameB string
}

// Error returns "snapshot: image sizes differ: 1280x800 (a.png) vs 1280x900
// (b.png)", leaving out names that are empty.
func (e *SizeMismatchError) Error() string {
	return fmt.Sprintf("snapshot: image sizes differ: %s vs %s", sizeLabel(e.A, e.NameA), sizeLabel(e.B, e.NameB))
}

func sizeLabel(p image.Point, name string) string {
	if name == "" {
		return fmt.Sprintf("%dx%d", p.X, p.Y)
	}
	return fmt.Sprintf("%dx%d (%s)", p.X, p.Y, name)
}
