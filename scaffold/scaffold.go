// Package scaffold is what toolserver init writes: a project that runs at
// once (an example flow and its page, the config file, the report
// directory in .gitignore, and a CI job), from templates kept as files so
// that they read, and are reviewed, as what a user gets; and how it writes
// them, never overwriting a file.
package scaffold

import (
	"bytes"
	"embed"
	"fmt"
	"regexp"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/toolserver/toolserver/flow"
	"github.com/toolserver/toolserver/internal/printable"
)

//go:embed templates
var templates embed.FS

// The paths init writes, relative to the project directory, slash-separated.
const (
	FlowFile   = ".argent/flows/example.yaml"
	PageFile   = "site/index.html"
	Gitignore  = ".gitignore"
	GitHubFile = ".github/workflows/toolserver.yml"
	GitLabFile = ".gitlab-ci.yml"
	// GitLabJob is where the GitLab job goes when the project already has
	// a .gitlab-ci.yml, which init never changes.
	GitLabJob = ".gitlab/toolserver.yml"
)

const (
	// DefaultImage is the image the CI templates name by default: what
	// `make docker` builds, retagged (docs/docker.md).
	DefaultImage = "toolserver:latest"
	// UpdateCmd and RunCmd make the baselines and compare with them, from
	// the project directory: what init prints, and what its test runs as
	// printed.
	UpdateCmd = "toolserver flow run .argent/flows -r --update-baselines"
	RunCmd    = "toolserver flow run .argent/flows -r --report toolserver-report"
)

// The CI systems a project's job may be written for.
const (
	GitHub = "github"
	GitLab = "gitlab"
)

// MaxGitignoreBytes caps the .gitignore init reads to append to.
const MaxGitignoreBytes = 1 << 20

// maxImageBytes caps an image reference; imageRef is the characters of
// one (registry, path, tag, digest), which keeps the value plain in YAML
// and in a shell line.
const maxImageBytes = 255

var imageRef = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._/:@-]*$`)

// Options are what a project is written with.
type Options struct {
	// CI is "", GitHub or GitLab.
	CI string
	// URL, when set, is what the example flow opens instead of a page of
	// its own; flow.CheckBaseURL has accepted it.
	URL string
	// Image is the toolserver image the CI job runs; CheckImage has
	// accepted it.
	Image string
}

// CheckImage refuses what is not an image reference.
func CheckImage(image string) error {
	if len(image) > maxImageBytes || !imageRef.MatchString(image) {
		return fmt.Errorf("%.80q is not an image reference (registry.example.com/toolserver:1.4)", image)
	}
	return nil
}

// CheckCI refuses a CI system init has no job for.
func CheckCI(ci string) error {
	switch ci {
	case "", GitHub, GitLab:
		return nil
	}
	return fmt.Errorf("%.40q: want github or gitlab", ci)
}

// File is one file of the project.
type File struct {
	Name string // relative to the project, slash-separated
	Data []byte
}

// Plan is the files of a project written with o, in the order init
// prints them.
func Plan(o Options) []File {
	var files []File
	read := func(name string) []byte {
		b, err := templates.ReadFile("templates/" + name)
		if err != nil {
			panic(err) // embedded: every name below is in the binary
		}
		return b
	}
	switch o.URL {
	case "":
		files = append(files,
			File{FlowFile, read("example.yaml")},
			File{PageFile, read("index.html")})
	default:
		files = append(files, File{FlowFile, urlFlow(read("example-url.yaml"), o.URL)})
	}
	files = append(files,
		File{flow.ConfigFile, read("toolserver.yaml")},
		File{Gitignore, read("gitignore")})
	image := []byte(o.Image)
	switch o.CI {
	case GitHub:
		files = append(files, File{GitHubFile, bytes.ReplaceAll(read("github.yml"), []byte("{{IMAGE}}"), image)})
	case GitLab:
		files = append(files, File{GitLabFile, bytes.ReplaceAll(read("gitlab.yml"), []byte("{{IMAGE}}"), image)})
	}
	return files
}

// urlFlow fills the URL template: the URL as a YAML scalar for launch:,
// and escaped for the comment (CheckBaseURL has refused a URL with a line
// break or a control character already).
func urlFlow(tmpl []byte, u string) []byte {
	v, err := yaml.Marshal(u)
	if err != nil {
		panic(err) // a string always marshals
	}
	out := bytes.ReplaceAll(tmpl, []byte("{{URL}}"), bytes.TrimRight(v, "\n"))
	return bytes.ReplaceAll(out, []byte("{{URL_COMMENT}}"), []byte(printable.String(u)))
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

// MissingIgnores are the patterns of want that the .gitignore old has in
// no spelling: "/toolserver-report/", "toolserver-report/",
// "/toolserver-report" and "toolserver-report" all keep the report out of
// the repository.
func MissingIgnores(old []byte, want []string) []string {
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
