package main

import (
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
)

// TestExposeFlags: --expose and --expose-only need a link and a good
// target, and do not go with --detach; the config file's expose: is
// checked with its line, ignored by a local run, and opens the tunnel of
// a linked one; a tool-server that offers no tunnel is refused before
// any call, and the error says so.
func TestExposeFlags(t *testing.T) {
	t.Parallel()
	pages, config, runEnv := homeProject(t, "chromium-cdp-713x513")
	run := func(t *testing.T, args ...string) (int, string) {
		t.Helper()
		return runEnv(t, nil, args...)
	}
	u := startServe(t, nil, false)
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"no link", []string{"--expose", "localhost:5173"}, "for a run over a link"},
		{"--expose-only alone", []string{"--link", u, "--expose-only"}, "--expose-only needs --expose"},
		{"another machine", []string{"--link", u, "--expose", "10.0.0.7:80"}, "is not this machine's loopback"},
		{"with --detach", []string{"--link", u, "--detach", "--expose", "localhost"}, "does not go with --detach"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if code, out := run(t, tc.args...); code != exitUsage || !strings.Contains(out, tc.want) {
				t.Errorf("exit %d, want %d saying %q\n%s", code, exitUsage, tc.want, out)
			}
		})
	}

	os.WriteFile(config, []byte("baseURL: "+pages.URL+"\nexpose: [localhost:5173, example.com:80]\n"), 0o644)
	if code, out := run(t); code != exitUsage || !strings.Contains(out, "line 2") || !strings.Contains(out, "example.com:80") {
		t.Errorf("a bad expose: in the config: exit %d\n%s", code, out)
	}
	// The pages' server is this machine's 127.0.0.1: exposed, its
	// requests go through the tunnel; a local run ignores expose:.
	os.WriteFile(config, []byte("baseURL: "+pages.URL+"\nexpose: 127.0.0.1:"+portOf(t, pages.URL)+"\nexposeOnly: true\n"), 0o644)
	if code, out := run(t); code != exitOK {
		t.Errorf("a local run with expose: in the config: exit %d\n%s", code, out)
	}
	if code, out := run(t, "--link", u); code != exitOK {
		t.Errorf("a linked run with expose: in the config: exit %d\n%s", code, out)
	}
	// --expose-only from the config binds the run: the pages are not
	// exposed under another port.
	os.WriteFile(config, []byte("baseURL: "+pages.URL+"\nexpose: localhost:1\nexposeOnly: true\n"), 0o644)
	if code, out := run(t, "--link", u); code == exitOK || !strings.Contains(out, "--expose-only") {
		t.Errorf("a page the run does not expose, with exposeOnly: exit %d\n%s", code, out)
	}
	os.Remove(config)

	// A tool-server without the tunnel (Argent's own has no /v1).
	bare := httptest.NewServer(http.NotFoundHandler())
	t.Cleanup(bare.Close)
	code, out := run(t, "--link", bare.URL, "--base-url", pages.URL, "--expose", "localhost")
	if code != exitInfra || !strings.Contains(out, "offers no tunnel") || !strings.Contains(out, "without --expose") {
		t.Errorf("a server without the tunnel: exit %d\n%s", code, out)
	}
}

// portOf is the port of URL u.
func portOf(t *testing.T, u string) string {
	t.Helper()
	i := strings.LastIndex(u, ":")
	if i < 0 {
		t.Fatalf("no port in %s", u)
	}
	return strings.TrimRight(u[i+1:], "/")
}
