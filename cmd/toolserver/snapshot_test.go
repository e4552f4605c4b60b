package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolserver/toolserver/snapshot"
)

// vector returns the path of a reference image of testdata/vectors.
func vector(name string) string {
	return filepath.Join("..", "..", "testdata", "vectors", "images", filepath.FromSlash(name))
}

// snapshotDiff runs `toolserver snapshot diff args...` in process and
// returns the exit code and both outputs.
func snapshotDiff(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	return runCLI(t, append([]string{"snapshot", "diff"}, args...)...)
}

func TestSnapshotDiffJSON(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name     string
		args     []string
		code     int
		pixels   int
		identity bool
	}{
		{"identical", []string{vector("390x844/identical-a.png"), vector("390x844/identical-b.png"), "--json"}, exitOK, 0, true},
		{"small", []string{"--json", vector("390x844/small-a.png"), vector("390x844/small-b.png")}, exitFailed, 169, false},
		{"threshold 0 after the files", []string{vector("390x844/small-a.png"), vector("390x844/small-b.png"), "--threshold", "0", "--json"}, exitFailed, 229, false},
		{"include-aa between the files", []string{vector("1280x800/aa-a.png"), "--include-aa", vector("1280x800/aa-b.png"), "--json"}, exitFailed, 2511, false},
		{"aa", []string{"--json", "--", vector("1280x800/aa-a.png"), vector("1280x800/aa-b.png")}, exitFailed, 104, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, stdout, stderr := snapshotDiff(t, c.args...)
			if code != c.code {
				t.Fatalf("got exit %d, want %d (stderr %q)", code, c.code, stderr)
			}
			if stderr != "" {
				t.Errorf("got stderr %q, want none", stderr)
			}
			var got map[string]any
			if err := json.Unmarshal([]byte(stdout), &got); err != nil {
				t.Fatalf("stdout %q: %v", stdout, err)
			}
			for _, k := range []string{"width", "height", "mismatchPixels", "mismatchPercent", "durationMs", "identical", "regions"} {
				if _, ok := got[k]; !ok {
					t.Errorf("JSON lacks %q: %s", k, stdout)
				}
			}
			if got["mismatchPixels"] != float64(c.pixels) || got["identical"] != c.identity {
				t.Errorf("got mismatchPixels %v identical %v, want %d %v", got["mismatchPixels"], got["identical"], c.pixels, c.identity)
			}
			if d, _ := got["durationMs"].(float64); d <= 0 {
				t.Errorf("got durationMs %v, want > 0", got["durationMs"])
			}
			if regions, _ := got["regions"].([]any); (c.pixels > 0) != (len(regions) > 0) {
				t.Errorf("got regions %v for %d changed pixels", got["regions"], c.pixels)
			}
		})
	}
}

// TestSnapshotDiffMetricWindowIgnore: --metric, --window and --ignore reach
// the comparison (the counts are pixelmatch 8.0.0's, from
// testdata/vectors/pixelmatch8.json), and the JSON names the metric and
// the window.
func TestSnapshotDiffMetricWindowIgnore(t *testing.T) {
	t.Parallel()
	a, b := vector("390x844/small-a.png"), vector("390x844/small-b.png")
	cases := []struct {
		name   string
		args   []string
		metric string
		window int
		pixels int
		total  int
	}{
		{"default", nil, "yiq", 0, 169, 169},
		{"yiq named", []string{"--metric", "yiq"}, "yiq", 0, 169, 169},
		{"oklab", []string{"--metric", "oklab"}, "oklab", 0, 167, 167},
		{"oklab window 16", []string{"--metric=oklab", "--window", "16"}, "oklab", 16, 67, 167},
		{"oklab window 16 with aa", []string{"--metric=oklab", "--window=16", "--include-aa"}, "oklab", 16, 96, 268},
		{"ignore all the change", []string{"--ignore", "0,0,390,844"}, "yiq", 0, 0, 0},
		{"ignore twice, window", []string{"--metric", "oklab", "--ignore", "97,211,293,633", "--window", "16", "--ignore", "0,0,1,1"}, "oklab", 16, 67, 167},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, stdout, stderr := snapshotDiff(t, append([]string{a, b, "--json"}, c.args...)...)
			want := exitFailed
			if c.pixels == 0 {
				want = exitOK
			}
			if code != want {
				t.Fatalf("got exit %d, want %d (stderr %q)", code, want, stderr)
			}
			var got map[string]any
			if err := json.Unmarshal([]byte(stdout), &got); err != nil {
				t.Fatalf("stdout %q: %v", stdout, err)
			}
			if got["metric"] != c.metric || got["windowSize"] != float64(c.window) ||
				got["mismatchPixels"] != float64(c.pixels) || got["totalMismatchPixels"] != float64(c.total) {
				t.Errorf("got metric %v, windowSize %v, mismatchPixels %v, totalMismatchPixels %v; want %s, %d, %d, %d",
					got["metric"], got["windowSize"], got["mismatchPixels"], got["totalMismatchPixels"], c.metric, c.window, c.pixels, c.total)
			}
		})
	}
	code, stdout, _ := snapshotDiff(t, a, b, "--metric", "oklab", "--window", "16")
	if want := "390x844: 67 pixels differ in the worst 16x16 window (26.17% of it; 167 in all) in 1 region; largest at "; code != exitFailed || !strings.HasPrefix(stdout, want) {
		t.Errorf("human: got exit %d, %q; want 1 and %q...", code, stdout, want)
	}
}

func TestSnapshotDiffHuman(t *testing.T) {
	t.Parallel()
	code, stdout, _ := snapshotDiff(t, vector("390x844/identical-a.png"), vector("390x844/identical-b.png"))
	if code != exitOK || stdout != "390x844: identical\n" {
		t.Fatalf("got exit %d, %q, want 0, \"390x844: identical\"", code, stdout)
	}
	code, stdout, _ = snapshotDiff(t, vector("1280x800/small-a.png"), vector("1280x800/small-b.png"))
	if code != exitFailed || !strings.HasPrefix(stdout, "1280x800: 397 pixels differ (0.0388%) in 1 region; largest at ") {
		t.Fatalf("got exit %d, %q, want 1 and the summary", code, stdout)
	}
}

func TestSnapshotDiffImage(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	out := filepath.Join(dir, "diff.png")
	code, stdout, stderr := snapshotDiff(t, vector("390x844/small-a.png"), vector("390x844/small-b.png"), "--diff", out)
	if code != exitFailed || !strings.HasSuffix(stdout, "; diff written to "+out+"\n") {
		t.Fatalf("got exit %d, %q, %q", code, stdout, stderr)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	img, err := snapshot.Decode(out, data)
	if err != nil {
		t.Fatal(err)
	}
	// Changed pixels are red, or green where the second image got darker.
	red, green := 0, 0
	for i := 0; i < len(img.Pix); i += 4 {
		switch p := img.Pix[i : i+3]; {
		case p[0] == 255 && p[1] == 0 && p[2] == 0:
			red++
		case p[0] == 0 && p[1] == 255 && p[2] == 0:
			green++
		}
	}
	if img.Width != 390 || img.Height != 844 || red+green != 169 || red == 0 || green == 0 {
		t.Fatalf("diff image %dx%d with %d red and %d green pixels, want 390x844 with 169 of both", img.Width, img.Height, red, green)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Fatalf("the output directory holds %d entries, want only diff.png", len(entries))
	}
}

func TestSnapshotDiffErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	notPNG := filepath.Join(dir, "page.png")
	if err := os.WriteFile(notPNG, []byte("<html>404</html>"), 0o644); err != nil {
		t.Fatal(err)
	}
	good := vector("390x844/small-a.png")
	cases := []struct {
		name  string
		args  []string
		code  int
		wants []string // parts of stderr
	}{
		{"size mismatch", []string{vector("390x844/dims-a.png"), vector("390x844/dims-b.png")}, exitInfra, []string{"390x844", "390x940", "dims-a.png", "dims-b.png"}},
		{"missing file", []string{good, filepath.Join(dir, "nope.png")}, exitInfra, []string{"nope.png"}},
		{"not a PNG", []string{notPNG, good, "--json"}, exitInfra, []string{"page.png", "not a PNG file"}},
		{"one file", []string{good}, exitUsage, []string{"want two PNG files"}},
		{"three files", []string{good, good, good}, exitUsage, []string{"want two PNG files"}},
		{"bad flag", []string{good, good, "--fast"}, exitUsage, []string{"-fast"}},
		{"bad threshold", []string{good, good, "--threshold", "2"}, exitUsage, []string{"--threshold 2"}},
		{"bad metric", []string{good, good, "--metric", "lab"}, exitUsage, []string{`--metric "lab" is not one of yiq, oklab`}},
		{"negative window", []string{good, good, "--window", "-1"}, exitUsage, []string{"--window -1 is outside 0.."}},
		{"window not a number", []string{good, good, "--window", "big"}, exitUsage, []string{"--window", "big"}},
		{"ignore of three", []string{good, good, "--ignore", "1,2,3"}, exitUsage, []string{`--ignore "1,2,3": want X,Y,W,H`}},
		{"ignore not a number", []string{good, good, "--ignore", "1,2,x,4"}, exitUsage, []string{`--ignore "1,2,x,4": W must be a whole number of pixels`}},
		{"ignore negative", []string{good, good, "--ignore", "-1,2,3,4"}, exitUsage, []string{`--ignore "-1,2,3,4": X must be`}},
		{"ignore empty", []string{good, good, "--ignore", "1,2,0,4"}, exitUsage, []string{`--ignore "1,2,0,4": W must be at least 1`}},
		{"ignore control characters", []string{good, good, "--ignore", "1,2,\x1b[31m,4"}, exitUsage, []string{`\x1b[31m`}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, stdout, stderr := snapshotDiff(t, c.args...)
			if code != c.code {
				t.Fatalf("got exit %d, want %d (stderr %q)", code, c.code, stderr)
			}
			if stdout != "" {
				t.Errorf("got stdout %q, want none", stdout)
			}
			for _, w := range c.wants {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr %q lacks %q", stderr, w)
				}
			}
			if strings.ContainsRune(stderr, 0x1b) {
				t.Errorf("stderr %q holds a raw escape character", stderr)
			}
		})
	}

	code, _, stderr := runCLI(t, "snapshot", "compare", "a", "b")
	if code != exitUsage || !strings.Contains(stderr, "toolserver snapshot diff") {
		t.Errorf("unknown subcommand: got exit %d, %q; want 2 naming toolserver snapshot diff", code, stderr)
	}
	code, stdout, _ := runCLI(t, "snapshot", "diff", "-h")
	if code != exitOK || !strings.Contains(stdout, "--include-aa") || !strings.Contains(stdout, "EXIT STATUS") {
		t.Errorf("-h: got exit %d, %q; want 0 and the help with --include-aa and EXIT STATUS", code, stdout)
	}
}
