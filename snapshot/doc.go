// Package snapshot is the visual comparison engine: it decodes PNG captures
// and baselines into straight 8-bit RGBA, compares two images with the exact
// semantics of pixelmatch 7.2 (YIQ colour distance under a threshold,
// anti-aliasing detection, translucent pixels blended over pixelmatch's
// default pseudo-checkerboard) or of pixelmatch 8.0 (OKLab with the HyAB
// distance, its lookup tables and checkerboard, windowed counts, ignored
// pixels), reports how many pixels changed and where (regions), draws a
// diff image, and owns the baseline rules: key naming,
// the baseline directory of a flow, crops to a normalized frame, the
// maxMismatch verdict and atomic baseline writes.
//
// The package is pure image code. It works on bytes and decoded images, never
// on paths only, because over a link a baseline arrives as bytes. It imports
// nothing of this module and no browser code.
package snapshot
