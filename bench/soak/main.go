// Command soak runs the example flows and a page set that stresses
// rendering (a web font from a local file, images, CSS transitions, a
// canvas, emoji) many times in a row with the toolserver binary, and
// reports every false diff, every unsettled capture and the time per run.
//
//	go run ./bench/soak -runs 1000 -bin bin/toolserver
//
// The stress pages' baselines are made by a first run on this machine;
// the example's are the committed ones. Every later run must match them:
// the stress snapshots allow no pixel of difference, and any differing
// pixel in an example snapshot (which tolerates 0.5%) is counted too. A
// false diff is a bug to fix, never a tolerance to raise.
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

func main() {
	runs := flag.Int("runs", 100, "how many runs in a row")
	passes := flag.Int("passes", 10, "runs made by one process (each flow copied this many times), so a browser start is not most of the time")
	bin := flag.String("bin", "bin/toolserver", "the toolserver binary")
	font := flag.String("font", "/usr/share/fonts/truetype/dejavu/DejaVuSerif.ttf", "the TrueType file the fonts page loads as a web font")
	out := flag.String("json", "", "also write the summary as JSON to this file")
	flag.Parse()
	if err := soak(*runs, *passes, *bin, *font, *out, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "soak:", err)
		os.Exit(1)
	}
}

// A finding is one snapshot (or run) that did not come out as expected.
// Run is the process; the pass is the flow's suffix (-p02 …).
type finding struct {
	Run    int    `json:"process"`
	Flow   string `json:"flow"`
	Key    string `json:"key,omitempty"`
	Pixels int    `json:"pixels,omitempty"`
	Reason string `json:"reason"`
}

// summary is what a soak found.
type summary struct {
	Date       string    `json:"date"`
	Runs       int       `json:"runs"`
	Passes     int       `json:"passesPerProcess"`
	Flows      int       `json:"flowsPerRun"`
	Snapshots  int       `json:"snapshotsCompared"`
	FalseDiffs []finding `json:"falseDiffs"`
	Unsettled  []finding `json:"unsettled"`
	Failures   []finding `json:"otherFailures"`
	MinMs      float64   `json:"runMsMin"`
	MedianMs   float64   `json:"runMsMedian"`
	P95Ms      float64   `json:"runMsP95"`
	MaxMs      float64   `json:"runMsMax"`
	TotalS     float64   `json:"totalSeconds"`
}

// The parts of a flow report the soak reads (flow.Report on the wire).
type report struct {
	Flow  string `json:"flow"`
	OK    bool   `json:"ok"`
	Steps []struct {
		Kind        string `json:"kind"`
		Flow        string `json:"flow"`
		Status      string `json:"status"`
		Reason      string `json:"reason"`
		Warning     string `json:"warning"`
		SnapshotKey string `json:"snapshotKey"`
		Target      string `json:"target"`
		Mismatch    *struct {
			Pixels int `json:"pixels"`
		} `json:"mismatch"`
	} `json:"steps"`
}

func soak(runs, passes int, bin, font, out string, w io.Writer) error {
	if runs < 1 || passes < 1 {
		return errors.New("-runs and -passes must be at least 1")
	}
	passes = min(passes, runs)
	procs := (runs + passes - 1) / passes
	runs = procs * passes
	bin, err := filepath.Abs(bin)
	if err != nil {
		return err
	}
	if _, err := os.Stat(bin); err != nil {
		return fmt.Errorf("the binary: %w (run make build)", err)
	}
	src, err := sourceDir()
	if err != nil {
		return err
	}
	tmp, err := os.MkdirTemp("", "toolserver-soak-")
	if err != nil {
		return err
	}
	keep := false
	defer func() {
		if keep {
			fmt.Fprintf(w, "kept %s for inspection (failed runs' images are under artifacts/)\n", tmp)
			return
		}
		os.RemoveAll(tmp)
	}()
	if err := prepare(src, tmp, font); err != nil {
		return err
	}

	fmt.Fprintf(w, "soak: making the stress pages' baselines in %s\n", tmp)
	flows := filepath.Join(tmp, ".argent", "flows")
	for _, name := range stressFlows {
		if _, err := runOnce(bin, filepath.Join(flows, name+".yaml"), "--update-baselines"); err != nil {
			keep = true
			return fmt.Errorf("baseline run of %s: %w", name, err)
		}
	}

	if err := copyFlows(flows, passes); err != nil {
		return err
	}

	s := summary{Date: time.Now().UTC().Format("2006-01-02"), Runs: runs, Passes: passes}
	times := make([]float64, 0, procs)
	start := time.Now()
	for i := 1; i <= procs; i++ {
		t0 := time.Now()
		reports, err := runOnce(bin, flows, "--artifacts", filepath.Join(tmp, "artifacts", fmt.Sprintf("process-%d", i)))
		// One pass's share of the process, its browser start included.
		times = append(times, float64(time.Since(t0).Microseconds())/1000/float64(passes))
		if err != nil && reports == nil {
			s.Failures = append(s.Failures, finding{Run: i, Reason: err.Error()})
			keep = true
			continue
		}
		s.Flows = len(reports) / passes
		if tally(&s, i, reports) {
			keep = true
		}
		if i*passes%50 == 0 || i == procs {
			fmt.Fprintf(w, "soak: %d/%d runs, %d false diffs, %d unsettled, %d other failures, last run %.0f ms\n",
				i*passes, runs, len(s.FalseDiffs), len(s.Unsettled), len(s.Failures), times[len(times)-1])
		}
	}
	s.TotalS = time.Since(start).Seconds()
	slices.Sort(times)
	s.MinMs, s.MaxMs = times[0], times[len(times)-1]
	s.MedianMs = times[len(times)/2]
	s.P95Ms = times[min(len(times)-1, len(times)*95/100)]
	printSummary(w, &s)
	if out != "" {
		b, _ := json.MarshalIndent(&s, "", "  ")
		if err := os.WriteFile(out, append(b, '\n'), 0o644); err != nil {
			return err
		}
	}
	if len(s.FalseDiffs)+len(s.Failures) > 0 {
		return fmt.Errorf("%d false diffs and %d other failures in %d runs", len(s.FalseDiffs), len(s.Failures), runs)
	}
	return nil
}

// tally records one run's snapshots, and says whether anything was off.
func tally(s *summary, run int, reports []report) (off bool) {
	for _, r := range reports {
		for _, st := range r.Steps {
			key := st.SnapshotKey
			if key == "" {
				key = st.Target
			}
			if st.Kind == "snapshot" {
				s.Snapshots++
				switch {
				case st.Status != "pass":
					s.FalseDiffs = append(s.FalseDiffs, finding{Run: run, Flow: st.Flow, Key: key, Reason: st.Reason})
					off = true
				case st.Mismatch != nil && st.Mismatch.Pixels > 0:
					s.FalseDiffs = append(s.FalseDiffs, finding{Run: run, Flow: st.Flow, Key: key, Pixels: st.Mismatch.Pixels, Reason: st.Reason})
					off = true
				}
				if strings.Contains(st.Warning, "kept changing") || strings.Contains(st.Reason, "kept changing") {
					s.Unsettled = append(s.Unsettled, finding{Run: run, Flow: st.Flow, Key: key, Reason: st.Warning})
				}
				continue
			}
			if st.Status == "fail" || st.Status == "error" {
				s.Failures = append(s.Failures, finding{Run: run, Flow: st.Flow, Key: st.Kind + " " + st.Target, Reason: st.Reason})
				off = true
			}
		}
	}
	return off
}

func printSummary(w io.Writer, s *summary) {
	fmt.Fprintf(w, "\nsoak %s: %d runs of %d flows (%d processes of %d passes), %d snapshots compared in %.0f s\n", s.Date, s.Runs, s.Flows, s.Runs/s.Passes, s.Passes, s.Snapshots, s.TotalS)
	fmt.Fprintf(w, "  false diffs:      %d\n", len(s.FalseDiffs))
	fmt.Fprintf(w, "  unsettled:        %d\n", len(s.Unsettled))
	fmt.Fprintf(w, "  other failures:   %d\n", len(s.Failures))
	fmt.Fprintf(w, "  time per run:     min %.0f ms, median %.0f ms, p95 %.0f ms, max %.0f ms\n", s.MinMs, s.MedianMs, s.P95Ms, s.MaxMs)
	for _, group := range []struct {
		name string
		fs   []finding
	}{{"false diff", s.FalseDiffs}, {"unsettled", s.Unsettled}, {"failure", s.Failures}} {
		for i, f := range group.fs {
			if i == 20 {
				fmt.Fprintf(w, "  … %d more %ss\n", len(group.fs)-20, group.name)
				break
			}
			fmt.Fprintf(w, "  %s: process %d, %s %s: %s\n", group.name, f.Run, f.Flow, f.Key, f.Reason)
		}
	}
}

// runOnce runs a flow file or a directory of flows and -o json and decodes the
// reports. A run whose flows failed still returns its reports.
func runOnce(bin, target string, extra ...string) ([]report, error) {
	args := append([]string{"flow", "run", target, "-o", "json"}, extra...)
	cmd := exec.Command(bin, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	runErr := cmd.Run()
	reports, err := decode(stdout.Bytes())
	if err != nil {
		return nil, fmt.Errorf("%v: %v; stderr: %s", runErr, err, lastLines(stderr.String(), 5))
	}
	if runErr != nil {
		return reports, fmt.Errorf("%v; stderr: %s", runErr, lastLines(stderr.String(), 5))
	}
	return reports, nil
}

// decode reads one report or a list of them.
func decode(b []byte) ([]report, error) {
	b = bytes.TrimSpace(b)
	if len(b) > 0 && b[0] == '{' {
		var r report
		err := json.Unmarshal(b, &r)
		return []report{r}, err
	}
	var rs []report
	if err := json.Unmarshal(b, &rs); err != nil {
		return nil, fmt.Errorf("decode the report: %w", err)
	}
	return rs, nil
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], " | ")
}

// sourceDir finds the repository root from the working directory.
func sourceDir() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "bench", "soak", "project")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("run from the repository (bench/soak/project not found)")
		}
		dir = parent
	}
}

// stressFlows are the flows of bench/soak/project, whose baselines the
// first run makes.
var stressFlows = []string{"fonts", "images", "motion", "canvas", "emoji"}

// prepare lays out one project: the example (its site, flows and committed
// baselines) with the stress pages and their flows added, then the files
// the pages load.
func prepare(root, tmp, font string) error {
	if err := copyTree(filepath.Join(root, "examples", "shop"), tmp); err != nil {
		return err
	}
	if err := copyTree(filepath.Join(root, "bench", "soak", "project"), tmp); err != nil {
		return err
	}
	site := filepath.Join(tmp, "site")
	f, err := os.ReadFile(font)
	if err != nil {
		return fmt.Errorf("the web font: %w (install fonts-dejavu-core, or pass -font)", err)
	}
	if err := os.WriteFile(filepath.Join(site, "soak.font.ttf"), f, 0o644); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(site, "noise.png"), noise(128, 80), 0o644)
}

// noise is a fixed pseudo-random RGBA pattern with some transparency.
func noise(w, h int) []byte {
	img := image.NewNRGBA(image.Rect(0, 0, w, h))
	x := uint32(2463534242)
	for i := 0; i < w*h; i++ {
		x ^= x << 13
		x ^= x >> 17
		x ^= x << 5
		a := uint8(255)
		if i%7 == 0 {
			a = uint8(x >> 24)
		}
		img.SetNRGBA(i%w, i/w, color.NRGBA{R: uint8(x), G: uint8(x >> 8), B: uint8(x >> 16), A: a})
	}
	var b bytes.Buffer
	png.Encode(&b, img)
	return b.Bytes()
}

// runnable are the flows a directory run runs (fill-email is a fragment).
var runnable = append([]string{"checkout"}, stressFlows...)

// copyFlows makes passes-1 copies of every runnable flow, name-p02 …, each
// with a copy of the flow's baselines, so one process runs every flow
// passes times.
func copyFlows(flows string, passes int) error {
	for _, name := range runnable {
		b, err := os.ReadFile(filepath.Join(flows, name+".yaml"))
		if err != nil {
			return err
		}
		for p := 2; p <= passes; p++ {
			copyName := fmt.Sprintf("%s-p%02d", name, p)
			if err := os.WriteFile(filepath.Join(flows, copyName+".yaml"), b, 0o644); err != nil {
				return err
			}
			if err := copyTree(filepath.Join(flows, "__baselines__", name), filepath.Join(flows, "__baselines__", copyName)); err != nil {
				return err
			}
		}
	}
	return nil
}

func copyTree(src, dst string) error {
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(target, b, 0o644)
	})
}
