package compat

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"
)

// update rewrites the goldens from the binary under test. CI never passes
// it: a re-record says in its commit why the behaviour it records changed.
var update = flag.Bool("update", false, "rewrite testdata/golden from this binary (never in CI; justify a re-record in its commit)")

var (
	// bin is the toolserver binary TestMain builds from this tree.
	bin string
	// tmp is the directory every exchange runs under; the goldens spell
	// it $TMP. Its name has a fixed length (tempRoot), for an answer
	// clips a long path at a fixed width.
	tmp string
)

// TestMain builds the binary once, with the plain go build a user runs,
// so that the exchanges test what ships and nothing of its insides.
func TestMain(m *testing.M) {
	flag.Parse()
	code, err := testMain(m)
	if err != nil {
		fmt.Fprintln(os.Stderr, "compat:", err)
		code = 1
	}
	os.Exit(code)
}

func testMain(m *testing.M) (int, error) {
	dir, err := tempRoot()
	if err != nil {
		return 1, err
	}
	defer os.RemoveAll(dir)
	tmp = dir
	for _, d := range []string{"bin", "home", "tmp"} {
		if err := os.Mkdir(filepath.Join(tmp, d), 0o755); err != nil {
			return 1, err
		}
	}
	mod, err := moduleRoot()
	if err != nil {
		return 1, err
	}
	// A cold build on a loaded machine takes minutes; a warm one seconds.
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	bin = filepath.Join(tmp, "bin", "toolserver")
	build := exec.CommandContext(ctx, goTool(), "build", "-o", bin, "./cmd/toolserver")
	build.Dir = mod
	if out, err := build.CombinedOutput(); err != nil {
		return 1, fmt.Errorf("go build ./cmd/toolserver: %v\n%s", err, out)
	}
	code := m.Run()
	if code != 0 {
		return code, nil
	}
	if err := checkGoldens(); err != nil {
		return 1, err
	}
	return code, goleak.Find()
}

// tempRoot makes the directory the exchanges run under:
// /tmp/compat-XXXXXXXX, whatever $TMPDIR says, so that its path has the
// length it had when the goldens were recorded (a summary clips a long
// message, path included, at a fixed width).
func tempRoot() (string, error) {
	for range 100 {
		dir := fmt.Sprintf("/tmp/compat-%08x", rand.Uint32())
		err := os.Mkdir(dir, 0o755)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		return dir, err
	}
	return "", errors.New("no free name /tmp/compat-XXXXXXXX")
}

// moduleRoot is the directory of go.mod above the test's directory.
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		up := filepath.Dir(dir)
		if up == dir {
			return "", errors.New("no go.mod above the test's directory")
		}
		dir = up
	}
}

// goTool is the go command on PATH, else the one of the usual install.
func goTool() string {
	if p, err := exec.LookPath("go"); err == nil {
		return p
	}
	return "/usr/local/go/bin/go"
}

// goldenDir holds one golden file per exchange, under its test's name.
const goldenDir = "testdata/golden"

var (
	checkedMu sync.Mutex
	// checked are the goldens the run compared or wrote, so that a
	// golden no exchange reads any more is found.
	checked = map[string]bool{}
)

// golden compares got, already normalized, with the golden file of the
// exchange name (test/exchange), or writes it with -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join(goldenDir, filepath.FromSlash(name)+".txt")
	checkedMu.Lock()
	checked[filepath.ToSlash(path)] = true
	checkedMu.Unlock()
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Errorf("%v: record it with go test ./internal/compat -update", err)
		return
	}
	if got != string(want) {
		t.Errorf("%s: the binary's answer differs from the recorded one:\n%s", path, firstDiff(got, string(want)))
	}
}

// checkGoldens fails a full run that left a golden unread (its exchange
// was renamed or removed), and -update removes it; a run narrowed by
// -run reads only some, and checks nothing.
func checkGoldens() error {
	if f := flag.Lookup("test.run"); f != nil && f.Value.String() != "" {
		return nil
	}
	var stale []string
	err := filepath.WalkDir(goldenDir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || checked[filepath.ToSlash(p)] {
			return err
		}
		if *update {
			return os.Remove(p)
		}
		stale = append(stale, p)
		return nil
	})
	if err != nil {
		return err
	}
	if len(stale) > 0 {
		return fmt.Errorf("goldens no exchange reads: %s (go test ./internal/compat -update removes them)", strings.Join(stale, ", "))
	}
	return nil
}

// firstDiff shows the first line where got and want part, with the
// column and the text around it (an answer of one long JSON line).
func firstDiff(got, want string) string {
	g, w := strings.Split(got, "\n"), strings.Split(want, "\n")
	for i := 0; i < max(len(g), len(w)); i++ {
		var gl, wl string
		if i < len(g) {
			gl = g[i]
		}
		if i < len(w) {
			wl = w[i]
		}
		if gl == wl {
			continue
		}
		col := 0
		for col < len(gl) && col < len(wl) && gl[col] == wl[col] {
			col++
		}
		from := max(0, col-120)
		return fmt.Sprintf("line %d, column %d:\ngot:  …%s\nwant: …%s\n(got %d lines, want %d)", i+1, col+1, clip(gl[from:], 300), clip(wl[from:], 300), len(g), len(w))
	}
	return "no line differs"
}

func clip(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}

// baseEnv is the environment of every run of the binary: nothing of the
// user's (no ARGENT_*, TOOLSERVER_*, GITHUB_STEP_SUMMARY, XDG_*), a home
// and a temp dir of the test's, and where Chromium is when it is set.
func baseEnv() []string {
	env := []string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + filepath.Join(tmp, "home"),
		"TMPDIR=" + filepath.Join(tmp, "tmp"),
		"LANG=C.UTF-8",
		"TZ=UTC",
	}
	if p := os.Getenv("CHROMIUM_PATH"); p != "" {
		env = append(env, "CHROMIUM_PATH="+p)
	}
	return env
}

// exchange is one run of the binary.
type exchange struct {
	args []string
	// dir is the working directory; "" is a fresh one under tmp.
	dir string
	env []string // beyond baseEnv
	// stdin is what the binary reads; "" is an empty stdin.
	stdin string
	// show are files (relative to dir) the golden records after the run.
	show []string
	// tree records the files under dir (relative paths) after the run.
	tree bool
}

// result is what a run of the binary answered.
type result struct {
	stdout, stderr string
	exit           int
}

// cliTimeout bounds one run of the binary: a local flow run boots
// Chromium, which on a loaded machine takes seconds.
const cliTimeout = 2 * time.Minute

// runBinary runs the binary as x says and returns what it answered.
func runBinary(t *testing.T, x exchange) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), cliTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, x.args...)
	cmd.Dir = x.dir
	cmd.Env = append(baseEnv(), x.env...)
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGQUIT) }
	cmd.WaitDelay = 10 * time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdin = strings.NewReader(x.stdin)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
	case err != nil:
		t.Fatalf("toolserver %s: %v\nstderr: %s", strings.Join(x.args, " "), err, stderr.String())
	}
	if ctx.Err() != nil {
		t.Fatalf("toolserver %s: still running after %s\nstderr: %s", strings.Join(x.args, " "), cliTimeout, stderr.String())
	}
	return result{stdout: stdout.String(), stderr: stderr.String(), exit: cmd.ProcessState.ExitCode()}
}

// cli runs x and compares the record of its answer with the golden name.
func cli(t *testing.T, name string, x exchange) result {
	t.Helper()
	r := runBinary(t, x)
	var b strings.Builder
	fmt.Fprintf(&b, "$ toolserver %s\n", shellWords(x.args))
	for _, e := range x.env {
		fmt.Fprintf(&b, "env %s\n", e)
	}
	if x.stdin != "" {
		section(&b, "stdin", x.stdin)
	}
	fmt.Fprintf(&b, "exit %d\n", r.exit)
	section(&b, "stdout", r.stdout)
	section(&b, "stderr", r.stderr)
	if x.tree {
		var files []string
		err := filepath.WalkDir(x.dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			rel, _ := filepath.Rel(x.dir, p)
			files = append(files, filepath.ToSlash(rel))
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		slices.Sort(files)
		section(&b, "tree", strings.Join(files, "\n")+"\n")
	}
	for _, f := range x.show {
		data, err := os.ReadFile(filepath.Join(x.dir, f))
		if err != nil {
			section(&b, "file "+f, fmt.Sprintf("(unreadable: %v)\n", errors.Unwrap(err)))
			continue
		}
		section(&b, "file "+f, string(data))
	}
	golden(t, name, normalize(b.String()))
	return r
}

// section writes one part of a record: its title, then its text as it
// is; a text with no final newline says so, for that too is an answer.
func section(b *strings.Builder, title, text string) {
	fmt.Fprintf(b, "-- %s --\n", title)
	b.WriteString(text)
	if text != "" && !strings.HasSuffix(text, "\n") {
		b.WriteString("\n(no final newline)\n")
	}
}

// shellWords prints args as a shell would need them.
func shellWords(args []string) string {
	out := make([]string, len(args))
	for i, a := range args {
		if a == "" || strings.ContainsAny(a, " \t\n\"'\\$*?{}[]<>|&;()#~`") {
			a = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
		out[i] = a
	}
	return strings.Join(out, " ")
}

// workDir makes a fresh working directory under tmp for one exchange or
// sequence, holding a copy of the project testdata/<project> ("" none).
func workDir(t *testing.T, name, project string) string {
	t.Helper()
	dir := filepath.Join(tmp, "work", name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if project == "" {
		return dir
	}
	if err := os.CopyFS(dir, os.DirFS(filepath.Join("testdata", project))); err != nil {
		t.Fatal(err)
	}
	return dir
}
