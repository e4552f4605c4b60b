package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/toolserver/toolserver/server"
)

func runServe(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	addr := fs.String("addr", "127.0.0.1:3000", "address to listen on")
	maxDevices := fs.Int("max-devices", 4, "how many devices may be booted at once")
	insecure := fs.Bool("insecure", false, "allow a wildcard bind without ARGENT_AUTH_TOKEN")
	allowFiles := fs.Bool("allow-file-urls", false, "let callers open file: URLs even with a wildcard bind (remote callers could then screenshot this machine's files)")
	noHostFiles := fs.Bool("no-host-files", false, "run a flow a client sends from its bytes, never from a file at the same path on this machine")
	if err := fs.Parse(args); err != nil {
		return withExit(exitUsage, err)
	}
	if fs.NArg() > 0 {
		return usageError("serve: unexpected argument %q", fs.Arg(0))
	}
	token := os.Getenv("ARGENT_AUTH_TOKEN")
	if server.IsWildcard(*addr) && token == "" && !*insecure {
		return usageError("serve: refusing to listen on %s without a token: anyone who can reach this machine could drive its browser and read the files it serves. Set ARGENT_AUTH_TOKEN, or pass --insecure if the network is yours alone", *addr)
	}
	// A server that answers other machines never opens its own files for
	// them, unless told to.
	a, err := newApp(appOptions{maxDevices: *maxDevices, stderr: stderr, denyFileURLs: server.IsWildcard(*addr) && !*allowFiles})
	if err != nil {
		return err
	}
	defer a.Close()
	setNoHostFiles(a, *noHostFiles)
	if a.pool.Err() != nil {
		fmt.Fprintln(stderr, "toolserver: warning: no Chromium found; device tools will fail until CHROMIUM_PATH points at one (apt-get install chromium fonts-liberation)")
	}
	srv := server.New(server.Config{
		Addr: *addr, Token: token, Tools: a.tools, Artifacts: a.artifacts, Uploads: a.uploads,
		Log: a.log, TempDir: a.tmp, Version: version,
	})
	if err := srv.Listen(); err != nil {
		return err
	}
	a.sweepUploads(time.Minute)
	auth := "no token"
	if token != "" {
		auth = "bearer token required"
	}
	fmt.Fprintf(stderr, "toolserver %s listening on http://%s (%s)\n", version, srv.Addr(), auth)
	err = srv.Serve(ctx)
	if errors.Is(err, context.Canceled) {
		err = nil
	}
	return err
}
