package compat

import (
	"os"
	"path/filepath"
	"testing"
)

// unknownRun is a run id no store holds.
const unknownRun = fixedIDPrefix + "00000000dead"

// TestCLI holds the commands that need no browser and no server: help,
// version, the usage errors, the flow language's answers, init, the run
// store's answers on a directory with none, the storybook index's.
func TestCLI(t *testing.T) {
	type cliCase struct {
		name    string
		args    []string
		project string // copied into the working directory
		env     []string
		show    []string
		tree    bool
		// ownHome gives the run a HOME of its own: serve and mcp open
		// the default state directory under it, which the other cases
		// read.
		ownHome bool
		// setup prepares the working directory beyond the project.
		setup func(t *testing.T, dir string)
	}
	help := func(name string, args ...string) cliCase {
		return cliCase{name: "help/" + name, args: append(args, "--help")}
	}
	storybookDir := func(index string) func(*testing.T, string) {
		return func(t *testing.T, dir string) {
			write(t, filepath.Join(dir, "sb", "index.json"), index)
			write(t, filepath.Join(dir, "sb", "iframe.html"), "<!doctype html><p>not a preview</p>\n")
		}
	}
	const stories = `{"v":5,"entries":{
"button--primary":{"type":"story","id":"button--primary","name":"Primary","title":"Button","importPath":"./button.stories.js","tags":["dev","test"]},
"button--docs":{"type":"docs","id":"button--docs","name":"Docs","title":"Button","importPath":"./button.mdx","tags":["dev"]},
"button--wip":{"type":"story","id":"button--wip","name":"Wip","title":"Button","importPath":"./button.stories.js","tags":["!test"]}}}`
	cases := []cliCase{
		{name: "help/root", args: []string{"--help"}},
		{name: "help/none", args: nil},
		help("flow", "flow"),
		help("flow-run", "flow", "run"),
		help("flow-list", "flow", "list"),
		help("flow-schema", "flow", "schema"),
		help("runs", "runs"),
		help("runs-list", "runs", "list"),
		help("runs-get", "runs", "get"),
		help("runs-events", "runs", "events"),
		help("runs-replay", "runs", "replay"),
		help("runs-resume", "runs", "resume"),
		help("runs-abandon", "runs", "abandon"),
		help("serve", "serve"),
		help("mcp", "mcp"),
		help("storybook", "storybook"),
		help("init", "init"),
		help("baselines", "baselines"),
		help("baselines-list", "baselines", "list"),
		help("baselines-prune", "baselines", "prune"),
		help("approve", "approve"),
		help("call", "call"),
		help("tools", "tools"),
		help("tools-describe", "tools", "describe"),
		help("report", "report"),
		help("report-serve", "report", "serve"),
		help("report-merge", "report", "merge"),
		help("snapshot-diff", "snapshot", "diff"),
		help("healthcheck", "healthcheck"),
		help("version", "version"),
		help("completion", "completion"),
		{name: "help/flow-bare", args: []string{"flow"}},
		{name: "help/runs-bare", args: []string{"runs"}},

		{name: "version/text", args: []string{"version"}},
		{name: "version/json", args: []string{"version", "-o", "json"}},
		{name: "version/flag", args: []string{"--version"}},
		{name: "completion/bash", args: []string{"completion", "bash"}},

		{name: "usage/unknown-flag", args: []string{"--bogus"}},
		{name: "usage/unknown-command", args: []string{"nope"}},
		{name: "usage/flow-run-unknown-flag", args: []string{"flow", "run", "checkout", "--bogus"}, project: "shop"},
		{name: "usage/flow-run-no-arg", args: []string{"flow", "run"}, project: "shop"},
		{name: "usage/bad-device", args: []string{"flow", "run", "checkout", "--device", "bad"}, project: "shop"},
		{name: "usage/bad-device-size", args: []string{"flow", "run", "checkout", "--device", "chromium-cdp-1x1"}, project: "shop"},
		{name: "usage/shard-out-of-range", args: []string{"flow", "run", ".argent/flows", "--shard", "3/2"}, project: "shop"},
		{name: "usage/shard-not-a-shard", args: []string{"flow", "run", ".argent/flows", "--shard", "x"}, project: "shop"},
		{name: "usage/shard-zero", args: []string{"flow", "run", ".argent/flows", "--shard", "0/0"}, project: "shop"},
		{name: "usage/expose-without-link", args: []string{"flow", "run", "checkout", "--expose", "localhost:5173"}, project: "shop"},
		{name: "usage/update-baselines-bad-mode", args: []string{"flow", "run", "checkout", "--update-baselines=sometimes"}, project: "shop"},
		{name: "usage/bad-output", args: []string{"flow", "list", "-o", "xml"}, project: "shop"},
		{name: "usage/bad-threshold", args: []string{"flow", "run", "checkout", "--threshold", "2"}, project: "shop"},
		{name: "usage/workers-zero", args: []string{"flow", "run", "checkout", "--workers", "0"}, project: "shop"},
		{name: "usage/label-without-detach", args: []string{"flow", "run", "checkout", "--label", "a:b"}, project: "shop"},
		{name: "usage/detach-without-link", args: []string{"flow", "run", "checkout", "--detach"}, project: "shop"},
		{name: "usage/link-refused", args: []string{"flow", "run", "checkout", "--link", "http://127.0.0.1:1"}, project: "shop"},
		{name: "usage/store-unparsable", args: []string{"runs", "list", "--store", "bogus://x"}},
		{name: "usage/store-unreachable", args: []string{"runs", "list", "--store", "postgres://u:secret@127.0.0.1:1/db"}},
		{name: "usage/store-and-state-dir", args: []string{"runs", "list", "--store", "postgres://u:secret@127.0.0.1:1/db", "--state-dir", "x"}},
		{name: "usage/serve-wildcard-without-token", args: []string{"serve", "--addr", "0.0.0.0:0"}, ownHome: true},
		{name: "usage/serve-bad-token-name", args: []string{"serve", "--addr", "127.0.0.1:0", "--auth-token", "1BAD"}, ownHome: true},
		{name: "usage/serve-token-unset", args: []string{"serve", "--addr", "127.0.0.1:0", "--auth-token", "COMPAT_UNSET_TOKEN"}, ownHome: true},
		{name: "usage/serve-bad-store", args: []string{"serve", "--addr", "127.0.0.1:0", "--store", "bogus://x"}, ownHome: true},
		{name: "usage/serve-bad-addr", args: []string{"serve", "--addr", "nope"}, ownHome: true},
		{name: "usage/serve-extra-arg", args: []string{"serve", "extra"}, ownHome: true},
		{name: "usage/mcp-bad-store", args: []string{"mcp", "--store", "bogus://x"}, ownHome: true},
		{name: "usage/approve-no-report", args: []string{"approve", "--all"}},
		{name: "usage/approve-missing-report", args: []string{"approve", "--report", "nowhere", "--all"}},
		{name: "usage/report-merge-nothing", args: []string{"report", "merge"}},
		{name: "usage/snapshot-diff-missing", args: []string{"snapshot", "diff", "a.png", "b.png"}},
		{name: "usage/healthcheck-refused", args: []string{"healthcheck", "--addr", "127.0.0.1:1"}},

		{name: "flow/list-text", args: []string{"flow", "list"}, project: "invalid"},
		{name: "flow/list-json", args: []string{"flow", "list", "--json"}, project: "invalid"},
		{name: "flow/list-yaml", args: []string{"flow", "list", "-o", "yaml"}, project: "invalid"},
		{name: "flow/list-shop", args: []string{"flow", "list", "--project", "shop"}, setup: func(t *testing.T, dir string) { copyProject(t, "shop", filepath.Join(dir, "shop")) }},
		{name: "flow/list-empty", args: []string{"flow", "list"}},
		{name: "flow/schema", args: []string{"flow", "schema"}},
		{name: "flow/schema-config", args: []string{"flow", "schema", "--config"}},
		{name: "flow/run-unknown", args: []string{"flow", "run", "nope"}, project: "shop"},
		{name: "flow/run-parse-error", args: []string{"flow", "run", "broken"}, project: "invalid"},
		{name: "flow/run-parse-error-json", args: []string{"flow", "run", "broken", "-o", "json"}, project: "invalid"},
		{name: "flow/run-yaml-error", args: []string{"flow", "run", "badyaml"}, project: "invalid"},
		{name: "flow/run-file", args: []string{"flow", "run", ".argent/flows/broken.yaml"}, project: "invalid"},
		{name: "flow/run-dir", args: []string{"flow", "run", ".argent/flows"}, project: "invalid"},
		{name: "flow/run-dir-json", args: []string{"flow", "run", ".argent/flows", "--json"}, project: "invalid"},
		{name: "flow/run-dir-junit", args: []string{"flow", "run", ".argent/flows", "--junit", "junit.xml", "--summary", "summary.md"}, project: "invalid", show: []string{"junit.xml", "summary.md"}},
		{name: "flow/run-bad-config", args: []string{"flow", "run", "one"}, project: "badconfig"},
		{name: "flow/list-bad-config", args: []string{"flow", "list"}, project: "badconfig"},

		{name: "call/unknown-tool", args: []string{"call", "nope"}},
		{name: "call/bad-args-json", args: []string{"call", "list-devices", "--args", "{"}},
		{name: "call/flow-execute-no-args", args: []string{"call", "flow-execute", "--args", "{}"}},
		{name: "call/flow-execute-bad-types", args: []string{"call", "flow-execute", "--args", `{"project_root":5,"name":true}`}},
		{name: "call/flow-execute-unknown-arg", args: []string{"call", "flow-execute", "--args", `{"project_root":"/x","bogus":1}`}},
		{name: "call/flow-execute-relative-root", args: []string{"call", "flow-execute", "--args", `{"project_root":"relative","name":"x"}`}},
		{name: "call/dry-run-parse-error", args: []string{"call", "flow-execute", "--dry-run", "--args", `{"project_root":"` + filepath.Join(tmp, "work", "call", "dry-run-parse-error") + `","name":"broken"}`}, project: "invalid"},
		{name: "call/dry-run-valid", args: []string{"call", "flow-execute", "--dry-run", "--args", `{"project_root":"` + filepath.Join(tmp, "work", "call", "dry-run-valid") + `","name":"checkout"}`}, project: "shop"},
		{name: "call/dry-run-yaml", args: []string{"call", "flow-execute", "--dry-run", "-o", "yaml", "--args", `{"project_root":"` + filepath.Join(tmp, "work", "call", "dry-run-yaml") + `","name":"nope"}`}, project: "shop"},
		{name: "call/screenshot-bad-device", args: []string{"call", "screenshot", "--args", `{"device":"bad"}`}},
		{name: "call/list-devices", args: []string{"call", "list-devices"}},
		{name: "tools/text", args: []string{"tools"}},
		{name: "tools/json", args: []string{"tools", "--json"}},
		{name: "tools/describe", args: []string{"tools", "describe", "flow-execute"}},
		{name: "tools/describe-unknown", args: []string{"tools", "describe", "nope"}},

		{name: "runs/list-no-store", args: []string{"runs", "list", "--state-dir", "empty"}, setup: mkdir("empty")},
		{name: "runs/list-no-store-json", args: []string{"runs", "list", "--state-dir", "empty", "--json"}, setup: mkdir("empty")},
		{name: "runs/list-default-dir", args: []string{"runs", "list"}},
		{name: "runs/get-unknown", args: []string{"runs", "get", unknownRun, "--state-dir", "empty"}, setup: mkdir("empty")},
		{name: "runs/get-not-a-uuid", args: []string{"runs", "get", "nope", "--state-dir", "empty"}, setup: mkdir("empty")},
		{name: "runs/get-no-id", args: []string{"runs", "get"}},
		{name: "runs/resume-dry-run-unknown", args: []string{"runs", "resume", unknownRun, "--dry-run"}},
		{name: "runs/abandon-dry-run-unknown", args: []string{"runs", "abandon", unknownRun, "--dry-run", "--state-dir", "empty"}, setup: mkdir("empty")},
		{name: "runs/list-bad-status", args: []string{"runs", "list", "--status", "bogus", "--state-dir", "empty"}, setup: mkdir("empty")},
		{name: "runs/list-bad-label", args: []string{"runs", "list", "--label", "bad", "--state-dir", "empty"}, setup: mkdir("empty")},
		{name: "runs/get-link-refused", args: []string{"runs", "get", unknownRun, "--link", "http://127.0.0.1:1"}},

		{name: "init/dry-run", args: []string{"init", "--dry-run", "new"}, tree: true},
		{name: "init/write", args: []string{"init", "new"}, tree: true, show: []string{"new/.argent/flows/example.yaml", "new/site/index.html", "new/.argent/toolserver.yaml", "new/.gitignore"}},
		{name: "init/ci-github", args: []string{"init", "--ci", "github", "--image", "registry.example.com/toolserver:1.4", "new"}, tree: true, show: []string{"new/.github/workflows/toolserver.yml"}},
		{name: "init/ci-gitlab-url", args: []string{"init", "--ci", "gitlab", "--url", "http://localhost:5173", "new"}, tree: true, show: []string{"new/.gitlab-ci.yml", "new/.argent/flows/example.yaml"}},
		{name: "init/over-existing", args: []string{"init", "."}, project: "shop", tree: true, show: []string{".gitignore"}},
		{name: "init/bad-ci", args: []string{"init", "--ci", "jenkins", "new"}},
		{name: "init/bad-url", args: []string{"init", "--url", "ftp://example.com", "new"}},
		{name: "init/dir-is-a-file", args: []string{"init", "file"}, setup: func(t *testing.T, dir string) { write(t, filepath.Join(dir, "file"), "x\n") }},

		{name: "baselines/list-none", args: []string{"baselines", "list"}, project: "shop"},
		{name: "baselines/list-none-json", args: []string{"baselines", "list", "--json"}, project: "shop"},
		{name: "baselines/prune-none", args: []string{"baselines", "prune", "--dry-run"}, project: "shop"},
		{name: "baselines/list", args: []string{"baselines", "list"}, project: "baselines"},
		{name: "baselines/list-json", args: []string{"baselines", "list", "--json"}, project: "baselines"},
		{name: "baselines/prune-dry-run", args: []string{"baselines", "prune", "--dry-run"}, project: "baselines", tree: true},
		{name: "baselines/prune", args: []string{"baselines", "prune"}, project: "baselines", tree: true},
		{name: "baselines/list-no-flows", args: []string{"baselines", "list"}},

		{name: "storybook/missing", args: []string{"storybook", "missing"}},
		{name: "storybook/no-index", args: []string{"storybook", "sb"}, setup: mkdir("sb")},
		{name: "storybook/index-v4", args: []string{"storybook", "sb"}, setup: storybookDir(`{"v":4,"entries":{}}`)},
		{name: "storybook/index-not-json", args: []string{"storybook", "sb"}, setup: storybookDir("nojson")},
		{name: "storybook/none-included", args: []string{"storybook", "sb", "--include", "nomatch*"}, setup: storybookDir(stories)},
		{name: "storybook/all-excluded", args: []string{"storybook", "sb", "--exclude", "button--*"}, setup: storybookDir(stories)},
		{name: "storybook/no-tag", args: []string{"storybook", "sb", "--tag", "nope"}, setup: storybookDir(stories)},
		{name: "storybook/bad-shard", args: []string{"storybook", "sb", "--shard", "5/4"}, setup: storybookDir(stories)},
		{name: "storybook/url-refused", args: []string{"storybook", "http://127.0.0.1:1"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			dir := workDir(t, c.name, c.project)
			if c.setup != nil {
				c.setup(t, dir)
			}
			env := c.env
			if c.ownHome {
				env = append(env, "HOME="+filepath.Join(dir, "home"))
			}
			cli(t, "cli/"+c.name, exchange{args: c.args, dir: dir, env: env, show: c.show, tree: c.tree})
		})
	}
}

// mkdir makes the directory name in the working directory.
func mkdir(name string) func(*testing.T, string) {
	return func(t *testing.T, dir string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Join(dir, name), 0o755); err != nil {
			t.Fatal(err)
		}
	}
}

// write writes a file, making its directory.
func write(t *testing.T, path, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

// copyProject copies testdata/<project> to dir.
func copyProject(t *testing.T, project, dir string) {
	t.Helper()
	if err := os.CopyFS(dir, os.DirFS(filepath.Join("testdata", project))); err != nil {
		t.Fatal(err)
	}
}
