package main

import (
	"encoding/json"
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"go.yaml.in/yaml/v3"
)

// commandPaths lists the argument lists that name each command of the
// tree, the root's as an empty list.
func commandPaths(t *testing.T) [][]string {
	t.Helper()
	var out [][]string
	var walk func(c *cobra.Command, path []string)
	walk = func(c *cobra.Command, path []string) {
		out = append(out, path)
		for _, sub := range c.Commands() {
			if sub.IsAvailableCommand() {
				walk(sub, append(slices.Clone(path), sub.Name()))
			}
		}
	}
	walk(newRootCommand(streams{stdout: io.Discard, stderr: io.Discard, getenv: env(nil).get}), nil)
	if len(out) < 12 {
		t.Fatalf("got %d commands, want the whole tree: %v", len(out), out)
	}
	return out
}

// TestHelpEverywhere: --help and -h exit 0 at every level, print the help
// on stdout, and the help ends with the command's EXIT STATUS section.
func TestHelpEverywhere(t *testing.T) {
	t.Parallel()
	for _, path := range commandPaths(t) {
		for _, flag := range []string{"--help", "-h"} {
			args := append(slices.Clone(path), flag)
			t.Run(strings.Join(args, " "), func(t *testing.T) {
				code, stdout, stderr := runCLI(t, args...)
				if code != exitOK {
					t.Fatalf("got exit %d, want 0 (stderr %q)", code, stderr)
				}
				usage := strings.Index(stdout, "Usage:")
				exit := strings.LastIndex(stdout, "\nEXIT STATUS:\n  0  ")
				if usage < 0 || exit < usage {
					t.Fatalf("got help\n%s\nwant Usage: and then an EXIT STATUS section", stdout)
				}
				if rest := stdout[exit+1:]; strings.Contains(rest, "\n\n") {
					t.Errorf("got %q after EXIT STATUS, want it to be the last section", rest)
				}
			})
		}
	}
	// The help command and help on a group give the same help.
	code, stdout, _ := runCLI(t, "help", "flow", "run")
	_, want, _ := runCLI(t, "flow", "run", "--help")
	if code != exitOK || stdout != want {
		t.Errorf("help flow run: got exit %d and\n%s\nwant 0 and the help of flow run --help", code, stdout)
	}
}

// TestUsageErrors: a bad command line exits 2 with a message naming the
// problem and where the help is, and prints nothing on stdout.
func TestUsageErrors(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	cases := []struct {
		args  []string
		wants []string
	}{
		{nil, []string{"missing command", "Available Commands:"}},
		{[]string{"frobnicate"}, []string{`unknown command "frobnicate" for "toolserver"`}},
		{[]string{"flow"}, []string{"missing command", "Available Commands:"}},
		{[]string{"flow", "rum", "x"}, []string{`unknown command "rum" for "toolserver flow"`, "did you mean run?", "Run 'toolserver flow --help' for usage."}},
		{[]string{"snapshot", "compare"}, []string{"toolserver snapshot diff"}},
		{[]string{"flow", "run"}, []string{"flow run: want one flow name", "Run 'toolserver flow run --help' for usage."}},
		{[]string{"flow", "run", "good", "--frob"}, []string{"unknown flag: --frob", "Run 'toolserver flow run --help' for usage."}},
		{[]string{"flow", "run", "good", "-o", ""}, []string{"want json, yaml or (deprecated) a directory"}},
		{[]string{"flow", "list", "--project", root, "-o", "xml"}, []string{`invalid argument "xml" for "-o, --output" flag: want json or yaml, got "xml"`}},
		{[]string{"flow", "list", "--project", root, "--json", "-o", "yaml"}, []string{"--json and -o yaml ask for two formats"}},
		{[]string{"flow", "list", "extra"}, []string{`flow list takes no arguments, got ["extra"]`}},
		{[]string{"tools", "describe"}, []string{"tools describe: want a tool name, got 0 arguments"}},
		{[]string{"tools", "describe", "a", "b"}, []string{"tools describe: want a tool name, got 2 arguments"}},
		{[]string{"call"}, []string{"call: want a tool name"}},
		{[]string{"serve", "--addr"}, []string{"flag needs an argument: --addr"}},
		{[]string{"completion", "tcsh"}, []string{`unknown shell "tcsh"`}},
		{[]string{"snapshot", "diff", "a.png", "--threshold", "x"}, []string{`invalid argument "x" for "--threshold"`}},
	}
	for _, c := range cases {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			code, stdout, stderr := runCLI(t, c.args...)
			if code != exitUsage {
				t.Fatalf("got exit %d, want 2 (stderr %q)", code, stderr)
			}
			if stdout != "" {
				t.Errorf("got stdout %q, want none", stdout)
			}
			for _, w := range c.wants {
				if !strings.Contains(stderr, w) {
					t.Errorf("got stderr\n%s\nwant it to contain %q", stderr, w)
				}
			}
		})
	}
}

// TestOutputFormats: -o json and --json print the same JSON, -o yaml the
// same data as YAML, with the JSON's field names.
func TestOutputFormats(t *testing.T) {
	t.Parallel()
	root := flowProject(t)
	small := []string{vector("390x844/small-a.png"), vector("390x844/small-b.png")}
	for _, c := range []struct {
		name string
		args []string
		code int
	}{
		{"tools", []string{"tools"}, exitOK},
		{"tools describe", []string{"tools", "describe", "flow-execute"}, exitOK},
		{"flow list", []string{"flow", "list", "--project", root}, exitOK},
		{"snapshot diff", append([]string{"snapshot", "diff"}, small...), exitFailed},
		{"call", []string{"call", "no-such-tool"}, exitFailed},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, asJSON, stderr := runCLI(t, append(slices.Clone(c.args), "-o", "json")...)
			if code != c.code {
				t.Fatalf("-o json: got exit %d, want %d (stderr %q)", code, c.code, stderr)
			}
			_, synonym, _ := runCLI(t, append(slices.Clone(c.args), "--json")...)
			var fromJSON, fromSynonym, fromYAML any
			if err := json.Unmarshal([]byte(asJSON), &fromJSON); err != nil {
				t.Fatalf("-o json: %v in\n%s", err, asJSON)
			}
			if err := json.Unmarshal([]byte(synonym), &fromSynonym); err != nil {
				t.Fatalf("--json: %v in\n%s", err, synonym)
			}
			code, asYAML, stderr := runCLI(t, append(slices.Clone(c.args), "-o", "yaml")...)
			if code != c.code {
				t.Fatalf("-o yaml: got exit %d, want %d (stderr %q)", code, c.code, stderr)
			}
			if strings.HasPrefix(strings.TrimSpace(asYAML), "{") || strings.HasPrefix(strings.TrimSpace(asYAML), "[") {
				t.Errorf("-o yaml: got\n%s\nwant block-style YAML, not JSON", asYAML)
			}
			if err := yaml.Unmarshal([]byte(asYAML), &fromYAML); err != nil {
				t.Fatalf("-o yaml: %v in\n%s", err, asYAML)
			}
			// durationMs is measured each run.
			for _, v := range []any{fromJSON, fromSynonym, fromYAML} {
				if m, ok := v.(map[string]any); ok {
					delete(m, "durationMs")
				}
			}
			j, _ := json.Marshal(fromJSON)
			s, _ := json.Marshal(fromSynonym)
			y, _ := json.Marshal(fromYAML)
			if string(s) != string(j) {
				t.Errorf("--json: got %s, want the -o json data %s", s, j)
			}
			if string(y) != string(j) {
				t.Errorf("-o yaml: got %s, want the -o json data %s", y, j)
			}
		})
	}
	// The YAML of tools names each tool under tools:, as GET /tools does.
	_, out, _ := runCLI(t, "tools", "-o", "yaml")
	if !strings.HasPrefix(out, "tools:\n  - name: ") || !strings.Contains(out, "name: flow-execute\n") {
		t.Errorf("tools -o yaml: got\n%s\nwant tools: and a list of entries", out)
	}
}
