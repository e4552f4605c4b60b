package main

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/spf13/cobra"
)

// healthcheckOptions are the flags of healthcheck.
type healthcheckOptions struct {
	streams
	addr string
}

func newHealthcheckCommand(s streams) *cobra.Command {
	opts := healthcheckOptions{streams: s}
	cmd := &cobra.Command{
		Use:   "healthcheck [flags]",
		Short: "Exit 0 when a running server answers /healthz",
		Long: `Ask a running tool-server's GET /healthz (the Docker image's HEALTHCHECK),
with ARGENT_AUTH_TOKEN as its bearer token when set, and print "healthy".`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runHealthcheck(cmd.Context(), opts, args)
		},
	}
	setExitStatus(cmd, exitStatusHealthcheck)
	cmd.Flags().StringVar(&opts.addr, "addr", "127.0.0.1:3000", "the server's `host:port`")
	return cmd
}

// runHealthcheck asks a running server's /healthz: exit 0 healthy, 1 not.
func runHealthcheck(ctx context.Context, opts healthcheckOptions, args []string) error {
	ctx, cancel := context.WithTimeout(ctx, 4*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, "GET", "http://"+opts.addr+"/healthz", nil)
	if err != nil {
		return usageError("healthcheck: %v", err)
	}
	if tok := opts.getenv(envAuthToken); tok != "" {
		req.Header.Set("Authorization", "Bearer "+tok)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return failed(fmt.Errorf("healthcheck: %w", err))
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return failed(fmt.Errorf("healthcheck: %s answered %s", opts.addr, resp.Status))
	}
	fmt.Fprintln(opts.stdout, "healthy")
	return nil
}
