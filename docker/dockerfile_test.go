// Package docker holds the image's build files; this test checks the
// Dockerfile statically, since CI has no Docker engine to build it.
package docker

import (
	"os"
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
	} {
		if !has(tc.re) {
			t.Errorf("Dockerfile lacks %s (%s)", tc.what, tc.re)
		}
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
	for _, p := range []string{"chromium", "fonts-liberation", "fonts-dejavu-core", "fonts-noto-color-emoji"} {
		if !regexp.MustCompile(`packages=\([^)]*\b` + p + `\b`).Match(b) {
			t.Errorf("install-runtime.sh does not install %s", p)
		}
	}
}
