package server_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/toolserver/toolserver/device/cdp/cdptest"
)

// TestCrossSiteRequestsRefused: a web page cannot drive a loopback
// server without a token. Its simple POST (text/plain, no preflight) is
// refused by its Origin, a request marked cross-site or same-site by
// Sec-Fetch-Site is refused, a call that is not declared JSON is refused
// whatever its origin, and the device is never touched. The server's own
// origin, and clients that send no such header, pass.
func TestCrossSiteRequestsRefused(t *testing.T) {
	t.Parallel()
	r := newRig(t, "")
	const id = "chromium-cdp-641x481"
	t.Cleanup(func() { cdptest.Stop(t, id) })
	open := fmt.Sprintf(`{"device":%q,"url":%q}`, id, cdptest.PagesURL()+"/app.html")
	for _, tc := range []struct {
		name, method, path, body string
		hdr                      []string
		status                   int
		want                     string
	}{
		{"text/plain from another site", "POST", "/tools/open-url", open,
			[]string{"Content-Type", "text/plain;charset=UTF-8", "Origin", "http://evil.example", "Sec-Fetch-Site", "cross-site"}, 403, "origin"},
		{"JSON from another site", "POST", "/tools/open-url", open,
			[]string{"Origin", "http://evil.example"}, 403, "origin"},
		{"another port of this host", "POST", "/tools/open-url", open,
			[]string{"Origin", "http://127.0.0.1:1", "Sec-Fetch-Site", "same-site"}, 403, "origin"},
		{"a sandboxed page", "POST", "/tools/open-url", open,
			[]string{"Origin", "null"}, 403, "origin"},
		{"cross-site without Origin", "GET", "/tools", "",
			[]string{"Sec-Fetch-Site", "cross-site"}, 403, "Sec-Fetch-Site"},
		{"same-site without Origin", "POST", "/tools/open-url", open,
			[]string{"Sec-Fetch-Site", "same-site"}, 403, "Sec-Fetch-Site"},
		{"text/plain without Origin", "POST", "/tools/open-url", open,
			[]string{"Content-Type", "text/plain"}, 415, "Content-Type: application/json, got Content-Type text/plain"},
		{"no Content-Type", "POST", "/tools/open-url", open,
			[]string{"Content-Type", ""}, 415, "got no Content-Type"},
		{"form", "POST", "/tools/open-url", "device=" + id,
			[]string{"Content-Type", "application/x-www-form-urlencoded"}, 415, "application/json"},
		{"upload from another site", "POST", "/upload", gz(t, 100),
			[]string{"Content-Type", "application/gzip", "Origin", "https://evil.example"}, 403, "origin"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp, body := do(t, tc.method, r.url+tc.path, tc.body, tc.hdr...)
			var e struct{ Error, Error_kind string }
			_ = json.Unmarshal(body, &e)
			if resp.StatusCode != tc.status || !strings.Contains(e.Error, tc.want) {
				t.Fatalf("got %d %s, want %d mentioning %q", resp.StatusCode, body, tc.status, tc.want)
			}
		})
	}
	// Nothing above reached the device.
	_, body := do(t, "POST", r.url+"/tools/list-devices", `{}`)
	if strings.Contains(string(body), id) {
		t.Fatalf("a refused request booted %s: %s", id, body)
	}
	// The server's own origin passes, as do clients that send none (an
	// upload needs no JSON).
	for _, hdr := range [][]string{
		{"Origin", r.url, "Sec-Fetch-Site", "same-origin"},
		{"Origin", strings.ToUpper(r.url[:4]) + r.url[4:]},
		{"Sec-Fetch-Site", "none"},
		{"Sec-Fetch-Mode", "cors", "User-Agent", "node"},
	} {
		if resp, body := do(t, "POST", r.url+"/tools/list-devices", `{}`, hdr...); resp.StatusCode != 200 {
			t.Fatalf("%v: got %d %s, want 200", hdr, resp.StatusCode, body)
		}
	}
	if resp, body := do(t, "POST", r.url+"/upload", gz(t, 100), "Content-Type", "application/gzip"); resp.StatusCode != 200 {
		t.Fatalf("upload: got %d %s, want 200", resp.StatusCode, body)
	}
}
