package report_test

import (
	"bytes"
	"encoding/json"
	"image"
	"image/color"
	"image/png"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/toolserver/toolserver/flow"
	"github.com/toolserver/toolserver/report"
)

// pngOf is a 4x3 PNG of one colour.
func pngOf(t *testing.T, c color.RGBA) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, 4, 3))
	for i := 0; i < len(img.Pix); i += 4 {
		img.Pix[i], img.Pix[i+1], img.Pix[i+2], img.Pix[i+3] = c.R, c.G, c.B, c.A
	}
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

var (
	red   = color.RGBA{255, 0, 0, 255}
	green = color.RGBA{0, 255, 0, 255}
	blue  = color.RGBA{0, 0, 255, 255}
)

func write(t *testing.T, p string, data []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// fixture is a project with a flow whose first snapshot failed (baseline
// red, captured green), whose second had no baseline, and whose third
// passed, and its report, built as flow run builds one.
type fixture struct {
	project, dir string
	// base is the failed snapshot's baseline in the project.
	base, missing string
	rep           *report.Report
}

func newFixture(t *testing.T, flowName, device string) fixture {
	t.Helper()
	root := t.TempDir()
	f := fixture{project: filepath.Join(root, "proj"), dir: filepath.Join(root, "report")}
	bdir := filepath.Join(f.project, ".argent", "flows", "__baselines__", flowName)
	f.base = filepath.Join(bdir, "home__"+device+".png")
	f.missing = filepath.Join(bdir, "menu__"+device+".png")
	passing := filepath.Join(bdir, "footer__"+device+".png")
	write(t, f.base, pngOf(t, red))
	write(t, passing, pngOf(t, blue))
	b, err := report.Create(f.dir, report.Run{Device: device, Project: f.project, StartedAt: time.Now()}, report.Version{Version: "test"}, func(s string) { t.Error(s) })
	if err != nil {
		t.Fatal(err)
	}
	// The run writes its artifacts into the report's images, as flow run
	// does without --artifacts.
	img := func(name string, c color.RGBA) flow.Artifact {
		p := filepath.Join(b.ImagesDir(), flowName, name)
		write(t, p, pngOf(t, c))
		return flow.Artifact{Path: p}
	}
	rep := &flow.Report{Flow: flowName, Device: device, Failed: 2, Passed: 1, Steps: []flow.StepReport{
		{Index: 0, Kind: "snapshot", Flow: flowName, Status: flow.StatusFail, SnapshotKey: filepath.Base(f.base),
			Baseline:  &flow.SnapshotBaseline{Path: f.base, State: flow.BaselineCompared},
			Artifacts: map[string]flow.Artifact{"baseline": img("home-baseline.png", red), "current": img("home-current.png", green), "diff": img("home-diff.png", red)}},
		{Index: 1, Kind: "snapshot", Flow: flowName, Status: flow.StatusFail, SnapshotKey: filepath.Base(f.missing),
			Baseline:  &flow.SnapshotBaseline{Path: f.missing, State: flow.BaselineMissing},
			Artifacts: map[string]flow.Artifact{"current": img("menu-current.png", blue)}},
		{Index: 2, Kind: "snapshot", Flow: flowName, Status: flow.StatusPass, SnapshotKey: filepath.Base(passing),
			Baseline: &flow.SnapshotBaseline{Path: passing, State: flow.BaselineCompared}},
	}}
	b.AddFlow(rep)
	if err := b.Finish(time.Now()); err != nil {
		t.Fatal(err)
	}
	if f.rep, err = report.Read(f.dir); err != nil {
		t.Fatal(err)
	}
	return f
}

func TestBuildRecordsImagesAndHashes(t *testing.T) {
	t.Parallel()
	f := newFixture(t, "checkout", "chromium-1280x800")
	if len(f.rep.Flows) != 1 || f.rep.Flows[0].Status != report.FlowFailed {
		t.Fatalf("flows: %+v", f.rep.Flows)
	}
	snaps := f.rep.Flows[0].Snapshots
	want := []struct{ status, baseline, current string }{
		{report.SnapFailed, "images/checkout/home-baseline.png", "images/checkout/home-current.png"},
		{report.SnapMissing, "", "images/checkout/menu-current.png"},
		{report.SnapPassed, "images/checkout/footer__chromium-1280x800-baseline.png", ""},
	}
	for i, w := range want {
		s := snaps[i]
		if s.Status != w.status || s.Images.Baseline != w.baseline || s.Images.Current != w.current {
			t.Errorf("snapshot %d: got %+v, want %+v", i, s, w)
		}
		if s.Images.Baseline != "" {
			if _, err := os.Stat(filepath.Join(f.dir, filepath.FromSlash(s.Images.Baseline))); err != nil {
				t.Errorf("snapshot %d: its baseline image: %v", i, err)
			}
		}
	}
	if snaps[0].Baseline != ".argent/flows/__baselines__/checkout/home__chromium-1280x800.png" {
		t.Errorf("baseline path: got %q, want it relative to the project", snaps[0].Baseline)
	}
	if snaps[0].BaselineSHA256 == "" || snaps[1].BaselineSHA256 != "" || snaps[2].BaselineSHA256 == "" {
		t.Errorf("hashes: got %q %q %q, want the compared baselines' only", snaps[0].BaselineSHA256, snaps[1].BaselineSHA256, snaps[2].BaselineSHA256)
	}
	if got := f.rep.Runs[0].BaselineDirs; !slices.Equal(got, []string{".argent/flows/__baselines__/checkout"}) {
		t.Errorf("baseline dirs: got %q", got)
	}
	// The step's artifacts in report.json are the images' report paths.
	if got := f.rep.Flows[0].Report.Steps[0].Artifacts["diff"].Path; got != "images/checkout/home-diff.png" {
		t.Errorf("the diff artifact's path: got %q", got)
	}
	page, err := os.ReadFile(filepath.Join(f.dir, report.PageFile))
	if err != nil || !bytes.Contains(page, []byte(`"images/checkout/home-current.png"`)) {
		t.Errorf("index.html does not hold the report's data (%v)", err)
	}
}

func TestCreateRefusesADirectoryThatIsNoReport(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write(t, filepath.Join(dir, "thesis.txt"), []byte("mine"))
	_, err := report.Create(dir, report.Run{}, report.Version{}, nil)
	if err == nil || !strings.Contains(err.Error(), "holds no report") {
		t.Fatalf("got %v, want a refusal", err)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "thesis.txt")); err != nil || string(b) != "mine" {
		t.Fatalf("the user's file: %q %v", b, err)
	}
	// An earlier report is replaced, its images too.
	f := newFixture(t, "checkout", "chromium-1280x800")
	if _, err := report.Create(f.dir, report.Run{}, report.Version{}, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(f.dir, report.ImagesDir, "checkout")); !os.IsNotExist(err) {
		t.Fatalf("the earlier report's images: %v, want them gone", err)
	}
}

func TestPageDataCannotEndItsScript(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	r := &report.Report{Format: report.Format, Runs: []report.Run{{ID: "1"}}, Flows: []report.Flow{{Run: "1", Report: &flow.Report{Flow: "</script><script>alert(1)</script>"}}}}
	if err := report.Write(dir, r); err != nil {
		t.Fatal(err)
	}
	page, _ := os.ReadFile(filepath.Join(dir, report.PageFile))
	if n := bytes.Count(page, []byte("</script>")); n != 2 {
		t.Fatalf("index.html has %d </script>, want the page's own 2", n)
	}
	back, err := report.Read(dir)
	if err != nil || back.Flows[0].Report.Flow != r.Flows[0].Report.Flow {
		t.Fatalf("report.json round trip: %v", err)
	}
}

func TestApprove(t *testing.T) {
	t.Parallel()
	t.Run("dry run writes nothing", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, "checkout", "chromium-1280x800")
		res, err := report.Approve(f.dir, f.project, f.rep, report.Selection{All: true}, true)
		if err != nil || len(res) != 2 || res[0].Written || res[0].Message != "" || !res[0].DryRun || res[1].Message != "" {
			t.Fatalf("got %+v %v, want two dry-run results", res, err)
		}
		if b, _ := os.ReadFile(f.base); !bytes.Equal(b, pngOf(t, red)) {
			t.Error("a dry run changed the baseline")
		}
		if _, err := os.Stat(f.missing); !os.IsNotExist(err) {
			t.Error("a dry run wrote the missing baseline")
		}
	})
	t.Run("writes, then refuses the stale report", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, "checkout", "chromium-1280x800")
		res, err := report.Approve(f.dir, f.project, f.rep, report.Selection{Flows: []string{"checkout"}}, false)
		if err != nil || len(res) != 2 || !res[0].Written || !res[1].Written {
			t.Fatalf("got %+v %v, want both written", res, err)
		}
		if b, _ := os.ReadFile(f.base); !bytes.Equal(b, pngOf(t, green)) {
			t.Error("the failed baseline is not the current image")
		}
		if b, _ := os.ReadFile(f.missing); !bytes.Equal(b, pngOf(t, blue)) {
			t.Error("the missing baseline is not the current image")
		}
		res, err = report.Approve(f.dir, f.project, f.rep, report.Selection{Snapshots: []string{"home"}}, false)
		if err != nil || len(res) != 1 || res[0].Written || !strings.Contains(res[0].Message, "changed on disk since the run") {
			t.Fatalf("second approve: got %+v %v, want a refusal", res, err)
		}
		res, _ = report.Approve(f.dir, f.project, f.rep, report.Selection{Snapshots: []string{"menu"}}, false)
		if len(res) != 1 || !strings.Contains(res[0].Message, "exists now and did not when the run ran") {
			t.Fatalf("second approve of the missing one: got %+v", res)
		}
	})
	t.Run("a baseline changed after the run is refused", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, "checkout", "chromium-1280x800")
		mine := pngOf(t, color.RGBA{1, 2, 3, 255})
		write(t, f.base, mine)
		res, err := report.Approve(f.dir, f.project, f.rep, report.Selection{Snapshots: []string{"home__chromium-1280x800.png"}}, false)
		if err != nil || len(res) != 1 || res[0].Written || !strings.Contains(res[0].Message, "changed on disk since the run") {
			t.Fatalf("got %+v %v, want a refusal", res, err)
		}
		if b, _ := os.ReadFile(f.base); !bytes.Equal(b, mine) {
			t.Error("the refused baseline was overwritten")
		}
	})
	t.Run("nothing to approve is no error", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, "checkout", "chromium-1280x800")
		if _, err := report.Approve(f.dir, f.project, f.rep, report.Selection{All: true}, false); err != nil {
			t.Fatal(err)
		}
		// Both are adopted now: nothing is left, for all or for the flow.
		f.rep.Flows[0].Snapshots[0].Status = report.SnapPassed
		f.rep.Flows[0].Snapshots[1].Status = report.SnapPassed
		for _, sel := range []report.Selection{{All: true}, {Flows: []string{"checkout"}}, {Snapshots: []string{"footer"}}} {
			res, err := report.Approve(f.dir, f.project, f.rep, sel, false)
			if err != nil || res == nil || len(res) != 0 {
				t.Errorf("%+v: got %+v %v, want no result and no error", sel, res, err)
			}
		}
	})
	t.Run("the wrong project is named as such", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, "checkout", "chromium-1280x800")
		elsewhere := t.TempDir()
		for _, dryRun := range []bool{true, false} {
			_, err := report.Approve(f.dir, elsewhere, f.rep, report.Selection{All: true}, dryRun)
			if err == nil || !strings.Contains(err.Error(), "wrong project") || !strings.Contains(err.Error(), ".argent/flows") ||
				!strings.Contains(err.Error(), elsewhere) || !strings.Contains(err.Error(), f.project) || strings.Contains(err.Error(), "changed on disk") {
				t.Fatalf("dry run %v: got %v, want wrong project, naming what it looked for, where, and the run's project", dryRun, err)
			}
		}
		if ents, _ := os.ReadDir(elsewhere); len(ents) != 0 {
			t.Fatalf("written into the wrong project: %v", ents)
		}
	})
	t.Run("nothing matches", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, "checkout", "chromium-1280x800")
		if _, err := report.Approve(f.dir, f.project, f.rep, report.Selection{Flows: []string{"nope"}}, false); err == nil || !strings.Contains(err.Error(), "--flow nope") {
			t.Fatalf("got %v, want nothing to approve", err)
		}
	})
}

// TestApproveRefusesCraftedPaths: a report whose paths lead out of the
// baseline directories writes nothing anywhere.
func TestApproveRefusesCraftedPaths(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, baseline string
		dirs           []string
		want           string
	}{
		{"dot-dot", "../outside/evil.png", []string{"../outside"}, "not a plain path inside the project"},
		{"dot-dot inside", ".argent/flows/__baselines__/checkout/../../../../outside/evil.png", []string{".argent/flows/__baselines__/checkout"}, "not a plain path"},
		{"absolute", "/tmp/evil.png", []string{"/tmp"}, "outside the project"},
		{"not a baseline dir", "src/evil.png", []string{"src"}, "not in a baseline directory"},
		{"dir not recorded", ".argent/flows/__baselines__/other/evil.png", []string{".argent/flows/__baselines__/checkout"}, "not in a baseline directory"},
		{"not png", ".argent/flows/__baselines__/checkout/evil.sh", []string{".argent/flows/__baselines__/checkout"}, "not a .png file"},
		{"through a symlink", "link/__baselines__/evil.png", []string{"link/__baselines__"}, "path escapes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, "checkout", "chromium-1280x800")
			outside := filepath.Join(filepath.Dir(f.project), "outside")
			if err := os.MkdirAll(filepath.Join(outside, "__baselines__"), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(outside, filepath.Join(f.project, "link")); err != nil {
				t.Fatal(err)
			}
			r := f.rep
			r.Runs[0].BaselineDirs = tc.dirs
			s := &r.Flows[0].Snapshots[1] // the missing one: no hash to match
			s.Baseline = tc.baseline
			res, err := report.Approve(f.dir, f.project, r, report.Selection{Items: []report.Item{{Flow: 0, Step: s.Step}}}, false)
			if err != nil || len(res) != 1 || res[0].Written || !strings.Contains(res[0].Message, tc.want) {
				t.Fatalf("got %+v %v, want a refusal with %q", res, err, tc.want)
			}
			var found []string
			filepath.WalkDir(filepath.Dir(f.project), func(p string, d os.DirEntry, err error) error {
				if err == nil && strings.HasPrefix(d.Name(), "evil") {
					found = append(found, p)
				}
				return nil
			})
			if len(found) > 0 {
				t.Fatalf("written: %q", found)
			}
		})
	}
	t.Run("an image outside the report", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, "checkout", "chromium-1280x800")
		f.rep.Flows[0].Snapshots[1].Images.Current = "images/../../proj/.argent/flows/__baselines__/checkout/footer__chromium-1280x800.png"
		res, _ := report.Approve(f.dir, f.project, f.rep, report.Selection{All: true}, false)
		if len(res) != 2 || res[1].Written || !strings.Contains(res[1].Message, "is not in its images directory") {
			t.Fatalf("got %+v, want the image refused", res)
		}
	})
}

func TestMergeKeepsEveryFlowOfBoth(t *testing.T) {
	t.Parallel()
	a := newFixture(t, "checkout", "chromium-1280x800")
	b := newFixture(t, "checkout", "chromium-1280x800") // the same flow and device: a conflict
	c := newFixture(t, "search", "chromium-390x844")
	out := filepath.Join(t.TempDir(), "merged")
	m, err := report.Merge(out, []string{a.dir, b.dir, c.dir}, report.Version{Version: "test"}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	back, err := report.Read(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(back.Runs) != 3 || len(back.Flows) != 3 || len(m.Flows) != 3 {
		t.Fatalf("merged %d runs and %d flows, want 3 and 3", len(back.Runs), len(back.Flows))
	}
	for i, fl := range back.Flows {
		if fl.Run != back.Runs[i].ID || back.Runs[i].Label != "report" {
			t.Errorf("flow %d: run %q, runs %+v", i, fl.Run, back.Runs)
		}
		for _, s := range fl.Snapshots {
			for _, p := range []string{s.Images.Baseline, s.Images.Current, s.Images.Diff} {
				if p == "" {
					continue
				}
				if !strings.HasPrefix(p, "images/r") {
					t.Errorf("flow %d: image %q not under its run's images", i, p)
				}
				if _, err := os.Stat(filepath.Join(out, filepath.FromSlash(p))); err != nil {
					t.Errorf("flow %d: %v", i, err)
				}
			}
		}
	}
	data, _ := json.Marshal(back.Flows)
	if !bytes.Contains(data, []byte(`"search"`)) || bytes.Count(data, []byte(`"flow":"checkout"`)) < 2 {
		t.Errorf("the merged flows lack one of the runs: %s", data[:min(len(data), 300)])
	}
	// A merged report approves as a single one does.
	res, err := report.Approve(out, c.project, back, report.Selection{Flows: []string{"search"}}, false)
	if err != nil || len(res) != 2 || !res[0].Written {
		t.Fatalf("approve from the merged report: %+v %v", res, err)
	}
	if _, err := report.Merge(a.dir, []string{a.dir, b.dir}, report.Version{}, time.Now()); err == nil || !strings.Contains(err.Error(), "which the merge replaces") {
		t.Errorf("a merge into one of its inputs: got %v, want a refusal", err)
	}
	if _, err := report.Read(a.dir); err != nil {
		t.Errorf("the refused merge damaged its input: %v", err)
	}
}

// TestViewerInlined: the report's page carries the shared viewer inline
// (it opens from file:// and fetches nothing), once, with no mark left;
// the viewer's own text cannot end the elements it is inlined into.
func TestViewerInlined(t *testing.T) {
	t.Parallel()
	// A flow named like a mark stays data: the viewer went in first.
	page := report.Page([]byte(`{"flows":[{"report":{"flow":"/*__VIEWER_JS__*/"}}]}`))
	for _, part := range [][]byte{report.ViewerJS, report.ViewerCSS} {
		if n := bytes.Count(page, part); n != 1 {
			t.Errorf("the page holds the viewer's %.30q %d times, want 1", part, n)
		}
		if low := bytes.ToLower(part); bytes.Contains(low, []byte("</script")) || bytes.Contains(low, []byte("</style")) {
			t.Errorf("the viewer's %.30q holds an end tag", part)
		}
	}
	if n := bytes.Count(page, []byte("__VIEWER_")); n != 1 {
		t.Errorf("the page holds __VIEWER_ %d times, want once (in its data)", n)
	}
	if !bytes.Contains(page, []byte(`const viewer = (function`)) {
		t.Error("the page does not define the viewer")
	}
}
