package main

import (
	"context"
	"slices"
	"strings"

	"github.com/spf13/cobra"
)

// shells are the shells completion writes a script for.
var shells = []string{"bash", "zsh", "fish", "powershell"}

// completionOptions are the flags of completion.
type completionOptions struct {
	streams
	noDescriptions bool
	// root is the command tree the script completes.
	root *cobra.Command
}

func newCompletionCommand(s streams, root *cobra.Command) *cobra.Command {
	opts := completionOptions{streams: s, root: root}
	cmd := &cobra.Command{
		Use:   "completion bash|zsh|fish|powershell",
		Short: "Print a shell completion script",
		Long: `Print the completion script of a shell. It completes commands and flags,
flow names (from <project>/.argent/flows, --project honoured), device ids
(--device) and tool names (call, tools describe).

  bash:       source <(toolserver completion bash)
              or: toolserver completion bash > /etc/bash_completion.d/toolserver
              The script needs the bash-completion package (apt-get install
              bash-completion); without it a TAB says
              "_get_comp_words_by_ref: command not found".
  zsh:        toolserver completion zsh > "${fpath[1]}/_toolserver"
  fish:       toolserver completion fish > ~/.config/fish/completions/toolserver.fish
  powershell: toolserver completion powershell | Out-String | Invoke-Expression`,
		ValidArgs: shells,
		Args: func(c *cobra.Command, args []string) error {
			if err := exactArgs(1, "a shell ("+strings.Join(shells, ", ")+")")(c, args); err != nil {
				return err
			}
			if !slices.Contains(shells, args[0]) {
				return usageError("completion: unknown shell %q; want %s", args[0], strings.Join(shells, ", "))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			return runCompletion(cmd.Context(), opts, args)
		},
	}
	setExitStatus(cmd, exitStatusPlain)
	cmd.Flags().BoolVar(&opts.noDescriptions, "no-descriptions", false, "complete without the descriptions of the choices")
	return cmd
}

// runCompletion prints the script of the shell args[0] names.
func runCompletion(ctx context.Context, opts completionOptions, args []string) error {
	desc := !opts.noDescriptions
	w := opts.stdout
	switch args[0] {
	case "bash":
		return opts.root.GenBashCompletionV2(w, desc)
	case "zsh":
		if desc {
			return opts.root.GenZshCompletion(w)
		}
		return opts.root.GenZshCompletionNoDesc(w)
	case "fish":
		return opts.root.GenFishCompletion(w, desc)
	default:
		if desc {
			return opts.root.GenPowerShellCompletionWithDesc(w)
		}
		return opts.root.GenPowerShellCompletion(w)
	}
}
