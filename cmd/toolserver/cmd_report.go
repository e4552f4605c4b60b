package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/spf13/cobra"

	"github.com/toolserver/toolserver/internal/printable"
	"github.com/toolserver/toolserver/report"
)

// newReportCommand is the report group: serve and merge.
func newReportCommand(s streams) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "report",
		Short: "Serve and merge HTML reports (flow run --report)",
	}
	asGroup(cmd)
	cmd.AddCommand(newReportServeCommand(s), newReportMergeCommand(s))
	return cmd
}

// reportServeOptions are the flags of report serve.
type reportServeOptions struct {
	streams
	addr, project string
}

const reportServeLong = `Serve a report on loopback with its approve buttons turned on (per
snapshot, per flow, all); a button does what toolserver approve does, into
--project (default, as for approve: the project the run ran in when it is
on this machine, else the current directory). The URL it prints carries a
random token that approving needs; the page and images are served to any
local client that names loopback in Host, approving only with the token.
The page is this binary's, made from report.json: no HTML or script file
of the folder is served. It binds to loopback only and runs until
interrupted.`

func newReportServeCommand(s streams) *cobra.Command {
	opts := reportServeOptions{streams: s}
	cmd := &cobra.Command{
		Use:   "serve DIR [--addr 127.0.0.1:0] [--project DIR]",
		Short: "Serve a report with approve buttons",
		Long:  reportServeLong,
		Args:  exactArgs(1, "one report directory"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runReportServe(cmd.Context(), opts, args[0])
		},
	}
	setExitStatus(cmd, exitStatusServe)
	f := cmd.Flags()
	f.StringVar(&opts.addr, "addr", "127.0.0.1:0", "the loopback `HOST:PORT` to listen on (port 0: any free one)")
	f.StringVar(&opts.project, "project", "", "the project `DIR` approvals write baselines into (default: as for approve)")
	_ = cmd.MarkFlagDirname("project")
	return cmd
}

func runReportServe(ctx context.Context, opts reportServeOptions, dir string) error {
	host, _, err := net.SplitHostPort(opts.addr)
	if err != nil {
		return usageError("report serve: --addr %s: %v", opts.addr, err)
	}
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return usageError("report serve: --addr %s: the report is served on loopback only (127.0.0.1, ::1 or localhost)", opts.addr)
	}
	rep, err := report.Read(dir)
	if err != nil {
		return usageError("report serve: %s", printable.String(err.Error()))
	}
	project, note, err := approveProject(opts.project, rep)
	if err != nil {
		return fmt.Errorf("report serve: %w", err)
	}
	srv, err := report.NewServer(dir, rep, project)
	if err != nil {
		return err
	}
	defer srv.Close()
	h, err := srv.Handler()
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", opts.addr)
	if err != nil {
		return fmt.Errorf("report serve: %w", err)
	}
	hs := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	fmt.Fprintln(opts.stdout, printable.String("Approvals write into "+project+note))
	fmt.Fprintln(opts.stdout, printable.String(fmt.Sprintf("Serving %s at http://%s/?token=%s (Ctrl-C to stop)", dir, ln.Addr(), srv.Token)))
	done := make(chan error, 1)
	go func() { done <- hs.Serve(ln) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := hs.Shutdown(sctx); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	<-done
	return nil
}

// reportMergeOptions are the flags of report merge.
type reportMergeOptions struct {
	streams
}

func newReportMergeCommand(s streams) *cobra.Command {
	opts := reportMergeOptions{streams: s}
	cmd := &cobra.Command{
		Use:   "merge OUT DIR...",
		Short: "Merge the reports of several runs (CI shards, devices) into one",
		Long: `Merge the reports of several runs (CI shards, several devices) into one
report in OUT, with the same page. Every flow of every report is kept: two
entries for the same flow and device are two runs side by side, never one
dropped. OUT must be new, empty, or an earlier report (which is replaced).`,
		Args: func(c *cobra.Command, args []string) error {
			if len(args) < 2 {
				return usageError("report merge: want OUT and at least one report DIR, got %d %s", len(args), plural(len(args), "argument", "arguments"))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			return runReportMerge(opts, args[0], args[1:])
		},
	}
	setExitStatus(cmd, exitStatusPlain)
	return cmd
}

func runReportMerge(opts reportMergeOptions, out string, dirs []string) error {
	merged, err := report.Merge(out, dirs, writer(), time.Now())
	if err != nil {
		return usageError("report merge: %s", printable.String(err.Error()))
	}
	fmt.Fprintln(opts.stdout, printable.String(fmt.Sprintf("Merged %d %s (%d %s) into %s/%s", len(dirs), plural(len(dirs), "report", "reports"), len(merged.Flows), plural(len(merged.Flows), "flow", "flows"), out, report.PageFile)))
	return nil
}
