package report_test

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolserver/toolserver/report"
)

// serveFixture serves the fixture's report as report serve does, on a
// real loopback server.
func serveFixture(t *testing.T, f fixture) *httptest.Server {
	t.Helper()
	s, err := report.NewServer(f.dir, f.rep, f.project)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	h, err := s.Handler()
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv
}

// get sends GET path to srv with the Host header host ("" for the
// server's own address) and returns the response with its body read.
func get(t *testing.T, srv *httptest.Server, host, path string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, srv.URL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if host != "" {
		req.Host = host
	}
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, body
}

// TestServeRefusesOtherHosts: a page whose DNS name was rebound to
// 127.0.0.1 reaches report serve with its own name in Host; it gets 403
// for the report, its images and the page. Loopback names get them.
func TestServeRefusesOtherHosts(t *testing.T) {
	t.Parallel()
	f := newFixture(t, "checkout", "chromium-1280x800")
	srv := serveFixture(t, f)
	_, port, _ := strings.Cut(strings.TrimPrefix(srv.URL, "http://"), ":")
	image := "/" + f.rep.Flows[0].Snapshots[0].Images.Current
	for _, path := range []string{"/report.json", image, "/", "/index.html", "/images/"} {
		for _, host := range []string{"evil.example:" + port, "evil.example", "127.0.0.1.evil.example:" + port} {
			if resp, body := get(t, srv, host, path); resp.StatusCode != http.StatusForbidden {
				t.Errorf("GET %s with Host %s: got %d, want 403 (%.100q)", path, host, resp.StatusCode, body)
			}
		}
	}
	for _, path := range []string{"/report.json", image, "/"} {
		for _, host := range []string{"", "localhost:" + port, "[::1]:" + port, "app.localhost:" + port} {
			if resp, body := get(t, srv, host, path); resp.StatusCode != http.StatusOK {
				t.Errorf("GET %s with Host %q: got %d, want 200 (%.100q)", path, host, resp.StatusCode, body)
			}
		}
	}
}

// TestServeGeneratesItsPage: the folder's own index.html (from an
// untrusted CI artifact, say) is never served: the page is the binary's,
// made from report.json. No other file of the folder is served either,
// only report.json and the images it names, each with its type and
// nosniff, the page with a policy that runs its own script only.
func TestServeGeneratesItsPage(t *testing.T) {
	t.Parallel()
	f := newFixture(t, "checkout", "chromium-1280x800")
	const marker = "MARKER-OF-THE-FOLDER"
	evil := []byte("<!doctype html><script>fetch('approve',{method:'POST',body:'{\"all\":true}'});document.title='" + marker + "'</script>")
	write(t, filepath.Join(f.dir, report.PageFile), evil)
	write(t, filepath.Join(f.dir, "evil.html"), evil)
	write(t, filepath.Join(f.dir, "images", "evil.html"), evil)
	write(t, filepath.Join(f.dir, "images", "checkout", "evil.js"), []byte("alert(1)"))
	srv := serveFixture(t, f)

	for _, path := range []string{"/", "/index.html", "/?token=x"} {
		resp, body := get(t, srv, "", path)
		if resp.StatusCode != http.StatusOK || bytes.Contains(body, []byte(marker)) {
			t.Fatalf("GET %s: got %d, the folder's page served: %v", path, resp.StatusCode, bytes.Contains(body, []byte(marker)))
		}
		if !bytes.Contains(body, []byte(`const viewer = (function`)) || !bytes.Contains(body, []byte(`"images/checkout/home-current.png"`)) {
			t.Errorf("GET %s: not the binary's page with the report's data:\n%.300s", path, body)
		}
		h := resp.Header
		csp := h.Get("Content-Security-Policy")
		if h.Get("Content-Type") != "text/html; charset=utf-8" || h.Get("X-Content-Type-Options") != "nosniff" ||
			!strings.Contains(csp, "default-src 'none'") || !strings.Contains(csp, "script-src 'sha256-") ||
			!strings.Contains(csp, "img-src 'self'") || !strings.Contains(csp, "connect-src 'self'") || h.Get("Referrer-Policy") != "no-referrer" {
			t.Errorf("GET %s: headers %v", path, h)
		}
		// The policy runs the served page's own script, and only it.
		_, script, _ := strings.Cut(csp, "script-src ")
		script, _, _ = strings.Cut(script, ";")
		if want := "'" + report.ScriptHash(body) + "'"; script != want {
			t.Errorf("GET %s: script-src %s, want the page's script alone, %s", path, script, want)
		}
	}
	resp, body := get(t, srv, "", "/report.json")
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "application/json" || resp.Header.Get("X-Content-Type-Options") != "nosniff" {
		t.Errorf("GET /report.json: %d %v", resp.StatusCode, resp.Header)
	}
	if back, err := os.ReadFile(filepath.Join(f.dir, report.DataFile)); err != nil || !bytes.Contains(body, []byte(`"images/checkout/home-current.png"`)) {
		t.Errorf("GET /report.json: %v\n%.200s\nfile: %.200s", err, body, back)
	}
	for _, s := range f.rep.Flows[0].Snapshots {
		for _, p := range []string{s.Images.Baseline, s.Images.Current, s.Images.Diff} {
			if p == "" {
				continue
			}
			want, _ := os.ReadFile(filepath.Join(f.dir, filepath.FromSlash(p)))
			resp, body := get(t, srv, "", "/"+(&url.URL{Path: p}).EscapedPath())
			if resp.StatusCode != http.StatusOK || !bytes.Equal(body, want) || resp.Header.Get("Content-Type") != "image/png" || resp.Header.Get("X-Content-Type-Options") != "nosniff" {
				t.Errorf("GET /%s: %d %v (the image's bytes: %v)", p, resp.StatusCode, resp.Header, bytes.Equal(body, want))
			}
		}
	}
	for _, path := range []string{"/evil.html", "/images/evil.html", "/images/checkout/evil.js", "/images/", "/images/checkout/", "/images/checkout/home-current.png/", "/approve"} {
		if resp, body := get(t, srv, "", path); resp.StatusCode != http.StatusNotFound && resp.StatusCode != http.StatusMethodNotAllowed {
			t.Errorf("GET %s: got %d, want nothing served (%.100q)", path, resp.StatusCode, body)
		}
	}
}
