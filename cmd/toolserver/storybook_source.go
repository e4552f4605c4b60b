package main

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"

	"github.com/toolserver/toolserver/storybook"
)

// storybookSource is the Storybook a run snapshots: the base URL its
// iframe.html and index.json are under, and, for a static build given as
// a directory, the server that serves it on 127.0.0.1 for the run.
type storybookSource struct {
	base string // ends in /
	dir  string // the static build, when the argument named one
	srv  *http.Server
	port int
}

// openStorybook resolves the argument: a directory holding a static
// build (index.json and iframe.html), served here on 127.0.0.1:0 for
// the length of the run, or the http(s) URL of a running Storybook.
func openStorybook(arg string) (*storybookSource, error) {
	if strings.HasPrefix(arg, "http://") || strings.HasPrefix(arg, "https://") {
		u, err := url.Parse(arg)
		if err != nil || u.Host == "" {
			return nil, usageError("storybook: %q is not a URL", arg)
		}
		// The Storybook's root: a URL of its iframe.html or index.html
		// names the same one.
		u.RawQuery, u.Fragment = "", ""
		if b := path.Base(u.Path); b == "iframe.html" || b == "index.html" || b == "index.json" {
			u.Path = path.Dir(u.Path)
		}
		if !strings.HasSuffix(u.Path, "/") {
			u.Path += "/"
		}
		return &storybookSource{base: u.String()}, nil
	}
	st, err := os.Stat(arg)
	if err != nil || !st.IsDir() {
		return nil, usageError("storybook: %q is neither a URL (http:// or https://) nor a directory", arg)
	}
	for _, f := range []string{"index.json", "iframe.html"} {
		if _, err := os.Stat(filepath.Join(arg, f)); err != nil {
			return nil, usageError("storybook: %q has no %s: give the output directory of storybook build (storybook-static)", arg, f)
		}
	}
	abs, err := filepath.Abs(arg)
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("storybook: serve %s: %w", arg, err)
	}
	srv := &http.Server{Handler: staticHandler(http.Dir(abs)), ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(ln)
	port := ln.Addr().(*net.TCPAddr).Port
	return &storybookSource{base: fmt.Sprintf("http://127.0.0.1:%d/", port), dir: abs, srv: srv, port: port}, nil
}

// staticHandler serves a static build read-only: GET and HEAD only.
func staticHandler(root http.FileSystem) http.Handler {
	files := http.FileServer(root)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			http.Error(w, "read-only", http.StatusMethodNotAllowed)
			return
		}
		files.ServeHTTP(w, r)
	})
}

// close stops the static build's server, if this run started one.
func (s *storybookSource) close() {
	if s.srv != nil {
		s.srv.Close()
	}
}

// readIndex reads the Storybook's index.json: from the build's directory,
// else over HTTP.
func (s *storybookSource) readIndex(ctx context.Context) ([]byte, error) {
	if s.dir != "" {
		f, err := os.Open(filepath.Join(s.dir, "index.json"))
		if err != nil {
			return nil, err
		}
		defer f.Close()
		return storybook.ReadIndex(f, "index.json")
	}
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.base+"index.json", nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %sindex.json: %s (Storybook 8 to 10 serve index.json beside iframe.html)", s.base, resp.Status)
	}
	return storybook.ReadIndex(resp.Body, s.base+"index.json")
}
