package cdptest

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// BrowserPIDs lists the main Chromium processes started for a device of
// the given size, found in /proc by its --window-size flag (the helper
// processes Chromium starts carry --type=). Tests that kill a browser to
// see a crash handled use a size no other test uses, on a pool of their
// own (not the shared one, whose browser every test of the binary uses).
func BrowserPIDs(t testing.TB, w, h int) []int {
	t.Helper()
	marker := "--window-size=" + strconv.Itoa(w) + "," + strconv.Itoa(h)
	ents, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	var pids []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil {
			continue
		}
		args := strings.Split(string(b), "\x00")
		hasMarker, helper := false, false
		for _, a := range args {
			hasMarker = hasMarker || a == marker
			helper = helper || strings.HasPrefix(a, "--type=")
		}
		if hasMarker && !helper && strings.Contains(filepath.Base(args[0]), "chrom") {
			pids = append(pids, pid)
		}
	}
	return pids
}
