package run

import (
	"os"
	"testing"

	"github.com/toolserver/toolserver/flow"
	"github.com/toolserver/toolserver/snapshot"
)

// The strict default passes a rerun that was not pixel-identical (the
// bundled example's "paid" screen, a rounded input's corners one level
// off in 10 pixels, as a cold run captured it), and applies on
// chromium-cdp-* devices only.
func TestStrictGatePassesCornerNoise(t *testing.T) {
	base, err := os.ReadFile("../../examples/shop/.argent/flows/__baselines__/checkout/paid__chromium-1280x800.png")
	if err != nil {
		t.Fatal(err)
	}
	noisy, err := os.ReadFile("testdata/strict/shop-paid-rerun.png")
	if err != nil {
		t.Fatal(err)
	}
	r := &Runner{}
	d := &flow.Snapshot{Name: "paid", MaxMismatch: flow.DefaultMaxMismatch}
	lim := r.limitsOf(d, "chromium-cdp-1280x800#2")
	if !lim.Strict || describeLimits(lim) != "0 px allowed (default on chromium)" {
		t.Fatalf("limits on chromium: %+v", lim)
	}
	if o := compareOptions(lim); o.Threshold != 0.01 || !o.IncludeAA {
		t.Errorf("the strict default compares with %+v, not the gate TestStrictCorpus measured", o)
	}
	res, err := snapshot.CompareBytes("baseline", base, "rerun", noisy, compareOptions(lim))
	if err != nil || exceeded(lim, res) != "" {
		t.Fatalf("the corner noise fails the strict default: %d px, %v", res.MismatchPixels, err)
	}
	if lim := r.limitsOf(d, "ios-simulator"); lim.Strict || lim.MaxMismatch != flow.DefaultMaxMismatch || lim.MaxMismatchFrom != fromArgent {
		t.Errorf("limits on another device: %+v, want Argent's", lim)
	}
}
