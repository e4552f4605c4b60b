package main

import (
	"strings"

	"github.com/spf13/cobra"

	"github.com/toolserver/toolserver/internal/clientpath"
	"github.com/toolserver/toolserver/suite"
)

// commonDevices are the device ids --device completes to: the viewports
// of common laptop, desktop, tablet and phone screens. Any other
// chromium-cdp-<W>x<H> works as well.
var commonDevices = []cobra.Completion{
	cobra.CompletionWithDesc("chromium-cdp-1280x800", "laptop (the default)"),
	cobra.CompletionWithDesc("chromium-cdp-1366x768", "laptop"),
	cobra.CompletionWithDesc("chromium-cdp-1440x900", "laptop"),
	cobra.CompletionWithDesc("chromium-cdp-1920x1080", "desktop, full HD"),
	cobra.CompletionWithDesc("chromium-cdp-2560x1440", "desktop, QHD"),
	cobra.CompletionWithDesc("chromium-cdp-768x1024", "tablet, portrait"),
	cobra.CompletionWithDesc("chromium-cdp-1024x768", "tablet, landscape"),
	cobra.CompletionWithDesc("chromium-cdp-820x1180", "tablet, portrait"),
	cobra.CompletionWithDesc("chromium-cdp-390x844", "phone"),
	cobra.CompletionWithDesc("chromium-cdp-393x852", "phone"),
	cobra.CompletionWithDesc("chromium-cdp-412x915", "phone"),
	cobra.CompletionWithDesc("chromium-cdp-360x800", "phone"),
}

// completeDevices completes --device.
func completeDevices(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	return commonDevices, cobra.ShellCompDirectiveNoFileComp
}

// completeFlowNames completes the argument of flow run: the flows of
// <project>/.argent/flows (--project honoured), fragments left out since
// they do not run on their own. A path (with a slash or a leading dot),
// or a prefix no flow has, falls back to the shell's file completion.
func completeFlowNames(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	if len(args) > 0 {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	if strings.ContainsAny(toComplete, `/\`) || strings.HasPrefix(toComplete, ".") || strings.HasPrefix(toComplete, "~") {
		return nil, cobra.ShellCompDirectiveDefault
	}
	project, _ := cmd.Flags().GetString("project")
	rows, _ := suite.List(clientpath.LocalFlowsDir(project))
	var out []cobra.Completion
	for _, r := range rows {
		if r.Kind == suite.KindFragment || !strings.HasPrefix(r.Name, toComplete) {
			continue
		}
		desc := r.Kind
		if r.Error != "" {
			desc += ": " + r.Error
		}
		out = append(out, cobra.CompletionWithDesc(r.Name, desc))
	}
	if len(out) == 0 {
		return nil, cobra.ShellCompDirectiveDefault
	}
	return out, cobra.ShellCompDirectiveNoFileComp
}

// completeToolNames completes a tool name from the in-process catalog,
// which boots nothing.
func completeToolNames(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	if len(args) > 0 {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	var out []cobra.Completion
	for _, t := range toolCatalog().List() {
		if strings.HasPrefix(t.Name, toComplete) {
			desc, _, _ := strings.Cut(t.Description, ". ")
			out = append(out, cobra.CompletionWithDesc(t.Name, desc))
		}
	}
	return out, cobra.ShellCompDirectiveNoFileComp
}

// completePNGFiles completes the two files of snapshot diff.
func completePNGFiles(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	if len(args) >= 2 {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	return []cobra.Completion{"png"}, cobra.ShellCompDirectiveFilterFileExt
}
