package snapshot

import (
	"errors"
	"fmt"
	"image"
	"math"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
)

// Platform is the platform part of baseline keys: Chromium captures.
const Platform = "chromium"

// DefaultMaxMismatch is the maxMismatch of a snapshot step that sets none:
// up to 0.5 percent of the pixels may differ.
const DefaultMaxMismatch = 0.5

// BaselinesDirName is the directory beside a flow file that holds the
// baselines of its flows.
const BaselinesDirName = "__baselines__"

// maxNameLen bounds a snapshot name so keys stay well inside file name
// limits (255 bytes) with the suffix added.
const maxNameLen = 128

// ErrInvalidName is wrapped by the error of ValidateName.
var ErrInvalidName = errors.New("invalid snapshot name")

// ValidateName checks a snapshot name. A name is 1 to 128 characters of
// ASCII letters, digits, '_', '-' and '.', does not start with '.' and
// contains no "..": it becomes part of a file name, so it must not be able to
// leave the baseline directory, hide the file, or need quoting on any
// filesystem.
func ValidateName(name string) error {
	reason := ""
	switch {
	case name == "":
		reason = "it is empty"
	case len(name) > maxNameLen:
		reason = fmt.Sprintf("it is longer than %d characters", maxNameLen)
	case name[0] == '.':
		reason = "it starts with '.'"
	case strings.Contains(name, ".."):
		reason = `it contains ".."`
	default:
		for _, r := range name {
			if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-' || r == '.') {
				reason = fmt.Sprintf("%q is not allowed (letters, digits, '_', '-' and '.' are)", r)
				break
			}
		}
	}
	if reason != "" {
		return fmt.Errorf("snapshot: %w %q: %s", ErrInvalidName, name, reason)
	}
	return nil
}

// BaselineKey returns the file name of a full-screen baseline:
// "<name>__chromium-<W>x<H>.png", W and H being the capture size.
func BaselineKey(name string, width, height int) (string, error) {
	if err := ValidateName(name); err != nil {
		return "", err
	}
	return fmt.Sprintf("%s__%s-%dx%d.png", name, Platform, width, height), nil
}

// CropBaselineKey returns the file name of a cropped baseline:
// "<name>__chromium-<W>x<H>-crop-<hash>.png", W and H being the size of the
// full capture and hash the 8 lower-case hex digits that identify the crop
// selector. Which selector fields make the hash is the selector's owner's
// business (the flow package hashes them as Argent does, so a cropped
// baseline Argent recorded is found under the same name).
func CropBaselineKey(name string, width, height int, hash string) (string, error) {
	if err := ValidateName(name); err != nil {
		return "", err
	}
	if !cropHashRE().MatchString(hash) {
		return "", fmt.Errorf("snapshot: crop hash %q is not 8 lower-case hex digits", hash)
	}
	return fmt.Sprintf("%s__%s-%dx%d-crop-%s.png", name, Platform, width, height, hash), nil
}

var cropHashRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[0-9a-f]{8}$`) })

// FullPageKey returns the file name of a full-page baseline:
// "<name>__chromium-<W>x<H>-full.png", W and H being the device's viewport
// (not the page's size, which follows its content), so each name has one
// full-page baseline per device class beside its viewport one. It never
// equals a BaselineKey or a CropBaselineKey, whatever the names and sizes:
// before ".png" those end in a digit of the height or in the 8 hex digits
// of a crop hash, this one in "full", which holds no hex digit.
func FullPageKey(name string, width, height int) (string, error) {
	if err := ValidateName(name); err != nil {
		return "", err
	}
	return fmt.Sprintf("%s__%s-%dx%d-full.png", name, Platform, width, height), nil
}

// BaselineDir returns the baseline directory of a flow run by the link link
// protocol's rule (docs/link-protocol.md, "Baselines"):
// "<dir>/__baselines__/<stem>", where dir is the directory of the flow file's
// canonical path and stem is the file name of canonical without its extension.
// When that stem is not a valid flow name (letters, digits, '_' and '-'),
// fallbackStem takes its place: the stem of the path as the caller spelled it,
// or for a nested flow the name of its step. A path or a name may be given; its
// extension is dropped.
func BaselineDir(canonical, fallbackStem string) string {
	stem := fileStem(canonical)
	if !validFlowName(stem) && fallbackStem != "" {
		stem = fileStem(fallbackStem)
	}
	return filepath.Join(filepath.Dir(canonical), BaselinesDirName, stem)
}

func fileStem(p string) string {
	base := filepath.Base(p)
	return strings.TrimSuffix(base, filepath.Ext(base))
}

// validFlowName is the rule for flow names (docs/product.md, "Flow
// files (YAML)").
func validFlowName(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-') {
			return false
		}
	}
	return true
}

// Passes reports whether a comparison passes a snapshot step with the given
// maxMismatch (a percentage, DefaultMaxMismatch when the step sets none):
// the mismatch percentage must not exceed it.
func Passes(res Result, maxMismatch float64) bool {
	return res.MismatchPercent <= maxMismatch
}

// Frame is a rectangle in normalized coordinates: X and Y of the top-left
// corner and the Width and Height, each a fraction 0..1 of the image.
type Frame struct {
	X      float64 `json:"x"`
	Y      float64 `json:"y"`
	Width  float64 `json:"width"`
	Height float64 `json:"height"`
}

// Crop copies the part of img inside frame, the pixels of CropRect.
func Crop(img *Image, f Frame) (*Image, error) {
	r, reason := cropRect(f, img.Width, img.Height)
	if reason != "" {
		return nil, fmt.Errorf("snapshot: crop %s of %q: frame %+v %s", sizeLabel(img.Size(), ""), img.Name, f, reason)
	}
	out := NewImage(r.Dx(), r.Dy())
	out.Name = img.Name
	for y := r.Min.Y; y < r.Max.Y; y++ {
		copy(out.Pix[4*out.Width*(y-r.Min.Y):], img.Pix[4*(y*img.Width+r.Min.X):4*(y*img.Width+r.Max.X)])
	}
	return out, nil
}

// CropRect returns the pixels of a width×height image that Crop copies for
// frame f. Each edge is rounded to the nearest pixel on its own (left =
// round(X*width), right = round((X+Width)*width), and the same for top and
// bottom) and clamped to the image, so the same element crops to the same
// size wherever it sits. A device that captures only this rectangle of its
// viewport (CDP's clip at scale 1) gets the pixels Crop would cut from the
// whole viewport. A frame that leaves no pixel is an error naming the
// frame.
func CropRect(f Frame, width, height int) (image.Rectangle, error) {
	r, reason := cropRect(f, width, height)
	if reason != "" {
		return image.Rectangle{}, fmt.Errorf("snapshot: crop %dx%d: frame %+v %s", width, height, f, reason)
	}
	return r, nil
}

// cropRect is CropRect, with the reason a frame has no pixel.
func cropRect(f Frame, width, height int) (image.Rectangle, string) {
	for _, v := range []float64{f.X, f.Y, f.Width, f.Height} {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return image.Rectangle{}, "is not finite"
		}
	}
	x0, x1 := edge(f.X, width), edge(f.X+f.Width, width)
	y0, y1 := edge(f.Y, height), edge(f.Y+f.Height, height)
	if x1 <= x0 || y1 <= y0 {
		return image.Rectangle{}, "covers no pixel"
	}
	return image.Rect(x0, y0, x1, y1), ""
}

// edge maps a normalized coordinate to a pixel edge, rounded and clamped.
func edge(v float64, size int) int {
	return int(math.Max(0, math.Min(float64(size), math.Round(v*float64(size)))))
}
