package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/toolserver/toolserver/flow"
	"github.com/toolserver/toolserver/internal/printable"
	"github.com/toolserver/toolserver/scaffold"
)

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
` + scaffold.FlowFile + ` against a page it also writes (` + scaffold.PageFile + `),
or with --url against that URL; ` + flow.ConfigFile + ` with the defaults
spelled out and commented; and the report directory the commands use,
toolserver-report/, in .gitignore. With --ci github it writes a GitHub
Actions workflow (` + scaffold.GitHubFile + `), with --ci gitlab a GitLab CI
job (` + scaffold.GitLabFile + `, or ` + scaffold.GitLabJob + ` when the project has a
` + scaffold.GitLabFile + ` already, with the include: line to add): each runs the
flows in the toolserver image (--image), keeps the report and the diffs
as artifacts even when a flow fails, and publishes the JUnit file.

init never overwrites a file: one that exists is left as it is, and said
so ("left ` + flow.ConfigFile + ` (exists)"). The one file it may change is
.gitignore, and only by appending the lines it lacks. --dry-run lists what
it would write and leave, and writes nothing.

Then, in DIR:
  ` + scaffold.UpdateCmd + `
  ` + scaffold.RunCmd,
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
	f.StringVar(&opts.image, "image", scaffold.DefaultImage, "the toolserver image the CI job runs (`REF`: registry/name:tag)")
	f.BoolVar(&opts.dryRun, "dry-run", false, "list what would be written and left; write nothing")
	_ = cmd.RegisterFlagCompletionFunc("ci", cobra.FixedCompletions([]string{"github", "gitlab"}, cobra.ShellCompDirectiveNoFileComp))
	return cmd
}

const exitStatusInit = `0  every file was written or left as it was (or, with --dry-run, would be)
2  a usage error (a bad --ci, --url or --image, a DIR that is a file) or a file that could not be written`

// runInit writes the project's files into the directory of args (.
// without one) and prints a line for each: wrote, left (exists), or with
// --dry-run what it would do.
func runInit(ctx context.Context, opts initOptions, args []string) error {
	dir := "."
	if len(args) == 1 {
		dir = args[0]
	}
	if err := scaffold.CheckImage(opts.image); err != nil {
		return usageError("init: --image %v", err)
	}
	if opts.url != "" {
		if err := flow.CheckBaseURL(opts.url); err != nil {
			return usageError("init: --url: %v", err)
		}
	}
	if err := scaffold.CheckCI(opts.ci); err != nil {
		return usageError("init: --ci %v", err)
	}
	files := scaffold.Plan(scaffold.Options{CI: opts.ci, URL: opts.url, Image: opts.image})
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
	relocated, err := scaffold.Write(ctx, dir, files, opts.dryRun, opts.stdout)
	var bad *scaffold.BadFileError
	switch {
	case err != nil && errors.Is(err, ctx.Err()):
		return err
	case errors.As(err, &bad):
		return badInput(fmt.Errorf("init: %w", err))
	case err != nil:
		return fmt.Errorf("init: %w", err)
	}
	if relocated {
		fmt.Fprintf(opts.stdout, "\n%s is left as it is; to run the job, add to it (the job's stage is test: change it if your stages: have none):\n  include:\n    - local: %s\n", scaffold.GitLabFile, scaffold.GitLabJob)
	}
	if opts.dryRun {
		return nil
	}
	fmt.Fprintln(opts.stdout, "\nNext, make the baselines, then compare with them:")
	if dir != "." {
		fmt.Fprintf(opts.stdout, "  cd %s\n", printable.String(shellQuote(dir)))
	}
	fmt.Fprintf(opts.stdout, "  %s\n  %s\n", scaffold.UpdateCmd, scaffold.RunCmd)
	return nil
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
