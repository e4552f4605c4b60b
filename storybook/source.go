package storybook

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
)

// Source is the Storybook a run snapshots: the base URL its iframe.html
// and index.json are under, and, for a static build given as a
// directory, the server that serves it on 127.0.0.1 for the run.
type Source struct {
	// Base is the Storybook's root URL; it ends in /.
	Base string
	// Port is the port of the static build's server on 127.0.0.1, 0 for a
	// running Storybook.
	Port int
	dir  string // the static build, when the argument named one
	srv  *http.Server
}

// An ArgError is an argument that names no Storybook: a bad command
// line, not a failure.
type ArgError struct{ msg string }

func (e *ArgError) Error() string { return e.msg }

func argError(format string, a ...any) error { return &ArgError{msg: fmt.Sprintf(format, a...)} }

// Open resolves the argument: a directory holding a static build
// (index.json and iframe.html), served on 127.0.0.1:0 until Close, or
// the http(s) URL of a running Storybook. An argument that is neither is
// an *ArgError.
func Open(arg string) (*Source, error) {
	if strings.HasPrefix(arg, "http://") || strings.HasPrefix(arg, "https://") {
		u, err := url.Parse(arg)
		if err != nil || u.Host == "" {
			return nil, argError("%q is not a URL", arg)
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
		return &Source{Base: u.String()}, nil
	}
	st, err := os.Stat(arg)
	if err != nil || !st.IsDir() {
		return nil, argError("%q is neither a URL (http:// or https://) nor a directory", arg)
	}
	for _, f := range []string{"index.json", "iframe.html"} {
		if _, err := os.Stat(filepath.Join(arg, f)); err != nil {
			return nil, argError("%q has no %s: give the output directory of storybook build (storybook-static)", arg, f)
		}
	}
	abs, err := filepath.Abs(arg)
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("serve %s: %w", arg, err)
	}
	srv := &http.Server{Handler: staticHandler(http.Dir(abs)), ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(ln)
	port := ln.Addr().(*net.TCPAddr).Port
	return &Source{Base: fmt.Sprintf("http://127.0.0.1:%d/", port), Port: port, dir: abs, srv: srv}, nil
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

// Served tells a static build this Source serves (on 127.0.0.1:Port).
func (s *Source) Served() bool { return s.srv != nil }

// Close stops the static build's server, if Open started one.
func (s *Source) Close() {
	if s.srv != nil {
		s.srv.Close()
	}
}

// ReadIndex reads the Storybook's index.json: from the build's
// directory, else over HTTP (within a minute).
func (s *Source) ReadIndex(ctx context.Context) ([]byte, error) {
	if s.dir != "" {
		f, err := os.Open(filepath.Join(s.dir, "index.json"))
		if err != nil {
			return nil, err
		}
		defer f.Close()
		return ReadIndex(f, "index.json")
	}
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.Base+"index.json", nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %sindex.json: %s (Storybook 8 to 10 serve index.json beside iframe.html)", s.Base, resp.Status)
	}
	return ReadIndex(resp.Body, s.Base+"index.json")
}
