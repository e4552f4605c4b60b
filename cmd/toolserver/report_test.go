package main

import (
	"bytes"
	"context"
	"flag"
	"image"
	"image/color"
	"image/png"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/toolserver/toolserver/flow"
	"github.com/toolserver/toolserver/report"
)

// updateReportBaseline rewrites the committed baseline of the report
// page (testdata/report-review) from this machine's rendering.
var updateReportBaseline = flag.Bool("update-report-baseline", false, "rewrite testdata/report-review's baseline of the report page")

// reviewedProject writes a project of three flows on pages beside them,
// a snapshot each: alpha on its own page, beta and gamma on another. It
// adopts their baselines on device, then changes beta's page so that beta
// and gamma fail. It returns
// the project's root.
//
// The flows launch their pages by path, or with served by URL from a
// server of the site (a run over a link launches URLs only).
func reviewedProject(t *testing.T, device string, served bool) string {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	site := "../../site"
	if served {
		srv := httptest.NewServer(http.FileServer(http.Dir(filepath.Join(root, "site"))))
		t.Cleanup(srv.Close)
		site = srv.URL
	}
	page := func(banner string) string {
		return `<!doctype html><meta charset="utf-8"><style>body{margin:0;font:16px "DejaVu Sans",sans-serif}
header{background:` + banner + `;color:#fff;padding:12px 16px;font-weight:bold}main{padding:12px 16px}
#more{display:none;margin-top:8px;padding:8px;background:#e6f4e7}</style>
<header>Fernhouse</header><main><p>Three ferns in your basket.</p><button id="go" onclick="more.style.display='block'">Show more</button><div id="more">Delivery on Friday.</div></main>`
	}
	files := map[string]string{
		"site/alpha.html":          page("#243b6b"),
		"site/beta.html":           page("#243b6b"),
		".argent/flows/alpha.yaml": "steps:\n  - launch: " + site + "/alpha.html\n  - snapshot: top\n",
		".argent/flows/beta.yaml":  "steps:\n  - launch: " + site + "/beta.html\n  - snapshot: basket\n",
		".argent/flows/gamma.yaml": "steps:\n  - launch: " + site + "/beta.html\n  - tap: Show more\n  - await: { visible: { text: Delivery } }\n  - snapshot: more\n",
	}
	for rel, body := range files {
		p := filepath.Join(root, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	flows := filepath.Join(root, ".argent", "flows")
	if code, out, errOut := runCLI(t, "flow", "run", flows, "--project", root, "--device", device, "--update-baselines"); code != 0 {
		t.Fatalf("adopting the baselines: exit %d\n%s\n%s", code, out, errOut)
	}
	if err := os.WriteFile(filepath.Join(root, "site", "beta.html"), []byte(page("#8a1538")), 0o644); err != nil {
		t.Fatal(err)
	}
	return root
}

// copyTree copies the files under src into dst.
func copyTree(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if err := os.MkdirAll(filepath.Join(dst, filepath.Dir(rel)), 0o755); err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestReportReviewedInChromium: a run with a changed page writes a
// report; our own runner opens it from file:// and reviews it as a user
// would (testdata/report-review/.argent/flows/review.yaml), down to a
// snapshot of the page compared with its committed baseline. The run's
// JUnit carries the failures' images, and two shards' reports merge.
func TestReportReviewedInChromium(t *testing.T) {
	t.Parallel()
	device := sharedDevice(t, "chromium-cdp-330x210")
	root := reviewedProject(t, device, false)
	flows := filepath.Join(root, ".argent", "flows")
	dir := filepath.Join(root, "report")
	junit := filepath.Join(root, "junit.xml")
	code, out, errOut := runCLI(t, "flow", "run", flows, "--project", root, "--device", device, "--report", dir, "--junit", junit)
	if code != 1 {
		t.Fatalf("the run with a changed page: exit %d, want 1\n%s\n%s", code, out, errOut)
	}
	if !strings.Contains(errOut, "Report: "+filepath.Join(dir, "index.html")) {
		t.Errorf("the run does not say where its report is:\n%s", errOut)
	}
	rep, err := report.Read(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Flows) != 3 || rep.Flows[0].Status != report.FlowPassed || rep.Flows[1].Status != report.FlowFailed || rep.Flows[2].Status != report.FlowFailed {
		t.Fatalf("report.json flows: %+v", rep.Flows)
	}

	// JUnit: each failed snapshot's three images as attachments.
	x, err := os.ReadFile(junit)
	if err != nil {
		t.Fatal(err)
	}
	atts := regexp.MustCompile(`\[\[ATTACHMENT\|([^\]]+)\]\]`).FindAllStringSubmatch(string(x), -1)
	if len(atts) != 6 {
		t.Fatalf("JUnit attachments: got %d, want 3 for each of 2 failed snapshots:\n%s", len(atts), x)
	}
	for _, a := range atts {
		if _, err := os.Stat(a[1]); err != nil || !strings.HasPrefix(a[1], dir) {
			t.Errorf("attachment %s: %v (want a file of the report)", a[1], err)
		}
	}

	// The review, by our own runner, on a device of its own.
	review := filepath.Join(root, "review")
	copyTree(t, "testdata/report-review", review)
	reviewer := sharedDevice(t, "chromium-cdp-1024x700")
	args := []string{"flow", "run", "review", "--project", review, "--device", reviewer}
	if *updateReportBaseline {
		args = append(args, "--update-baselines")
	}
	if code, out, errOut := runCLI(t, append(args, "--artifacts", filepath.Join(root, "review-out"))...); code != 0 {
		t.Fatalf("the review flow: exit %d\n%s\n%s", code, out, errOut)
	}
	if *updateReportBaseline {
		copyTree(t, filepath.Join(review, ".argent", "flows", "__baselines__"), "testdata/report-review/.argent/flows/__baselines__")
	}

	// Two shards, each with its own report, merge into one with every
	// flow of both.
	shards := []string{filepath.Join(root, "shard-1"), filepath.Join(root, "shard-2")}
	for i, name := range []string{"alpha", "beta"} {
		runCLI(t, "flow", "run", name, "--project", root, "--device", device, "--report", shards[i])
	}
	merged := filepath.Join(root, "merged")
	if code, out, errOut := runCLI(t, "report", "merge", merged, shards[0], shards[1]); code != 0 || !strings.Contains(out, "Merged 2 reports (2 flows)") {
		t.Fatalf("report merge: exit %d\n%s\n%s", code, out, errOut)
	}
	m, err := report.Read(merged)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range m.Flows {
		names = append(names, f.Report.Flow+"@"+m.Runs[mustAtoi(t, f.Run)-1].Label)
	}
	if strings.Join(names, " ") != "alpha@shard-1 beta@shard-2" {
		t.Fatalf("merged flows: %q", names)
	}
}

func mustAtoi(t *testing.T, s string) int {
	t.Helper()
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestReportServeApproves: report serve's approve button writes the
// current image as the baseline; a second click on the now stale page is
// refused. approve --dry-run beforehand writes nothing.
func TestReportServeApproves(t *testing.T) {
	t.Parallel()
	device := sharedDevice(t, "chromium-cdp-331x211")
	root := reviewedProject(t, device, false)
	dir := filepath.Join(root, "report")
	// $TOOLSERVER_REPORT asks for the report as --report does.
	if code, out, errOut := runCLIEnv(t, env{envReport: dir}, "flow", "run", "beta", "--project", root, "--device", device); code != 1 {
		t.Fatalf("the run: exit %d\n%s\n%s", code, out, errOut)
	}
	rep, err := report.Read(dir)
	if err != nil {
		t.Fatal(err)
	}
	snap := rep.Flows[0].Snapshots[0]
	baseline := filepath.Join(root, filepath.FromSlash(snap.Baseline))
	before, _ := os.ReadFile(baseline)
	current, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(snap.Images.Current)))
	if err != nil || bytes.Equal(before, current) {
		t.Fatalf("the failed snapshot's images: %v (baseline equal to current: %v)", err, bytes.Equal(before, current))
	}

	code, out, _ := runCLI(t, "approve", "--report", dir, "--project", root, "--all", "--dry-run")
	if after, _ := os.ReadFile(baseline); code != 0 || !strings.Contains(out, "· would approve "+snap.Baseline) || !bytes.Equal(after, before) {
		t.Fatalf("approve --dry-run: exit %d, baseline unchanged %v\n%s", code, bytes.Equal(after, before), out)
	}

	_, u := startReportServe(t, dir, "--project", root)

	approver := filepath.Join(root, "approver")
	flow := "steps:\n  - launch: \"" + u + "\"\n" +
		"  - await: { visible: { text: Approve all } }\n" +
		// The page's policy lets its images load: their captions give
		// the size only a loaded image has.
		"  - await: { text: { in: { id: snap-0 }, contains: \"Current 331×211\" } }\n" +
		"  - tap: { role: button, text: Approve, within: { id: snap-0 } }\n" +
		"  - await: { text: { in: { id: snap-0 }, contains: \"approved: " + snap.Baseline + "\" } }\n" +
		"  - tap: { role: button, text: Approve, within: { id: snap-0 } }\n" +
		"  - await: { text: { in: { id: snap-0 }, contains: \"refused: changed on disk since the run\" } }\n"
	if err := os.MkdirAll(filepath.Join(approver, ".argent", "flows"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(approver, ".argent", "flows", "approve.yaml"), []byte(flow), 0o644); err != nil {
		t.Fatal(err)
	}
	clicker := sharedDevice(t, "chromium-cdp-1024x701")
	if code, out, errOut := runCLI(t, "flow", "run", "approve", "--project", approver, "--device", clicker); code != 0 {
		t.Fatalf("the approving flow: exit %d\n%s\n%s", code, out, errOut)
	}
	if after, _ := os.ReadFile(baseline); !bytes.Equal(after, current) {
		t.Fatal("after the approve click the baseline is not the current image")
	}
	// Approving needs the token; the server binds to loopback only.
	resp, err := http.Post(strings.Split(u, "?")[0]+"approve", "application/json", strings.NewReader(`{"all":true}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("approve without the token: got %d, want 403", resp.StatusCode)
	}
	code, _, errOut := runCLI(t, "report", "serve", dir, "--addr", "0.0.0.0:0")
	if code != 2 || !strings.Contains(errOut, "loopback only") {
		t.Errorf("report serve on a wildcard address: exit %d, want 2 (%s)", code, errOut)
	}
}

// TestReportOfLinkedRun: a run on a tool-server over --link writes the
// same report, the failed snapshot's images fetched back to the client.
func TestReportOfLinkedRun(t *testing.T) {
	t.Parallel()
	device := sharedDevice(t, "chromium-cdp-332x212")
	root := reviewedProject(t, device, true)
	u := startServe(t, nil, false)
	dir := filepath.Join(root, "report")
	flows := filepath.Join(root, ".argent", "flows")
	code, out, errOut := runCLI(t, "flow", "run", flows, "--project", root, "--device", device, "--link", u, "--report", dir)
	if code != 1 {
		t.Fatalf("the linked run: exit %d, want 1\n%s\n%s", code, out, errOut)
	}
	rep, err := report.Read(dir)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Runs[0].Linked != u || len(rep.Flows) != 3 {
		t.Fatalf("report: run %+v, %d flows", rep.Runs[0], len(rep.Flows))
	}
	for _, f := range rep.Flows {
		if len(f.Snapshots) != 1 {
			t.Fatalf("%s: snapshots %+v\n%s\n%s", f.Report.Flow, f.Snapshots, out, errOut)
		}
		s := f.Snapshots[0]
		want := report.SnapFailed
		if f.Report.Flow == "alpha" {
			want = report.SnapPassed
		}
		if s.Status != want || s.Baseline != ".argent/flows/__baselines__/"+f.Report.Flow+"/"+s.Key {
			t.Errorf("%s: got %+v, want %s with its baseline in the client's project", f.Report.Flow, s, want)
		}
		imgs := []string{s.Images.Baseline}
		if want == report.SnapFailed {
			imgs = append(imgs, s.Images.Current, s.Images.Diff)
		}
		for _, p := range imgs {
			if fi, err := os.Stat(filepath.Join(dir, filepath.FromSlash(p))); p == "" || err != nil || fi.Size() == 0 {
				t.Errorf("%s: image %q: %v", f.Report.Flow, p, err)
			}
		}
	}
	// And it approves like a local one.
	if code, out, _ := runCLI(t, "approve", "--report", dir, "--project", root, "--flow", "gamma"); code != 0 || !strings.Contains(out, "✓ approved .argent/flows/__baselines__/gamma/") {
		t.Fatalf("approve: exit %d\n%s", code, out)
	}
}

// approvableReport writes a project whose flow checkout compared one
// snapshot with a red baseline and captured it green, and the report of
// that run (built as flow run builds it, with no browser), changed by
// edit when it is given. It returns the project, the report's directory
// and the baseline's path.
func approvableReport(t *testing.T, passed bool, edit func(*report.Report)) (project, dir, baseline string) {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	project, dir = filepath.Join(root, "proj"), filepath.Join(root, "report")
	baseline = filepath.Join(project, ".argent", "flows", "__baselines__", "checkout", "home__chromium-cdp-400x300.png")
	writeFile(t, filepath.Join(project, ".argent", "flows", "checkout.yaml"), "steps:\n  - snapshot: home\n")
	writeFile(t, baseline, string(solidPNG(t, color.RGBA{255, 0, 0, 255})))
	b, err := report.Create(dir, report.Run{Device: "chromium-cdp-400x300", Project: project, StartedAt: time.Now()}, writer(), func(s string) { t.Error(s) })
	if err != nil {
		t.Fatal(err)
	}
	current := filepath.Join(b.ImagesDir(), "checkout", "home-current.png")
	writeFile(t, current, string(solidPNG(t, color.RGBA{0, 255, 0, 255})))
	step := flow.StepReport{Index: 0, Kind: "snapshot", Flow: "checkout", Status: flow.StatusFail, SnapshotKey: filepath.Base(baseline),
		Baseline:  &flow.SnapshotBaseline{Path: baseline, State: flow.BaselineCompared},
		Artifacts: map[string]flow.Artifact{"baseline": {Path: baseline}, "current": {Path: current}}}
	rep := &flow.Report{Flow: "checkout", Device: "chromium-cdp-400x300", Failed: 1, Steps: []flow.StepReport{step}}
	if passed {
		rep.Failed, rep.Passed, rep.OK = 0, 1, true
		rep.Steps[0].Status, rep.Steps[0].Artifacts = flow.StatusPass, nil
	}
	b.AddFlow(rep)
	if err := b.Finish(time.Now()); err != nil {
		t.Fatal(err)
	}
	if edit != nil {
		r, err := report.Read(dir)
		if err != nil {
			t.Fatal(err)
		}
		edit(r)
		if err := report.Write(dir, r); err != nil {
			t.Fatal(err)
		}
	}
	return project, dir, baseline
}

func writeFile(t *testing.T, p, body string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

// solidPNG is a 4x3 PNG of one colour.
func solidPNG(t *testing.T, c color.RGBA) []byte {
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

// TestApproveIntoTheReportsProject: approve run outside the project with
// no --project writes into the project the report records, and says so.
func TestApproveIntoTheReportsProject(t *testing.T) {
	t.Parallel()
	project, dir, baseline := approvableReport(t, false, nil)
	// The test's directory (cmd/toolserver) is not the project.
	code, out, errOut := runCLI(t, "approve", "--report", dir, "--all")
	if code != 0 || !strings.Contains(out, "Approving into "+project+" (the project the run ran in)\n") || !strings.Contains(out, "✓ approved .argent/flows/__baselines__/checkout/") {
		t.Fatalf("approve with no --project: exit %d\n%s\n%s", code, out, errOut)
	}
	if b, _ := os.ReadFile(baseline); !bytes.Equal(b, solidPNG(t, color.RGBA{0, 255, 0, 255})) {
		t.Fatal("the baseline is not the report's current image")
	}
}

// TestApproveIntoTheWrongProject: a --project that is not the run's, or a
// report whose project is not on this machine approved from elsewhere,
// is a usage error that says "wrong project", what it looked for and
// where; nothing is written.
func TestApproveIntoTheWrongProject(t *testing.T) {
	t.Parallel()
	project, dir, baseline := approvableReport(t, false, nil)
	before, _ := os.ReadFile(baseline)
	elsewhere := t.TempDir()
	code, out, errOut := runCLI(t, "approve", "--report", dir, "--all", "--project", elsewhere)
	if code != 2 || !strings.Contains(out, "Approving into "+elsewhere+"\n") ||
		!strings.Contains(errOut, "wrong project: looked for .argent/flows/ (where .argent/flows/__baselines__/checkout/home__chromium-cdp-400x300.png lies) in "+elsewhere) ||
		!strings.Contains(errOut, project) || strings.Contains(errOut+out, "changed on disk") {
		t.Fatalf("approve into another directory: exit %d, want 2 and wrong project\n%s\n%s", code, out, errOut)
	}
	if ents, _ := os.ReadDir(elsewhere); len(ents) != 0 {
		t.Fatalf("written into the wrong project: %v", ents)
	}

	// A report made on another machine, approved outside its checkout:
	// the current directory is tried, and is not the project.
	_, dir, _ = approvableReport(t, false, func(r *report.Report) { r.Runs[0].Project = "/home/runner/work/shop/shop" })
	code, out, errOut = runCLI(t, "approve", "--report", dir, "--all")
	cwd, _ := os.Getwd()
	if code != 2 || !strings.Contains(out, "Approving into "+cwd+" (the current directory: the run's project /home/runner/work/shop/shop is not on this machine)") ||
		!strings.Contains(errOut, "wrong project") || !strings.Contains(errOut, "/home/runner/work/shop/shop") {
		t.Fatalf("approve of a report made elsewhere: exit %d, want 2 and wrong project\n%s\n%s", code, out, errOut)
	}
	if after, _ := os.ReadFile(baseline); !bytes.Equal(after, before) {
		t.Fatal("the baseline changed")
	}
}

// TestApproveNothingToApprove: --all on a report whose snapshots passed
// is nothing to do: exit 0 with a line saying so; a --flow the report
// does not have is a usage error.
func TestApproveNothingToApprove(t *testing.T) {
	t.Parallel()
	_, dir, _ := approvableReport(t, true, nil)
	code, out, errOut := runCLI(t, "approve", "--report", dir, "--all")
	if code != 0 || !strings.Contains(out, "Nothing to approve: no selected snapshot failed or misses its baseline\n") {
		t.Fatalf("approve --all with nothing to approve: exit %d, want 0\n%s\n%s", code, out, errOut)
	}
	code, out, errOut = runCLI(t, "approve", "--report", dir, "--all", "-o", "json")
	if code != 0 || !strings.Contains(out, `"results": []`) {
		t.Fatalf("approve --all -o json with nothing to approve: exit %d, want 0 and no result\n%s\n%s", code, out, errOut)
	}
	code, out, errOut = runCLI(t, "approve", "--report", dir, "--flow", "chekout")
	if code != 2 || !strings.Contains(errOut, "no snapshot of the report matches --flow chekout") {
		t.Fatalf("approve --flow of no flow: exit %d, want 2\n%s\n%s", code, out, errOut)
	}
}

// TestApproveEscapesTheReportsStrings: the paths and names of a crafted
// report.json reach the terminal with their control characters escaped.
func TestApproveEscapesTheReportsStrings(t *testing.T) {
	t.Parallel()
	const esc = "\x1b]0;owned\x07\x1b[2J"
	_, dir, _ := approvableReport(t, false, func(r *report.Report) {
		r.Flows[0].Report.Flow = "checkout" + esc
		r.Flows[0].Snapshots[0].Baseline = ".argent/flows/__baselines__/checkout/" + esc + ".png"
	})
	code, out, errOut := runCLI(t, "approve", "--report", dir, "--all")
	if code != 1 || strings.ContainsAny(out+errOut, "\x1b\x07") || !strings.Contains(out, `checkout/\u001b]0;owned\u0007\u001b[2J.png`) {
		t.Fatalf("approve of a crafted report: exit %d, want 1 and the path escaped\n%q\n%q", code, out, errOut)
	}
	_, dir, _ = approvableReport(t, false, func(r *report.Report) { r.Runs[0].Project = "/nowhere" + esc })
	code, out, errOut = runCLI(t, "approve", "--report", dir, "--all")
	if code != 2 || strings.ContainsAny(out+errOut, "\x1b\x07") || !strings.Contains(errOut, `/nowhere\u001b]0;owned`) {
		t.Fatalf("approve of a report with a crafted project: exit %d, want 2 and the project escaped\n%q\n%q", code, out, errOut)
	}
}

// TestReportServeGuardsAndMakesItsPage: report serve answers only Host
// names of loopback, serves its own page rather than the folder's
// index.html, and approves into the project the report records when no
// --project is given.
func TestReportServeGuardsAndMakesItsPage(t *testing.T) {
	t.Parallel()
	project, dir, baseline := approvableReport(t, false, nil)
	const marker = "MARKER-OF-THE-FOLDER"
	writeFile(t, filepath.Join(dir, report.PageFile), "<script>document.title='"+marker+"'</script>")

	stdout, u := startReportServe(t, dir)
	if !strings.Contains(stdout, "Approvals write into "+project+" (the project the run ran in)\n") {
		t.Errorf("report serve does not say where it approves into:\n%s", stdout)
	}
	base, query, _ := strings.Cut(u, "?")
	token := strings.TrimPrefix(query, "token=")
	port := base[strings.LastIndex(base, ":")+1 : len(base)-1]
	send := func(method, path, host, body string) (int, string) {
		t.Helper()
		req, err := http.NewRequest(method, base+strings.TrimPrefix(path, "/"), strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		if host != "" {
			req.Host = host
		}
		req.Header.Set(report.TokenHeader, token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	for _, path := range []string{"/", "/report.json", "/images/checkout/home-current.png", "/images/"} {
		if code, body := send("GET", path, "evil.example:"+port, ""); code != http.StatusForbidden {
			t.Errorf("GET %s with Host evil.example:%s: got %d, want 403 (%.100q)", path, port, code, body)
		}
	}
	if code, _ := send("POST", "/approve", "evil.example:"+port, `{"all":true}`); code != http.StatusForbidden {
		t.Errorf("POST /approve with Host evil.example: got %d, want 403", code)
	}
	for _, path := range []string{"/report.json", "/images/checkout/home-current.png"} {
		if code, body := send("GET", path, "", ""); code != http.StatusOK {
			t.Errorf("GET %s: got %d, want 200 (%.100q)", path, code, body)
		}
	}
	code, body := send("GET", "/?token="+token, "", "")
	if code != http.StatusOK || strings.Contains(body, marker) || !strings.Contains(body, "const viewer = (function") {
		t.Fatalf("GET /: got %d, want the binary's page, not the folder's (marker served: %v)", code, strings.Contains(body, marker))
	}
	if code, body := send("POST", "/approve", "", `{"all":true}`); code != http.StatusOK || !strings.Contains(body, `"written":true`) {
		t.Fatalf("POST /approve: got %d %s", code, body)
	}
	if b, _ := os.ReadFile(baseline); !bytes.Equal(b, solidPNG(t, color.RGBA{0, 255, 0, 255})) {
		t.Fatal("the approval did not write into the report's project")
	}
}

// startReportServe runs report serve DIR with args until the test ends,
// and returns what it printed by the time it served, and its URL.
func startReportServe(t *testing.T, dir string, args ...string) (out, url string) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	stdout := newLineWatch("Serving", "token=")
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, append([]string{"report", "serve", dir}, args...), testStreams(t, nil, stdout, os.Stderr))
	}()
	select {
	case <-stdout.seen:
	case code := <-done:
		cancel()
		t.Fatalf("report serve exited %d: %s", code, stdout)
	}
	t.Cleanup(func() {
		cancel()
		<-done
	})
	return stdout.String(), regexp.MustCompile(`http://\S+`).FindString(stdout.String())
}
