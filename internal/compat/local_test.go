package compat

import (
	"testing"
)

// TestLocalRun runs the example's checkout flow on a local Chromium, the
// exchanges in order in one project: the baselines made, compared in
// text and JSON, a dry run of an update, the JUnit file, the Markdown
// summary and the HTML report's record of it, an approve with nothing
// to approve, and init's example flow run on the page init writes. The
// pages are the project's own files (launch: resolves a path beside the
// flow), so no server is needed.
func TestLocalRun(t *testing.T) {
	t.Parallel()
	dir := workDir(t, "local", "shop")
	steps := []struct {
		name string
		x    exchange
	}{
		{"update-baselines", exchange{args: []string{"flow", "run", "checkout", "--update-baselines"}, tree: true}},
		{"compare", exchange{args: []string{"flow", "run", "checkout"}}},
		{"compare-json", exchange{args: []string{"flow", "run", "checkout", "-o", "json"}}},
		{"update-dry-run", exchange{args: []string{"flow", "run", "checkout", "--update-baselines", "--dry-run"}}},
		{"outputs", exchange{args: []string{"flow", "run", ".argent/flows", "--junit", "out/junit.xml", "--summary", "out/summary.md", "--report", "out/report", "--artifacts", "out/artifacts"},
			show: []string{"out/junit.xml", "out/summary.md", "out/report/report.json"}}},
		{"approve-nothing", exchange{args: []string{"approve", "--report", "out/report", "--all", "--dry-run"}}},
		{"init", exchange{args: []string{"init", "new"}}},
		{"init-update-baselines", exchange{args: []string{"flow", "run", "new/.argent/flows", "-r", "--update-baselines=missing"}}},
	}
	for _, s := range steps {
		s.x.dir = dir
		cli(t, "local/"+s.name, s.x)
	}
}
