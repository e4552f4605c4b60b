package report

import (
	"context"
	"os/exec"
	"strings"
	"time"
)

// GitOf describes the git checkout dir is in: its commit, branch (none
// when detached) and whether the tree has changes; nil when dir is in no
// checkout or git is not installed.
func GitOf(ctx context.Context, dir string) *Git {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	run := func(args ...string) (string, bool) {
		out, err := exec.CommandContext(ctx, "git", append([]string{"-C", dir}, args...)...).Output()
		return strings.TrimSpace(string(out)), err == nil
	}
	commit, ok := run("rev-parse", "HEAD")
	if !ok || commit == "" {
		return nil
	}
	g := &Git{Commit: commit}
	if b, ok := run("rev-parse", "--abbrev-ref", "HEAD"); ok && b != "HEAD" {
		g.Branch = b
	}
	if st, ok := run("status", "--porcelain", "--untracked-files=no"); ok && st != "" {
		g.Dirty = true
	}
	return g
}
