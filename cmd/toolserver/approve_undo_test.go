package main

import (
	"bytes"
	"image/color"
	"os"
	"strings"
	"testing"
)

// TestApproveUndo: approve --undo puts back the baseline approve
// replaced, in the project it wrote into; a baseline changed since the
// approve is refused by name with exit 1 and left as it is; with nothing
// on record it says so and exits 0; a selection beside --undo is a usage
// error.
func TestApproveUndo(t *testing.T) {
	t.Parallel()
	project, dir, baseline := approvableReport(t, false, nil)
	red := solidPNG(t, color.RGBA{255, 0, 0, 255})
	if code, out, errOut := runCLI(t, "approve", "--report", dir, "--undo"); code != exitOK || !strings.Contains(out, "Nothing to undo") {
		t.Fatalf("undo before an approve: exit %d\n%s\n%s", code, out, errOut)
	}
	approveAndCheck := func() {
		t.Helper()
		if code, out, errOut := runCLI(t, "approve", "--report", dir, "--all"); code != exitOK {
			t.Fatalf("approve: exit %d\n%s\n%s", code, out, errOut)
		}
		if b, _ := os.ReadFile(baseline); bytes.Equal(b, red) {
			t.Fatal("approve wrote nothing")
		}
	}
	approveAndCheck()
	if code, _, errOut := runCLI(t, "approve", "--report", dir, "--undo", "--all"); code != exitUsage || !strings.Contains(errOut, "--undo takes only") {
		t.Errorf("--undo --all: exit %d\n%s\nwant a usage error", code, errOut)
	}
	if code, _, errOut := runCLI(t, "approve", "--report", dir, "--undo", "--project", t.TempDir()); code != exitUsage || !strings.Contains(errOut, "the last approve of this report wrote into "+project) {
		t.Errorf("--undo into another project: exit %d\n%s\nwant a usage error naming the approve's project", code, errOut)
	}
	code, out, errOut := runCLI(t, "approve", "--report", dir, "--undo")
	if code != exitOK || !strings.Contains(out, "✓ restored .argent/flows/__baselines__/checkout/home__chromium-cdp-400x300.png") {
		t.Fatalf("undo: exit %d\n%s\n%s", code, out, errOut)
	}
	if b, _ := os.ReadFile(baseline); !bytes.Equal(b, red) {
		t.Fatal("undo did not put the replaced baseline back")
	}

	// Approve again (the baseline has the hash the run recorded again),
	// then change the baseline by hand: undo refuses it.
	approveAndCheck()
	mine := solidPNG(t, color.RGBA{1, 2, 3, 255})
	if err := os.WriteFile(baseline, mine, 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut = runCLI(t, "approve", "--report", dir, "--undo")
	if code != exitFailed || !strings.Contains(out, "✗ refused .argent/flows/__baselines__/checkout/home__chromium-cdp-400x300.png: changed since the approve") {
		t.Fatalf("undo of a changed baseline: exit %d\n%s\n%s\nwant 1 and the refusal", code, out, errOut)
	}
	if b, _ := os.ReadFile(baseline); !bytes.Equal(b, mine) {
		t.Fatal("undo overwrote a baseline changed since the approve")
	}
}
