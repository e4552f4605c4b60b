package cdp

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// IDPrefix starts every device id.
const IDPrefix = "chromium-cdp-"

// Size bounds of a device viewport, in CSS pixels.
const (
	MinSide = 100
	MaxSide = 4096
)

// ErrBadID is returned for a device id that is not chromium-cdp-<W>x<H>
// with both sides within MinSide..MaxSide.
var ErrBadID = errors.New("bad device id")

// ParseID returns the viewport of a device id such as chromium-cdp-1280x800,
// or of an instance of one (chromium-cdp-1280x800#2, see Pool.Instance).
func ParseID(id string) (width, height int, err error) {
	if base, n, ok := strings.Cut(id, "#"); ok {
		if k, err := strconv.Atoi(n); err != nil || k < 1 || n != strconv.Itoa(k) {
			return 0, 0, fmt.Errorf("%w %q: an instance is %s<W>x<H>#<n>, n from 1", ErrBadID, id, IDPrefix)
		}
		id = base
	}
	rest, ok := strings.CutPrefix(id, IDPrefix)
	if !ok {
		return 0, 0, fmt.Errorf("%w %q: want %s<W>x<H>, for example %s1280x800", ErrBadID, id, IDPrefix, IDPrefix)
	}
	ws, hs, ok := strings.Cut(rest, "x")
	w, errW := strconv.Atoi(ws)
	h, errH := strconv.Atoi(hs)
	if !ok || errW != nil || errH != nil || ws != strconv.Itoa(w) || hs != strconv.Itoa(h) {
		return 0, 0, fmt.Errorf("%w %q: want %s<W>x<H>, for example %s1280x800", ErrBadID, id, IDPrefix, IDPrefix)
	}
	if w < MinSide || w > MaxSide || h < MinSide || h > MaxSide {
		return 0, 0, fmt.Errorf("%w %q: width and height must be within %d..%d", ErrBadID, id, MinSide, MaxSide)
	}
	return w, h, nil
}
