package main

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestBaseURL: launch: /app.html resolves against the base URL of
// --base-url, else $TOOLSERVER_BASE_URL, else baseURL: in the config file,
// in that order; without one the flow is refused before its first step,
// naming the flow, the step and the three ways to set one; over a link
// the base URL goes with the call. A bad base URL is a usage error.
func TestBaseURL(t *testing.T) {
	t.Parallel()
	pages, config, run := homeProject(t, "chromium-cdp-711x511")
	// A base URL where nothing answers: a run that used it would fail.
	dead := httptest.NewServer(http.NotFoundHandler())
	deadURL := dead.URL
	dead.Close()
	for _, tc := range []struct {
		name   string
		config string
		env    env
		args   []string
	}{
		{"the flag over the rest", "baseURL: " + deadURL + "\n", env{envBaseURL: deadURL}, []string{"--base-url", pages.URL}},
		{"the environment over the config", "baseURL: " + deadURL + "\n", env{envBaseURL: pages.URL}, nil},
		{"the config file", "baseURL: " + pages.URL + "/\n", nil, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := os.WriteFile(config, []byte(tc.config), 0o644); err != nil {
				t.Fatal(err)
			}
			if code, out := run(t, tc.env, tc.args...); code != exitOK {
				t.Errorf("exit %d\n%s", code, out)
			}
		})
	}
	os.Remove(config)
	code, out := run(t, nil)
	for _, want := range []string{`flow "home", step 1: launch "/app.html"`, "--base-url", envBaseURL, "baseURL: in .argent/toolserver.yaml"} {
		if code == exitOK || !strings.Contains(out, want) {
			t.Errorf("no base URL: exit %d, want a refusal saying %q\n%s", code, want, out)
		}
	}
	if code, out := run(t, nil, "--base-url", "ftp://example.com"); code != exitUsage || !strings.Contains(out, "--base-url") {
		t.Errorf("a bad --base-url: exit %d\n%s", code, out)
	}
	os.WriteFile(config, []byte("baseURL: 42\n"), 0o644)
	if code, out := run(t, nil); code != exitUsage || !strings.Contains(out, "line 1") {
		t.Errorf("a bad baseURL in the config: exit %d\n%s", code, out)
	}
	os.Remove(config)

	// Over a link: the base URL goes with the call; without one the
	// tool-server refuses the flow before its first step.
	u := startServe(t, nil, false)
	if code, out := run(t, nil, "--link", u, "--base-url", pages.URL); code != exitOK {
		t.Errorf("over a link with --base-url: exit %d\n%s", code, out)
	}
	if code, out := run(t, nil, "--link", u); code == exitOK || !strings.Contains(out, "--base-url") {
		t.Errorf("over a link without a base URL: exit %d\n%s", code, out)
	}
}

// homeProject is a project whose flow home launches /app.html, taps and
// checks the tap, for the tests of the base URL: the pages' server it
// needs for a base URL, the project's config file (not written), and how
// to run home on device id with the environment e.
func homeProject(t *testing.T, id string) (pages *httptest.Server, config string, run func(t *testing.T, e env, args ...string) (int, string)) {
	t.Helper()
	pages = httptest.NewServer(http.FileServer(http.Dir("../../testdata/pages")))
	t.Cleanup(pages.Close)
	root := writeProject(t, map[string]string{"home.yaml": `steps:
  - launch: /app.html
  - tap: Go now
  - assert: { text: { in: { id: out }, equals: clicked 1 } }
`})
	dev := "--device=" + sharedDevice(t, id)
	config = filepath.Join(root, ".argent", "toolserver.yaml")
	return pages, config, func(t *testing.T, e env, args ...string) (int, string) {
		t.Helper()
		code, out, errOut := runCLIEnv(t, e, append([]string{"flow", "run", "home", "--project", root, dev}, args...)...)
		return code, out + errOut
	}
}
