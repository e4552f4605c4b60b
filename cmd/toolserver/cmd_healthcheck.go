package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"time"
)

// runHealthcheck asks a running server's /healthz (the image's
// HEALTHCHECK): exit 0 healthy, 1 not.
func runHealthcheck(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("healthcheck", flag.ContinueOnError)
	fs.SetOutput(stderr)
	addr := fs.String("addr", "127.0.0.1:3000", "the server's address")
	if err := fs.Parse(args); err != nil {
		return withExit(exitUsage, err)
	}
	ctx, cancel := context.WithTimeout(ctx, 4*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, "GET", "http://"+*addr+"/healthz", nil)
	if err != nil {
		return usageError("healthcheck: %v", err)
	}
	if tok := os.Getenv("ARGENT_AUTH_TOKEN"); tok != "" {
		req.Header.Set("Authorization", "Bearer "+tok)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return withExit(exitFailed, fmt.Errorf("healthcheck: %w", err))
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return withExit(exitFailed, fmt.Errorf("healthcheck: %s answered %s", *addr, resp.Status))
	}
	fmt.Fprintln(stdout, "healthy")
	return nil
}
