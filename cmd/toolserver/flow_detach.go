package main

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/toolserver/toolserver/fault"
	flowrun "github.com/toolserver/toolserver/flow/run"
	"github.com/toolserver/toolserver/internal/printable"
	"github.com/toolserver/toolserver/runs"
	v1 "github.com/toolserver/toolserver/runs/v1"
	"github.com/toolserver/toolserver/suite/linked"
)

// runDetached starts each target as a run of the tool-server (POST
// /v1/runs with flow-execute's arguments, members included, as a linked
// run sends them) and prints the run ids; nothing waits for the runs.
func runDetached(ctx context.Context, opts flowRunOptions, arg string, targets []flowTarget, format string) error {
	u := opts.linkURL(opts.link)
	switch {
	case !opts.detach:
		return usageError("flow run: --label labels a detached run; add --detach")
	case u == "":
		return usageError("flow run: --detach starts the runs on a tool-server: give --link URL (or $%s)", envToolsURL)
	case len(linked.URLs(u)) > 1:
		return usageError("flow run: --detach starts the runs on one tool-server; give one --link URL (runs events follows them there)")
	case opts.update != flowrun.UpdateNone:
		return usageError("flow run: --detach cannot --update-baselines: a detached run's baselines never come back to this project; run it attached")
	case opts.reportDir != "" || opts.junit != "" || opts.artifacts != "":
		return usageError("flow run: --detach writes no report, JUnit or artifacts (the run is not waited for); follow it with toolserver runs events ID")
	}
	labels, err := runs.ParseLabels(opts.labels)
	if err != nil {
		return usageError("flow run: --label %v", err)
	}
	if err := runs.CheckLabels(labels); err != nil {
		return usageError("flow run: --label: %v", err)
	}
	if opts.dryRun {
		return printDetachPlan(opts, targets, labels, format)
	}
	out := newRenderer(opts.stdout, opts.stderr, format != "")
	lr, err := newLinkedRun(u, arg, opts, out)
	if err != nil {
		return err
	}
	c := v1.NewClient(u, opts.getenv(envAuthToken))
	type started struct {
		Flow string `json:"flow"`
		Run  string `json:"run"`
	}
	var all []started
	for _, t := range targets {
		args, err := lr.Prepare(ctx, t)
		if err != nil {
			return fault.Infrastructure(fmt.Errorf("%s: %w", t.Name, err))
		}
		toolArgs, err := json.Marshal(args)
		if err != nil {
			return apiError("flow run --detach "+t.Name, err)
		}
		st, err := c.Start(ctx, runs.StartRequest{ToolArgs: toolArgs, Labels: labels})
		if err != nil {
			return apiError("flow run --detach "+t.Name, err)
		}
		all = append(all, started{Flow: t.Name, Run: st.Run})
		if format == "" {
			fmt.Fprintf(opts.stdout, "%s\t%s\n", printable.String(st.Run), printable.String(t.Name))
		}
	}
	if format != "" {
		return printData(opts.stdout, format, map[string]any{"runs": all})
	}
	return nil
}

// detachPlan is one run flow run --detach --dry-run would start.
type detachPlan struct {
	Flow   string            `json:"flow"`
	Device string            `json:"device"`
	Labels map[string]string `json:"labels"`
}

// printDetachPlan prints the runs --detach would start and starts none:
// a dry run writes nothing, and on a tool-server starting a run is the
// write (docs/control-plane.md, "The command line").
func printDetachPlan(opts flowRunOptions, targets []flowTarget, labels map[string]string, format string) error {
	if labels == nil {
		labels = map[string]string{}
	}
	plan := make([]detachPlan, 0, len(targets))
	for _, t := range targets {
		plan = append(plan, detachPlan{Flow: t.Name, Device: opts.device, Labels: labels})
	}
	if format != "" {
		return printData(opts.stdout, format, map[string]any{"dry_run": true, "runs": plan})
	}
	keys := slices.Sorted(maps.Keys(labels))
	for i, k := range keys {
		keys[i] = printable.String(k + ":" + labels[k])
	}
	for _, p := range plan {
		line := fmt.Sprintf("would start %s on %s", printable.String(p.Flow), printable.String(p.Device))
		if len(keys) > 0 {
			line += " labelled " + strings.Join(keys, " ")
		}
		fmt.Fprintln(opts.stdout, line)
	}
	return nil
}
