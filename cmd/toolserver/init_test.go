package main

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/toolserver/toolserver/flow"
	"github.com/toolserver/toolserver/internal/treetest"
	"github.com/toolserver/toolserver/scaffold"
)

// nextSteps are the commands init printed after "Next", each as the
// arguments of toolserver.
func nextSteps(t *testing.T, out string) [][]string {
	t.Helper()
	_, after, ok := strings.Cut(out, "\nNext")
	if !ok {
		t.Fatalf("init printed no next steps:\n%s", out)
	}
	var cmds [][]string
	for _, l := range strings.Split(after, "\n") {
		if rest, ok := strings.CutPrefix(l, "  toolserver "); ok {
			cmds = append(cmds, strings.Fields(rest))
		}
	}
	if len(cmds) != 2 {
		t.Fatalf("got %d commands in the next steps, want 2 (update, then compare):\n%s", len(cmds), out)
	}
	return cmds
}

// TestInitThenRun is a new user's first minutes: init in an empty
// directory, then the two commands it prints, run as printed from that
// directory on the default device, then the command each CI template
// runs; all pass, and the CI job finds its report and JUnit file where
// it uploads them from.
func TestInitThenRun(t *testing.T) {
	sharedDevice(t, "chromium-cdp-1280x800") // flow run's default: the commands run as printed
	dir := t.TempDir()
	t.Chdir(dir)
	code, out, errOut := runCLI(t, "init", "--ci", "github")
	if code != exitOK {
		t.Fatalf("init: exit %d, want 0\n%s%s", code, out, errOut)
	}
	if code, out, errOut := runCLI(t, "init", "--ci", "gitlab"); code != exitOK {
		t.Fatalf("init --ci gitlab: exit %d, want 0\n%s%s", code, out, errOut)
	}
	cmds := nextSteps(t, out)
	if !slices.Contains(cmds[0], "--update-baselines") {
		t.Fatalf("got %q as the first next step, want the update", cmds[0])
	}
	for i, args := range cmds {
		code, out, errOut := runCLI(t, args...)
		if code != exitOK {
			t.Fatalf("next step %d, toolserver %s: exit %d, want 0\n%s%s", i+1, strings.Join(args, " "), code, out, errOut)
		}
		if i == 1 && !strings.Contains(out, "0 px allowed (default on chromium)") {
			t.Errorf("compare: got\n%s\nwant the strict default the config file keeps (0 px allowed (default on chromium))", out)
		}
	}
	if _, err := os.Stat(filepath.Join(".argent", "flows", "__baselines__", "example", "greeting__chromium-1280x800.png")); err != nil {
		t.Errorf("the baseline of the example flow: %v", err)
	}

	gh := githubWorkflow(t, ".")
	gl := gitlabJob(t, ".")
	for name, args := range map[string][]string{"github": gh.flowRunArgs(t), "gitlab": gl.flowRunArgs(t)} {
		if err := os.RemoveAll("toolserver-report"); err != nil {
			t.Fatal(err)
		}
		code, out, errOut := runCLI(t, args...)
		if code != exitOK {
			t.Fatalf("%s template's toolserver %s: exit %d, want 0\n%s%s", name, strings.Join(args, " "), code, out, errOut)
		}
		for _, p := range []string{gh.junitPath(t), gl.Toolserver.Artifacts.Reports.JUnit, filepath.Join(gh.uploadPath(t), "index.html")} {
			if _, err := os.Stat(p); err != nil {
				t.Errorf("%s: after the template's run, %v", name, err)
			}
		}
	}
}

// githubFile is what TestInitCITemplates reads of the GitHub workflow.
type githubFile struct {
	On   map[string]any `yaml:"on"`
	Jobs map[string]struct {
		RunsOn string            `yaml:"runs-on"`
		Env    map[string]string `yaml:"env"`
		Steps  []struct {
			Name string            `yaml:"name"`
			Uses string            `yaml:"uses"`
			Run  string            `yaml:"run"`
			If   string            `yaml:"if"`
			With map[string]string `yaml:"with"`
		} `yaml:"steps"`
	} `yaml:"jobs"`
}

func githubWorkflow(t *testing.T, dir string) githubFile {
	t.Helper()
	var f githubFile
	decodeYAMLFile(t, filepath.Join(dir, scaffold.GitHubFile), &f)
	if len(f.Jobs) != 1 || f.Jobs["flows"].RunsOn == "" {
		t.Fatalf("github workflow: got jobs %v, want one, flows, with runs-on", f.Jobs)
	}
	return f
}

// step returns the step of the flows job that uses an action starting
// with uses, or whose run contains run.
func (f githubFile) step(t *testing.T, uses, run string) (i int, with map[string]string, cond string) {
	t.Helper()
	for i, s := range f.Jobs["flows"].Steps {
		if (uses != "" && strings.HasPrefix(s.Uses, uses)) || (run != "" && strings.Contains(s.Run, run)) {
			return i, s.With, s.If
		}
	}
	t.Fatalf("github workflow: no step that uses %q or runs %q", uses, run)
	return 0, nil, ""
}

// flowRunArgs are the arguments of toolserver in the workflow's docker
// run: what follows the image.
func (f githubFile) flowRunArgs(t *testing.T) []string {
	t.Helper()
	i, _, _ := f.step(t, "", "docker run")
	run := f.Jobs["flows"].Steps[i].Run
	before, after, ok := strings.Cut(run, `"$TOOLSERVER_IMAGE"`)
	if !ok {
		t.Fatalf("github workflow: the docker run names no $TOOLSERVER_IMAGE: %q", run)
	}
	for _, want := range []string{"docker run --rm", `-v "$PWD:/project"`, "-w /project", `--user "$(id -u):$(id -g)"`, "--read-only --tmpfs /tmp"} {
		if !strings.Contains(before, want) {
			t.Errorf("github workflow: got docker run %q, want %s in it (docs/docker.md)", before, want)
		}
	}
	return strings.Fields(after)
}

func (f githubFile) junitPath(t *testing.T) string {
	t.Helper()
	_, with, _ := f.step(t, "mikepenz/action-junit-report@", "")
	return with["report_paths"]
}

func (f githubFile) uploadPath(t *testing.T) string {
	t.Helper()
	_, with, _ := f.step(t, "actions/upload-artifact@", "")
	return with["path"]
}

// gitlabFile is what TestInitCITemplates reads of the GitLab job.
type gitlabFile struct {
	Toolserver struct {
		Stage string `yaml:"stage"`
		Image struct {
			Name       string   `yaml:"name"`
			Entrypoint []string `yaml:"entrypoint"`
		} `yaml:"image"`
		Script    []string `yaml:"script"`
		Artifacts struct {
			When    string   `yaml:"when"`
			Paths   []string `yaml:"paths"`
			Reports struct {
				JUnit string `yaml:"junit"`
			} `yaml:"reports"`
		} `yaml:"artifacts"`
	} `yaml:"toolserver"`
}

func gitlabJob(t *testing.T, dir string) gitlabFile {
	t.Helper()
	var f gitlabFile
	decodeYAMLFile(t, filepath.Join(dir, scaffold.GitLabFile), &f)
	return f
}

// flowRunArgs are the arguments of the job's toolserver command.
func (f gitlabFile) flowRunArgs(t *testing.T) []string {
	t.Helper()
	if len(f.Toolserver.Script) != 1 {
		t.Fatalf("gitlab job: got script %q, want one command", f.Toolserver.Script)
	}
	rest, ok := strings.CutPrefix(f.Toolserver.Script[0], "toolserver ")
	if !ok {
		t.Fatalf("gitlab job: got script %q, want toolserver flow run", f.Toolserver.Script[0])
	}
	return strings.Fields(rest)
}

func decodeYAMLFile(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	dec := yaml.NewDecoder(strings.NewReader(string(b)))
	if err := dec.Decode(v); err != nil {
		t.Fatalf("%s is not valid YAML: %v", path, err)
	}
}

// TestInitCITemplates reads the generated GitHub workflow and GitLab job
// as YAML and checks their structure: the flows run in the image with a
// report and a JUnit file, the report is uploaded even when the flow
// step fails, and the JUnit file is published.
func TestInitCITemplates(t *testing.T) {
	t.Parallel()
	const image = "registry.example.com/team/toolserver:1.4"
	dir := t.TempDir()
	for _, ci := range []string{"github", "gitlab"} {
		if code, out, errOut := runCLI(t, "init", dir, "--ci", ci, "--image", image); code != exitOK {
			t.Fatalf("init --ci %s: exit %d, want 0\n%s%s", ci, code, out, errOut)
		}
	}
	flowArgs := func(t *testing.T, args []string) (report, junit, artifacts string) {
		t.Helper()
		if len(args) < 3 || args[0] != "flow" || args[1] != "run" || args[2] != ".argent/flows" || !slices.Contains(args, "-r") {
			t.Fatalf("got toolserver %q, want flow run .argent/flows -r …", args)
		}
		flag := func(name string) string {
			i := slices.Index(args, name)
			if i < 0 || i+1 == len(args) {
				t.Fatalf("got toolserver %q, want %s with a value", args, name)
			}
			return args[i+1]
		}
		return flag("--report"), flag("--junit"), flag("--artifacts")
	}
	under := func(p, dir string) bool {
		dir = strings.TrimSuffix(dir, "/")
		return strings.TrimSuffix(p, "/") == dir || strings.HasPrefix(p, dir+"/")
	}

	t.Run("github", func(t *testing.T) {
		f := githubWorkflow(t, dir)
		if _, ok := f.On["pull_request"]; !ok {
			t.Errorf("got on: %v, want pull_request among the triggers", f.On)
		}
		if got := f.Jobs["flows"].Env["TOOLSERVER_IMAGE"]; got != image {
			t.Errorf("got TOOLSERVER_IMAGE %q, want --image %q", got, image)
		}
		report, junit, artifacts := flowArgs(t, f.flowRunArgs(t))
		run, _, _ := f.step(t, "", "docker run")
		up, with, cond := f.step(t, "actions/upload-artifact@", "")
		if cond != "always()" || up < run {
			t.Errorf("upload: got step %d with if %q, want a step after the run (%d) with if: always()", up, cond, run)
		}
		if p := with["path"]; !under(report, p) || !under(artifacts, p) || !under(junit, p) {
			t.Errorf("upload: got path %q, want the report %s, the diffs %s and the JUnit file %s in it", p, report, artifacts, junit)
		}
		ju, with, cond := f.step(t, "mikepenz/action-junit-report@", "")
		if cond != "always()" || ju < run || with["report_paths"] != junit {
			t.Errorf("JUnit: got step %d with if %q and report_paths %q, want a step after the run with if: always() and %s", ju, cond, with["report_paths"], junit)
		}
		// The Markdown summary is written into the report and added to
		// the job's page from the runner, which alone sees the file.
		args := f.flowRunArgs(t)
		i := slices.Index(args, "--summary")
		if i < 0 || i+1 == len(args) || !under(args[i+1], report) {
			t.Fatalf("got toolserver %q, want --summary FILE in the report %s", args, report)
		}
		sum, _, cond := f.step(t, "", `>> "$GITHUB_STEP_SUMMARY"`)
		if cond != "always()" || sum < run {
			t.Errorf("summary: got step %d with if %q, want a step after the run with if: always()", sum, cond)
		}
	})
	t.Run("gitlab", func(t *testing.T) {
		f := gitlabJob(t, dir)
		j := f.Toolserver
		if j.Image.Name != image || !slices.Equal(j.Image.Entrypoint, []string{""}) {
			t.Errorf("got image %q with entrypoint %q, want %q with the image's entrypoint cleared", j.Image.Name, j.Image.Entrypoint, image)
		}
		report, junit, artifacts := flowArgs(t, f.flowRunArgs(t))
		if j.Artifacts.When != "always" {
			t.Errorf("artifacts: got when %q, want always", j.Artifacts.When)
		}
		if len(j.Artifacts.Paths) != 1 || !under(report, j.Artifacts.Paths[0]) || !under(artifacts, j.Artifacts.Paths[0]) {
			t.Errorf("artifacts: got paths %q, want the report %s and the diffs %s in them", j.Artifacts.Paths, report, artifacts)
		}
		if j.Artifacts.Reports.JUnit != junit {
			t.Errorf("artifacts: got reports.junit %q, want %s", j.Artifacts.Reports.JUnit, junit)
		}
	})
	t.Run("gitignore", func(t *testing.T) {
		b, err := os.ReadFile(filepath.Join(dir, ".gitignore"))
		if err != nil {
			t.Fatal(err)
		}
		report, _, _ := flowArgs(t, githubWorkflow(t, dir).flowRunArgs(t))
		if missing := scaffold.MissingIgnores(b, []string{report}); len(missing) > 0 {
			t.Errorf("got .gitignore\n%s\nwant the report directory %s in it", b, report)
		}
	})
	t.Run("config", func(t *testing.T) {
		c, err := flow.LoadProjectConfig(dir)
		if err != nil {
			t.Fatalf("the written %s: %v", flow.ConfigFile, err)
		}
		s := c.Snapshot
		if s.MaxMismatch != nil || s.MaxDiffPixels != nil || s.Threshold != nil || s.WindowSize != nil || c.BaseURL != "" || c.Expose != nil {
			t.Errorf("got %+v, want only the settings equal to the defaults set (the limits commented out)", c)
		}
		if s.Metric == nil || s.StopOnFailure == nil || *s.StopOnFailure {
			t.Errorf("got metric %v, stopOnFailure %v, want both spelled out as their defaults", s.Metric, s.StopOnFailure)
		}
	})
}

// TestInitURL is init --url: a flow against a running app, and no page
// written; it passes after its update.
func TestInitURL(t *testing.T) {
	t.Parallel()
	dev := "--device=" + sharedDevice(t, "chromium-cdp-713x413")
	app := httptest.NewServer(http.FileServer(http.Dir("../../examples/shop/site")))
	t.Cleanup(app.Close)
	dir := t.TempDir()
	code, out, errOut := runCLI(t, "init", dir, "--url", app.URL+"/index.html")
	if code != exitOK {
		t.Fatalf("init --url: exit %d, want 0\n%s%s", code, out, errOut)
	}
	if _, err := os.Stat(filepath.Join(dir, "site")); !os.IsNotExist(err) {
		t.Errorf("init --url wrote a page (%v), want none", err)
	}
	flows := filepath.Join(dir, ".argent", "flows")
	for _, args := range [][]string{{"--update-baselines"}, nil} {
		code, out, errOut := runCLI(t, append([]string{"flow", "run", flows, "-r", "--project", dir, dev}, args...)...)
		if code != exitOK {
			t.Fatalf("flow run %q: exit %d, want 0\n%s%s", args, code, out, errOut)
		}
	}
}

// TestInitLeavesFiles runs init where the project has its own files:
// none is changed, .gitignore only gains the lines it lacked, and each
// file left is said so.
func TestInitLeavesFiles(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	outside := t.TempDir()
	mine := map[string]string{
		flow.ConfigFile:     "snapshot:\n  maxMismatch: 1\n",
		scaffold.PageFile:   "<p>my app</p>\n",
		scaffold.GitHubFile: "name: mine\n",
		scaffold.GitLabFile: "stages: [build]\n",
		".gitignore":        "node_modules", // no final newline
		"src/app.js":        "console.log(1)\n",
		".gitlab/keep.md":   "mine\n",
	}
	for name, data := range mine {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	// A dangling link where the example flow goes: left, and nothing
	// written where it points.
	if err := os.MkdirAll(filepath.Join(dir, ".argent", "flows"), 0o755); err != nil {
		t.Fatal(err)
	}
	target := filepath.Join(outside, "example.yaml")
	if err := os.Symlink(target, filepath.Join(dir, filepath.FromSlash(scaffold.FlowFile))); err != nil {
		t.Fatal(err)
	}
	before := treetest.Of(t, dir)
	code, out, errOut := runCLI(t, "init", dir, "--ci", "github")
	if code != exitOK {
		t.Fatalf("init: exit %d, want 0\n%s%s", code, out, errOut)
	}
	code, out2, errOut := runCLI(t, "init", dir, "--ci", "gitlab")
	if code != exitOK {
		t.Fatalf("init --ci gitlab: exit %d, want 0\n%s%s", code, out2, errOut)
	}
	out += out2
	after := treetest.Of(t, dir)

	gitignore := filepath.Join(dir, ".gitignore")
	was, now := before[gitignore], after[gitignore]
	if !strings.HasPrefix(now, was) {
		t.Errorf("got .gitignore\n%s\nwant it to start with what it had, %q", now, was)
	}
	if added := strings.TrimPrefix(now, was); !strings.Contains(added, "\n/toolserver-report/\n") || strings.Count(now, "toolserver-report") != 1 {
		t.Errorf("got %q appended to .gitignore, want /toolserver-report/ on a line of its own, once", added)
	}
	if st, err := os.Stat(gitignore); err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("got .gitignore's mode %v (%v), want its own 0600 kept", st.Mode().Perm(), err)
	}
	delete(before, gitignore)
	delete(after, gitignore)
	for p, was := range before {
		if after[p] != was {
			t.Errorf("%s: got it changed, want it untouched", p)
		}
	}
	for _, want := range []string{
		"left " + filepath.Join(dir, ".argent", "toolserver.yaml") + " (exists)",
		"left " + filepath.Join(dir, "site", "index.html") + " (exists)",
		"left " + filepath.Join(dir, ".argent", "flows", "example.yaml") + " (exists)",
		"left " + filepath.Join(dir, ".github", "workflows", "toolserver.yml") + " (exists)",
		"wrote " + filepath.Join(dir, ".gitlab", "toolserver.yml"),
		"- local: .gitlab/toolserver.yml",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("got\n%s\nwant %q in it", out, want)
		}
	}
	if _, err := os.Lstat(target); !os.IsNotExist(err) {
		t.Errorf("the link's target outside the project: got %v, want nothing written there", err)
	}
	var added []string
	for p := range after {
		if _, ok := before[p]; !ok {
			added = append(added, p)
		}
	}
	slices.Sort(added)
	if want := []string{filepath.Join(dir, ".gitlab", "toolserver.yml")}; !slices.Equal(added, want) {
		t.Errorf("got new entries %q, want only %q", added, want)
	}

	// Again: everything is there now, and .gitignore has its line.
	before = treetest.Of(t, dir)
	code, out, errOut = runCLI(t, "init", dir, "--ci", "gitlab")
	if code != exitOK || strings.Contains(out, "wrote") || strings.Contains(out, "appended") {
		t.Errorf("init a second time: exit %d, got\n%s%s\nwant exit 0 and every file left", code, out, errOut)
	}
	treetest.Same(t, before, treetest.Of(t, dir))
}

// TestInitDryRun lists what init would write and leave, and writes
// nothing: not in an empty directory, not where files are, not the
// directory itself.
func TestInitDryRun(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, ".gitignore"), []byte("node_modules\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, ".argent"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, ".argent", "toolserver.yaml"), []byte("{}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	before := treetest.Of(t, dir)
	code, out, errOut := runCLI(t, "init", dir, "--dry-run", "--ci", "github")
	if code != exitOK {
		t.Fatalf("init --dry-run: exit %d, want 0\n%s%s", code, out, errOut)
	}
	treetest.Same(t, before, treetest.Of(t, dir))
	for _, want := range []string{
		"would write " + filepath.Join(dir, ".argent", "flows", "example.yaml") + "\n",
		"would write " + filepath.Join(dir, "site", "index.html") + "\n",
		"would write " + filepath.Join(dir, ".github", "workflows", "toolserver.yml") + "\n",
		"would leave " + filepath.Join(dir, ".argent", "toolserver.yaml") + " (exists)\n",
		"would append to " + filepath.Join(dir, ".gitignore") + ": /toolserver-report/\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("got\n%s\nwant %q in it", out, want)
		}
	}

	fresh := filepath.Join(t.TempDir(), "new")
	if code, out, errOut := runCLI(t, "init", fresh, "--dry-run"); code != exitOK || !strings.Contains(out, "would write ") {
		t.Errorf("init --dry-run of a new directory: exit %d, got\n%s%s\nwant exit 0 and the files it would write", code, out, errOut)
	}
	if _, err := os.Stat(fresh); !os.IsNotExist(err) {
		t.Errorf("init --dry-run of a new directory: got %v, want it not made", err)
	}
}

// TestInitBadInput: a bad --ci, --url or --image, or a DIR that is a
// file, is a usage error that writes nothing; a path from outside
// reaches the terminal escaped.
func TestInitBadInput(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	file := filepath.Join(dir, "a-file")
	if err := os.WriteFile(file, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"ci", []string{"init", dir, "--ci", "circle"}, `--ci "circle": want github or gitlab`},
		{"url scheme", []string{"init", dir, "--url", "ftp://example.com"}, "--url: "},
		{"url host", []string{"init", dir, "--url", "http://"}, "not an http or https URL with a host"},
		{"image", []string{"init", dir, "--ci", "github", "--image", "x\ny: 1"}, "--image "},
		{"file", []string{"init", file}, "a-file is a file, not a directory"},
		{"two dirs", []string{"init", dir, dir}, "at most one directory"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := treetest.Of(t, dir)
			code, out, errOut := runCLI(t, tc.args...)
			if code != exitUsage || !strings.Contains(errOut, tc.want) {
				t.Errorf("got exit %d, stderr %q, want exit 2 and %q", code, errOut, tc.want)
			}
			if out != "" {
				t.Errorf("got stdout %q, want nothing", out)
			}
			treetest.Same(t, before, treetest.Of(t, dir))
		})
	}

	odd := filepath.Join(t.TempDir(), "a\x1b[31mred")
	code, out, errOut := runCLI(t, "init", odd, "--dry-run")
	if code != exitOK || strings.Contains(out, "\x1b") || !strings.Contains(out, `a\u001b[31mred`) {
		t.Errorf("got exit %d, stdout %q (%s), want exit 0 and the directory's escape escaped", code, out, errOut)
	}
}

// TestInitDocsShowTemplates keeps docs/ci.md's two jobs what init
// writes with its default image.
func TestInitDocsShowTemplates(t *testing.T) {
	t.Parallel()
	doc, err := os.ReadFile("../../docs/ci.md")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for _, ci := range []string{"github", "gitlab"} {
		if code, out, errOut := runCLI(t, "init", dir, "--ci", ci); code != exitOK {
			t.Fatalf("init --ci %s: exit %d, want 0\n%s%s", ci, code, out, errOut)
		}
	}
	for _, name := range []string{scaffold.GitHubFile, scaffold.GitLabFile} {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(doc), "```yaml\n"+string(b)+"```\n") {
			t.Errorf("docs/ci.md does not show %s as init writes it:\n%s", name, b)
		}
	}
}
