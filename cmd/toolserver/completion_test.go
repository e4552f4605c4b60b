package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// completions runs cobra's hidden __complete command, as a shell script
// does, and returns the choices without their descriptions and the
// directive line.
func completions(t *testing.T, args ...string) (choices []string, directive string) {
	t.Helper()
	code, stdout, stderr := runCLI(t, append([]string{"__complete"}, args...)...)
	if code != exitOK {
		t.Fatalf("__complete %q: got exit %d, want 0 (stderr %q)", args, code, stderr)
	}
	lines := strings.Split(strings.TrimSuffix(stdout, "\n"), "\n")
	for _, l := range lines[:len(lines)-1] {
		name, _, _ := strings.Cut(l, "\t")
		choices = append(choices, name)
	}
	return choices, lines[len(lines)-1]
}

// TestCompleteDynamic: flow names come from the project (--project
// honoured, fragments left out), device ids from the common sizes, tool
// names from the in-process catalog, formats from -o's two values.
func TestCompleteDynamic(t *testing.T) {
	t.Parallel()
	root := flowProject(t)
	cases := []struct {
		name string
		args []string
		want []string
		// directive is cobra's :<n> line: 4 no file completion, 0 the
		// shell's default (files), 8 files with an extension.
		directive string
	}{
		{"flow names", []string{"flow", "run", "--project", root, ""}, []string{"broken", "good"}, ":4"},
		{"flow names with a prefix", []string{"flow", "run", "--project", root, "go"}, []string{"good"}, ":4"},
		{"a path falls back to files", []string{"flow", "run", "--project", root, "./"}, nil, ":0"},
		{"no project falls back to files", []string{"flow", "run", "--project", t.TempDir(), ""}, nil, ":0"},
		{"device", []string{"flow", "run", "good", "--device", ""}, []string{"chromium-cdp-1280x800", "chromium-cdp-1920x1080", "chromium-cdp-390x844"}, ":4"},
		{"output format", []string{"flow", "list", "-o", ""}, []string{"json", "yaml"}, ":4"},
		{"call", []string{"call", ""}, []string{"flow-execute", "gesture-tap", "screenshot", "screenshot-diff"}, ":4"},
		{"tools describe", []string{"tools", "describe", "scr"}, []string{"screenshot", "screenshot-diff"}, ":4"},
		{"completion", []string{"completion", ""}, []string{"bash", "zsh", "fish", "powershell"}, ":4"},
		{"commands", []string{"fl"}, []string{"flow"}, ":4"},
		{"snapshot diff files", []string{"snapshot", "diff", ""}, []string{"png"}, ":8"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, directive := completions(t, c.args...)
			if directive != c.directive {
				t.Errorf("got directive %s, want %s", directive, c.directive)
			}
			for _, w := range c.want {
				if !slices.Contains(got, w) {
					t.Errorf("got %q, want it to contain %q", got, w)
				}
			}
			if c.name == "flow names" && len(got) != 2 {
				t.Errorf("got %q, want exactly the flows broken and good (press is a fragment, sub/bad is in a subdirectory)", got)
			}
			if c.name == "tools describe" && len(got) != 2 {
				t.Errorf("got %q, want only the tools that start with scr", got)
			}
		})
	}
}

// bashShim stands in for _get_comp_words_by_ref of the bash-completion
// package, which the script calls, when the package is not installed,
// and for compopt, which works only while bash itself runs a completion.
const bashShim = `
compopt() { :; }
if [[ -r /usr/share/bash-completion/bash_completion ]]; then
  source /usr/share/bash-completion/bash_completion
fi
if ! declare -F _get_comp_words_by_ref >/dev/null; then
  _get_comp_words_by_ref() {
    cur=${COMP_WORDS[COMP_CWORD]}
    prev=${COMP_WORDS[COMP_CWORD-1]}
    words=("${COMP_WORDS[@]}")
    cword=$COMP_CWORD
  }
fi
`

// TestCompletionBash loads the script of `toolserver completion bash` in
// bash, with the CLI on PATH, and completes `toolserver flow run
// <TAB>` the way bash does on a TAB: the flow names of the project.
func TestCompletionBash(t *testing.T) {
	t.Parallel()
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Fatalf("bash: %v", err)
	}
	// The test binary is the CLI when started as toolserver (TestMain).
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	bin := t.TempDir()
	if err := os.Symlink(self, filepath.Join(bin, "toolserver")); err != nil {
		t.Fatal(err)
	}
	root := flowProject(t)
	for _, c := range []struct {
		name  string
		dir   string
		words []string
	}{
		{"in the project", root, []string{"toolserver", "flow", "run", ""}},
		{"with --project", t.TempDir(), []string{"toolserver", "flow", "run", "--project", root, ""}},
		{"with a prefix", root, []string{"toolserver", "flow", "run", "go"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			quoted := make([]string, len(c.words))
			for i, w := range c.words {
				quoted[i] = "'" + w + "'"
			}
			script := bashShim + `
source <(toolserver completion bash)
COMP_WORDS=(` + strings.Join(quoted, " ") + `)
COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
COMP_LINE="${COMP_WORDS[*]}"
COMP_POINT=${#COMP_LINE}
__start_toolserver
printf '%s\n' "${COMPREPLY[@]}"
`
			cmd := exec.Command(bash, "--norc", "--noprofile", "-c", script)
			cmd.Dir = c.dir
			cmd.Env = append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"))
			var stderr strings.Builder
			cmd.Stderr = &stderr
			out, err := cmd.Output()
			if err != nil || stderr.Len() > 0 {
				t.Fatalf("bash: %v\n%s", err, stderr.String())
			}
			got := strings.Fields(string(out))
			want := []string{"broken", "good"}
			if c.name == "with a prefix" {
				want = []string{"good"}
			}
			if !slices.Equal(got, want) {
				t.Errorf("got %q, want %q", got, want)
			}
		})
	}
}

// TestCompletionSaysBashNeedsBashCompletion: bash's script calls
// _get_comp_words_by_ref of the bash-completion package, so completion
// --help, the README and make demo's closing hint say to install it.
func TestCompletionSaysBashNeedsBashCompletion(t *testing.T) {
	t.Parallel()
	code, out, errOut := runCLI(t, "completion", "--help")
	if code != 0 || !strings.Contains(out, "bash-completion package (apt-get install\n              bash-completion)") || !strings.Contains(out, "_get_comp_words_by_ref: command not found") {
		t.Errorf("completion --help: exit %d\n%s%s\nwant the bash-completion package named", code, out, errOut)
	}
	for _, f := range []string{"../../README.md", "../../examples/demo.sh"} {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(b), "completion bash") || !strings.Contains(string(b), "apt-get install bash-completion") {
			t.Errorf("%s does not say that bash completion needs the bash-completion package", f)
		}
	}
}
