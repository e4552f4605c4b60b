package main

import (
	"bytes"
	"context"
	"embed"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"go.yaml.in/yaml/v3"

	"github.com/toolserver/toolserver/flow"
	"github.com/toolserver/toolserver/internal/atomicfile"
	"github.com/toolserver/toolserver/internal/printable"
)

// initTemplates are the files toolserver init writes, kept as files so
// that they read (and are reviewed) as what a user gets.
//
//go:embed inittemplates
var initTemplates embed.FS

// The paths init writes, relative to the project directory, slash-separated.
const (
	initFlowFile   = ".argent/flows/example.yaml"
	initPageFile   = "site/index.html"
	initGitignore  = ".gitignore"
	initGitHubFile = ".github/workflows/toolserver.yml"
	initGitLabFile = ".gitlab-ci.yml"
	// initGitLabJob is where the GitLab job goes when the project already
	// has a .gitlab-ci.yml, which init never changes.
	initGitLabJob = ".gitlab/toolserver.yml"
	// initImage is the image the CI templates name by default: what
	// `make docker` builds, retagged (docs/docker.md).
	initImage = "toolserver:latest"
	// initUpdateCmd and initRunCmd make the baselines and compare with
	// them, from the project directory: what init prints, and what its
	// test runs as printed.
	initUpdateCmd = "toolserver flow run .argent/flows -r --update-baselines"
	initRunCmd    = "toolserver flow run .argent/flows -r --report toolserver-report"
)

// maxGitignoreBytes caps the .gitignore init reads to append to.
const maxGitignoreBytes = 1 << 20

// maxImageBytes caps --image; imageRef is the characters of an image
// reference (registry, path, tag, digest), which keeps the value plain
// in YAML and in a shell line.
const maxImageBytes = 255

var imageRef = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._/:@-]*$`)

// initOptions are the flags of init.
type initOptions struct {
	streams
	// ci is --ci: "", "github" or "gitlab".
	ci string
	// url is --url: the example flow opens it instead of a page of its own.
	url    string
	image  string
	dryRun bool
}

func newInitCommand(s streams) *cobra.Command {
	opts := initOptions{streams: s}
	cmd := &cobra.Command{
		Use:   "init [DIR] [flags]",
		Short: "Start a project: an example flow, its page, the config file and a CI job",
		Long: `Write a project that runs at once into DIR (default .): an example flow in
` + initFlowFile + ` against a page it also writes (` + initPageFile + `),
or with --url against that URL; ` + flow.ConfigFile + ` with the defaults
spelled out and commented; and the report directory the commands use,
toolserver-report/, in .gitignore. With --ci github it writes a GitHub
Actions workflow (` + initGitHubFile + `), with --ci gitlab a GitLab CI
job (` + initGitLabFile + `, or ` + initGitLabJob + ` when the project has a
` + initGitLabFile + ` already, with the include: line to add): each runs the
flows in the toolserver image (--image), keeps the report and the diffs
as artifacts even when a flow fails, and publishes the JUnit file.

init never overwrites a file: one that exists is left as it is, and said
so ("left ` + flow.ConfigFile + ` (exists)"). The one file it may change is
.gitignore, and only by appending the lines it lacks. --dry-run lists what
it would write and leave, and writes nothing.

Then, in DIR:
  ` + initUpdateCmd + `
  ` + initRunCmd,
		Example: `  toolserver init
  toolserver init my-app --ci github
  toolserver init --url http://localhost:5173 --ci gitlab --image registry.example.com/toolserver:1.4
  toolserver init --dry-run`,
		Args: func(c *cobra.Command, args []string) error {
			if len(args) > 1 {
				return usageError("init: want at most one directory, got %d arguments", len(args))
			}
			return nil
		},
		ValidArgsFunction: func(c *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
			return nil, cobra.ShellCompDirectiveFilterDirs
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			return runInit(cmd.Context(), opts, args)
		},
	}
	setExitStatus(cmd, exitStatusInit)
	f := cmd.Flags()
	f.StringVar(&opts.ci, "ci", "", "also write a CI job: github (GitHub Actions) or gitlab (GitLab CI)")
	f.StringVar(&opts.url, "url", "", "the example flow opens `URL` (http or https) instead of a page init writes")
	f.StringVar(&opts.image, "image", initImage, "the toolserver image the CI job runs (`REF`: registry/name:tag)")
	f.BoolVar(&opts.dryRun, "dry-run", false, "list what would be written and left; write nothing")
	_ = cmd.RegisterFlagCompletionFunc("ci", cobra.FixedCompletions([]string{"github", "gitlab"}, cobra.ShellCompDirectiveNoFileComp))
	return cmd
}

const exitStatusInit = `0  every file was written or left as it was (or, with --dry-run, would be)
2  a usage error (a bad --ci, --url or --image, a DIR that is a file) or a file that could not be written`

// initFile is one file of the project init writes.
type initFile struct {
	name string // relative to the project, slash-separated
	data []byte
}

// runInit writes the project's files into the directory of args (.
// without one) and prints a line for each: wrote, left (exists), or with
// --dry-run what it would do.
func runInit(ctx context.Context, opts initOptions, args []string) error {
	dir := "."
	if len(args) == 1 {
		dir = args[0]
	}
	files, err := initPlan(opts)
	if err != nil {
		return err
	}
	switch st, err := os.Stat(dir); {
	case err == nil && !st.IsDir():
		return usageError("init: %s is a file, not a directory", printable.String(dir))
	case errors.Is(err, fs.ErrNotExist):
		if !opts.dryRun {
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return fmt.Errorf("init: %w", err)
			}
		}
	case err != nil:
		return fmt.Errorf("init: %w", err)
	}
	w := &initWriter{dir: dir, dryRun: opts.dryRun, out: opts.stdout}
	if !opts.dryRun {
		root, err := os.OpenRoot(dir)
		if err != nil {
			return fmt.Errorf("init: %w", err)
		}
		defer root.Close()
		w.root = root
	}
	if opts.ci == "gitlab" && w.exists(initGitLabFile) {
		// Never change the project's own pipeline: the job goes beside
		// it, and the user includes it.
		files = renameFile(files, initGitLabFile, initGitLabJob)
	}
	for _, f := range files {
		if err := ctx.Err(); err != nil {
			return err
		}
		if f.name == initGitignore {
			err = w.appendLines(f.name, f.data)
		} else {
			err = w.create(f.name, f.data)
		}
		if err != nil {
			return err
		}
	}
	if w.relocatedGitLab(files) {
		fmt.Fprintf(opts.stdout, "\n%s is left as it is; to run the job, add to it (the job's stage is test: change it if your stages: have none):\n  include:\n    - local: %s\n", initGitLabFile, initGitLabJob)
	}
	if opts.dryRun {
		return nil
	}
	fmt.Fprintln(opts.stdout, "\nNext, make the baselines, then compare with them:")
	if dir != "." {
		fmt.Fprintf(opts.stdout, "  cd %s\n", printable.String(shellQuote(dir)))
	}
	fmt.Fprintf(opts.stdout, "  %s\n  %s\n", initUpdateCmd, initRunCmd)
	return nil
}

// initPlan is the files init writes for opts, in the order it prints them.
func initPlan(opts initOptions) ([]initFile, error) {
	var files []initFile
	read := func(name string) []byte {
		b, err := initTemplates.ReadFile("inittemplates/" + name)
		if err != nil {
			panic(err) // embedded: every name below is in the binary
		}
		return b
	}
	if len(opts.image) > maxImageBytes || !imageRef.MatchString(opts.image) {
		return nil, usageError("init: --image %.80q is not an image reference (registry.example.com/toolserver:1.4)", opts.image)
	}
	switch opts.url {
	case "":
		files = append(files,
			initFile{initFlowFile, read("example.yaml")},
			initFile{initPageFile, read("index.html")})
	default:
		if err := flow.CheckBaseURL(opts.url); err != nil {
			return nil, usageError("init: --url: %v", err)
		}
		files = append(files, initFile{initFlowFile, urlFlow(read("example-url.yaml"), opts.url)})
	}
	files = append(files,
		initFile{flow.ConfigFile, read("toolserver.yaml")},
		initFile{initGitignore, read("gitignore")})
	image := []byte(opts.image)
	switch opts.ci {
	case "":
	case "github":
		files = append(files, initFile{initGitHubFile, bytes.ReplaceAll(read("github.yml"), []byte("{{IMAGE}}"), image)})
	case "gitlab":
		files = append(files, initFile{initGitLabFile, bytes.ReplaceAll(read("gitlab.yml"), []byte("{{IMAGE}}"), image)})
	default:
		return nil, usageError("init: --ci %.40q: want github or gitlab", opts.ci)
	}
	return files, nil
}

// urlFlow fills the --url template: the URL as a YAML scalar for
// launch:, and escaped for the comment (CheckBaseURL has refused a URL
// with a line break or a control character already).
func urlFlow(tmpl []byte, u string) []byte {
	v, err := yaml.Marshal(u)
	if err != nil {
		panic(err) // a string always marshals
	}
	out := bytes.ReplaceAll(tmpl, []byte("{{URL}}"), bytes.TrimRight(v, "\n"))
	return bytes.ReplaceAll(out, []byte("{{URL_COMMENT}}"), []byte(printable.String(u)))
}

func renameFile(files []initFile, from, to string) []initFile {
	for i := range files {
		if files[i].name == from {
			files[i].name = to
		}
	}
	return files
}

// initWriter writes the files of init under dir, through root so that
// no file lands outside it by a symbolic link, and prints what it did.
type initWriter struct {
	dir    string
	root   *os.Root // nil in a dry run
	dryRun bool
	out    io.Writer
}

// shown is name as the user finds it from the working directory,
// escaped for the terminal.
func (w *initWriter) shown(name string) string {
	return printable.String(filepath.Join(w.dir, filepath.FromSlash(name)))
}

// exists reports whether name is there, as anything: a file, a
// directory, a link (even a dangling one).
func (w *initWriter) exists(name string) bool {
	_, err := os.Lstat(filepath.Join(w.dir, filepath.FromSlash(name)))
	return err == nil
}

func (w *initWriter) relocatedGitLab(files []initFile) bool {
	for _, f := range files {
		if f.name == initGitLabJob {
			return true
		}
	}
	return false
}

// create writes name when it does not exist, and leaves it when it does.
func (w *initWriter) create(name string, data []byte) error {
	if w.exists(name) {
		fmt.Fprintf(w.out, "%s %s (exists)\n", w.verb("left", "would leave"), w.shown(name))
		return nil
	}
	if w.dryRun {
		fmt.Fprintf(w.out, "would write %s\n", w.shown(name))
		return nil
	}
	if dir := path.Dir(name); dir != "." {
		if err := w.root.MkdirAll(filepath.FromSlash(dir), 0o755); err != nil {
			return fmt.Errorf("init: %s: %w", w.shown(name), err)
		}
	}
	switch err := atomicfile.CreateIn(w.root, filepath.FromSlash(name), data, 0o644); {
	case errors.Is(err, fs.ErrExist):
		// Made by someone else since we looked: theirs stays.
		fmt.Fprintf(w.out, "left %s (exists)\n", w.shown(name))
		return nil
	case err != nil:
		return fmt.Errorf("init: %s: %w", w.shown(name), err)
	}
	fmt.Fprintf(w.out, "wrote %s\n", w.shown(name))
	return nil
}

// appendLines adds to the .gitignore name the lines of lines it lacks
// (its comment only with them), or writes it when there is none.
func (w *initWriter) appendLines(name string, lines []byte) error {
	p := filepath.Join(w.dir, filepath.FromSlash(name))
	st, err := os.Lstat(p)
	if errors.Is(err, fs.ErrNotExist) {
		return w.create(name, lines)
	}
	if err != nil {
		return fmt.Errorf("init: %w", err)
	}
	if !st.Mode().IsRegular() {
		fmt.Fprintf(w.out, "%s %s (not a regular file; add %s to it yourself)\n", w.verb("left", "would leave"), w.shown(name), strings.Join(ignoreLines(lines), ", "))
		return nil
	}
	if st.Size() > maxGitignoreBytes {
		return badInput(fmt.Errorf("init: %s is %d bytes; init reads at most %d (1 MiB) of a .gitignore", w.shown(name), st.Size(), maxGitignoreBytes))
	}
	old, err := os.ReadFile(p)
	if err != nil {
		return fmt.Errorf("init: %w", err)
	}
	missing := missingIgnores(old, ignoreLines(lines))
	if len(missing) == 0 {
		fmt.Fprintf(w.out, "%s %s (has %s)\n", w.verb("left", "would leave"), w.shown(name), strings.Join(ignoreLines(lines), ", "))
		return nil
	}
	if w.dryRun {
		fmt.Fprintf(w.out, "would append to %s: %s\n", w.shown(name), strings.Join(missing, ", "))
		return nil
	}
	var add bytes.Buffer
	if len(old) > 0 && !bytes.HasSuffix(old, []byte("\n")) {
		add.WriteByte('\n')
	}
	if len(old) > 0 {
		add.WriteByte('\n')
	}
	for _, l := range strings.Split(strings.TrimRight(string(lines), "\n"), "\n") {
		if strings.HasPrefix(l, "#") || slices.Contains(missing, l) {
			add.WriteString(l + "\n")
		}
	}
	if err := atomicfile.ReplaceIn(w.root, filepath.FromSlash(name), append(old, add.Bytes()...), st.Mode().Perm()); err != nil {
		return fmt.Errorf("init: %s: %w", w.shown(name), err)
	}
	fmt.Fprintf(w.out, "appended to %s: %s\n", w.shown(name), strings.Join(missing, ", "))
	return nil
}

func (w *initWriter) verb(done, dry string) string {
	if w.dryRun {
		return dry
	}
	return done
}

// ignoreLines are the patterns of a .gitignore template: its lines but
// the comments and blank ones.
func ignoreLines(b []byte) []string {
	var out []string
	for _, l := range strings.Split(string(b), "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
			out = append(out, l)
		}
	}
	return out
}

// missingIgnores are the patterns of want that old has in no spelling:
// "/toolserver-report/", "toolserver-report/", "/toolserver-report" and
// "toolserver-report" all keep the report out of the repository.
func missingIgnores(old []byte, want []string) []string {
	norm := func(s string) string { return strings.Trim(strings.TrimSpace(s), "/") }
	have := map[string]bool{}
	for _, l := range strings.Split(string(old), "\n") {
		have[norm(l)] = true
	}
	var out []string
	for _, p := range want {
		if !have[norm(p)] {
			out = append(out, p)
		}
	}
	return out
}

// shellQuote quotes s for a POSIX shell when it needs it.
func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./:@+=", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
