package storybook

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestOpenURL: a running Storybook's root, whichever of its pages the
// URL names; what is no URL is an ArgError.
func TestOpenURL(t *testing.T) {
	for in, want := range map[string]string{
		"http://localhost:6006":                     "http://localhost:6006/",
		"http://localhost:6006/iframe.html?id=a--b": "http://localhost:6006/",
		"https://sb.example.com/ui/index.json":      "https://sb.example.com/ui/",
		"https://sb.example.com/ui/index.html#frag": "https://sb.example.com/ui/",
		"https://sb.example.com/ui/sub/":            "https://sb.example.com/ui/sub/",
	} {
		s, err := Open(in)
		if err != nil || s.Base != want || s.Served() {
			t.Errorf("%s: got %+v, %v, want %s", in, s, err, want)
		}
	}
	var ae *ArgError
	if _, err := Open("http://"); !errors.As(err, &ae) || err.Error() != `"http://" is not a URL` {
		t.Errorf("no host: got %v", err)
	}
	if _, err := Open(filepath.Join(t.TempDir(), "none")); !errors.As(err, &ae) || !strings.HasSuffix(err.Error(), "is neither a URL (http:// or https://) nor a directory") {
		t.Errorf("no such directory: got %v", err)
	}
	if _, err := Open(t.TempDir()); !errors.As(err, &ae) || !strings.HasSuffix(err.Error(), "has no index.json: give the output directory of storybook build (storybook-static)") {
		t.Errorf("an empty directory: got %v", err)
	}
}

// TestOpenDir: a static build is served read-only on 127.0.0.1 until
// Close, and its index read from the directory.
func TestOpenDir(t *testing.T) {
	dir := t.TempDir()
	for name, data := range map[string]string{"index.json": `{"v":5,"entries":{}}`, "iframe.html": "<html></html>"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if !s.Served() || s.Port == 0 || !strings.HasPrefix(s.Base, "http://127.0.0.1:") {
		t.Fatalf("got %+v", s)
	}
	resp, err := http.Get(s.Base + "iframe.html")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("GET iframe.html: got %s", resp.Status)
	}
	resp, err = http.Post(s.Base+"iframe.html", "text/plain", strings.NewReader("x"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("POST: got %s, want 405", resp.Status)
	}
	data, err := s.ReadIndex(context.Background())
	if err != nil || string(data) != `{"v":5,"entries":{}}` {
		t.Errorf("ReadIndex: got %q, %v", data, err)
	}
}

// TestReadIndexHTTP: a running Storybook's index over HTTP; a status
// other than 200 says where index.json is looked for.
func TestReadIndexHTTP(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/ok/index.json" {
			w.Write([]byte(`{"v":5}`))
			return
		}
		http.NotFound(w, r)
	}))
	defer srv.Close()
	s, _ := Open(srv.URL + "/ok/")
	if data, err := s.ReadIndex(context.Background()); err != nil || string(data) != `{"v":5}` {
		t.Errorf("got %q, %v", data, err)
	}
	s, _ = Open(srv.URL + "/old/")
	want := "GET " + srv.URL + "/old/index.json: 404 Not Found (Storybook 8 to 10 serve index.json beside iframe.html)"
	if _, err := s.ReadIndex(context.Background()); err == nil || err.Error() != want {
		t.Errorf("got %v, want %s", err, want)
	}
}
