// Package docker holds the image's build files. These tests check them
// statically in a second; `make docker-smoke` builds and runs the image.
package docker

import (
	"bufio"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// instructions returns the Dockerfile's instructions with continuation
// lines joined and comments dropped.
func instructions(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile("Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	cur := ""
	for _, line := range strings.Split(string(b), "\n") {
		trim := strings.TrimSpace(line)
		if strings.HasPrefix(trim, "#") || (trim == "" && cur == "") {
			continue
		}
		cur += " " + strings.TrimSuffix(trim, "\\")
		if !strings.HasSuffix(trim, "\\") {
			out = append(out, strings.TrimSpace(cur))
			cur = ""
		}
	}
	return out
}

func TestDockerfile(t *testing.T) {
	ins := instructions(t)
	has := func(re string) bool {
		t.Helper()
		r := regexp.MustCompile(re)
		for _, in := range ins {
			if r.MatchString(in) {
				return true
			}
		}
		return false
	}
	for _, tc := range []struct{ what, re string }{
		{"pinned Go build image", `^ARG GO_IMAGE=golang:1\.26\.\d+-bookworm$`},
		{"pinned Debian base", `^ARG BASE_IMAGE=debian:bookworm-slim`},
		{"Chromium version build arg", `^ARG CHROMIUM_VERSION=`},
		{"multi-stage build", `^FROM \$\{GO_IMAGE\} AS build$`},
		{"static binary, version and commit stamped", `CGO_ENABLED=0 go build .*-X main\.version=\$\{VERSION\} -X main\.commit=\$\{COMMIT\}`},
		{"runtime from the pinned base", `^FROM \$\{BASE_IMAGE\}$`},
		{"runtime packages from the shared script", `install-runtime\.sh`},
		{"non-root user", `^USER toolserver$`},
		{"entrypoint", `^ENTRYPOINT \["toolserver"\]$`},
		{"default command", `^CMD \["serve", "--addr", "0\.0\.0\.0:3000"\]$`},
		{"port", `^EXPOSE 3000$`},
		{"healthcheck on /healthz", `^HEALTHCHECK .*toolserver", "healthcheck"`},
		{"workdir", `^WORKDIR /project$`},
		{"the upload dir of deploy/ owned by the user", `chown toolserver:toolserver .*/var/lib/toolserver-uploads`},
	} {
		if !has(tc.re) {
			t.Errorf("Dockerfile lacks %s (%s)", tc.what, tc.re)
		}
	}
	// A `# syntax=` directive makes BuildKit fetch a frontend image from
	// Docker Hub: the build must need nothing but its two base images.
	b, err := os.ReadFile("Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	if regexp.MustCompile(`(?m)^#\s*syntax\s*=`).Match(b) {
		t.Error("Dockerfile has a # syntax= directive: a build would fetch its frontend from a registry")
	}
	// The runtime stage carries no build tools.
	runtime := false
	for _, in := range ins {
		if strings.HasPrefix(in, "FROM ${BASE_IMAGE}") {
			runtime = true
		}
		if runtime && regexp.MustCompile(`apt-get install .*(golang|gcc|build-essential|make)\b`).MatchString(in) {
			t.Errorf("runtime stage installs build tools: %s", in)
		}
	}
}

func TestInstallScriptPackages(t *testing.T) {
	b, err := os.ReadFile("install-runtime.sh")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"chromium-headless-shell", "fonts-liberation", "fonts-dejavu-core", "fonts-noto-color-emoji"} {
		if !regexp.MustCompile(`packages=\([^)]*\b` + p + `\b`).Match(b) {
			t.Errorf("install-runtime.sh does not install %s", p)
		}
	}
}

func TestInstallScriptPinsFonts(t *testing.T) {
	b, err := os.ReadFile("install-runtime.sh")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"fonts-liberation", "fonts-dejavu-core", "fonts-noto-color-emoji"} {
		if !regexp.MustCompile(`\[` + p + `\]=\S+`).Match(b) {
			t.Errorf("install-runtime.sh does not pin the version of %s", p)
		}
	}
}

// ignoreRule is one line of .dockerignore.
type ignoreRule struct {
	pattern []string // split on "/"
	negate  bool
}

func readDockerignore(t *testing.T) []ignoreRule {
	t.Helper()
	f, err := os.Open("../.dockerignore")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var rules []ignoreRule
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		r := ignoreRule{}
		if strings.HasPrefix(line, "!") {
			r.negate = true
			line = line[1:]
		}
		r.pattern = strings.Split(path.Clean(strings.TrimPrefix(line, "/")), "/")
		rules = append(rules, r)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return rules
}

// matchSegments matches path segments against pattern segments, where
// "**" stands for any number of segments, as the builder does.
func matchSegments(pat, segs []string) bool {
	if len(pat) == 0 {
		return len(segs) == 0
	}
	if pat[0] == "**" {
		for i := 0; i <= len(segs); i++ {
			if matchSegments(pat[1:], segs[i:]) {
				return true
			}
		}
		return false
	}
	if len(segs) == 0 {
		return false
	}
	ok, err := path.Match(pat[0], segs[0])
	return err == nil && ok && matchSegments(pat[1:], segs[1:])
}

// inContext reports whether the build context keeps the slash-separated
// path p: the last rule that matches p or one of its parent directories
// decides.
func inContext(rules []ignoreRule, p string) bool {
	segs := strings.Split(p, "/")
	in := true
	for _, r := range rules {
		for n := 1; n <= len(segs); n++ {
			if matchSegments(r.pattern, segs[:n]) {
				in = r.negate
				break
			}
		}
	}
	return in
}

func TestDockerignore(t *testing.T) {
	rules := readDockerignore(t)
	// What the build needs: go.mod and go.sum, every file docker/Dockerfile
	// copies from the context, every non-test Go file of the module and
	// every file such a file embeds.
	need := []string{"go.mod", "go.sum"}
	for _, in := range instructions(t) {
		f := strings.Fields(in)
		if len(f) >= 3 && f[0] == "COPY" && !strings.HasPrefix(f[1], "--from") && f[1] != "." {
			need = append(need, f[1:len(f)-1]...)
		}
	}
	embed := regexp.MustCompile(`(?m)^//go:embed (.+)$`)
	err := filepath.WalkDir("..", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel := filepath.ToSlash(strings.TrimPrefix(p, ".."+string(filepath.Separator)))
		if d.IsDir() {
			switch d.Name() {
			case ".git", ".cache", "bin", "testdata", "docker", "bench":
				// bench holds measuring programs (the soak), not the binary.
				return fs.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(rel, ".go") || strings.HasSuffix(rel, "_test.go") {
			return nil
		}
		need = append(need, rel)
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		for _, m := range embed.FindAllSubmatch(b, -1) {
			for _, name := range strings.Fields(string(m[1])) {
				need = append(need, path.Join(path.Dir(rel), name))
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range need {
		if !inContext(rules, p) {
			t.Errorf(".dockerignore leaves out %s, which the build needs", p)
		}
	}
	// What it must not send (the context was 92 MB with these).
	for _, p := range []string{".git/objects/pack/x.pack", ".git", "bin/toolserver", ".cache/go-build/x",
		"toolserver", "flow-artifacts/x.png", "flow/testdata/x.yaml", "docker/smoke.sh", "scripts/fuzz.sh"} {
		if inContext(rules, p) {
			t.Errorf(".dockerignore sends %s into the build context", p)
		}
	}
}
