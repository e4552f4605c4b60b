package dashboard

import (
	"bytes"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"github.com/toolserver/toolserver/report"
)

// TestPage: the page is one response with the report's viewer inline,
// its one script allowed by its hash alone, and nothing from elsewhere.
func TestPage(t *testing.T) {
	rec := httptest.NewRecorder()
	Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/dashboard", nil))
	body := rec.Body.Bytes()
	if rec.Code != 200 || rec.Header().Get("Content-Type") != "text/html; charset=utf-8" {
		t.Fatalf("got %d %q, want 200 text/html", rec.Code, rec.Header().Get("Content-Type"))
	}
	for _, part := range [][]byte{report.ViewerJS, report.ViewerCSS} {
		if !bytes.Contains(body, part) {
			t.Errorf("the page lacks the viewer's %.30q", part)
		}
	}
	if bytes.Contains(body, []byte("__VIEWER_")) {
		t.Error("a viewer mark is left in the page")
	}
	if n := bytes.Count(body, []byte("<script")); n != 1 {
		t.Errorf("got %d script elements, want 1", n)
	}
	// No network but the server's own: no URL of another origin, no
	// file the page would fetch.
	if m := regexp.MustCompile(`(?i)https?://|\bsrc=|<link|@import`).Find(body); m != nil {
		t.Errorf("the page refers to %q", m)
	}
	policy := rec.Header().Get("Content-Security-Policy")
	if !strings.Contains(policy, "script-src '"+report.ScriptHash(body)+"';") {
		t.Errorf("CSP %q does not allow the page's script by its hash (%s)", policy, report.ScriptHash(body))
	}
	if !strings.Contains(policy, "connect-src 'self'") || !strings.Contains(policy, "img-src blob:") {
		t.Errorf("CSP %q: want connect-src 'self' and img-src blob:", policy)
	}
}

// TestPageWritesTextOnly: nothing of the page (its viewer included) puts
// a string in the DOM as HTML: every string of the server's, a run's
// flow, labels, step reasons, a failed run's error, an abandoned run's
// reason, is text (TestDashboardShowsAStalledRun sees a reason's markup
// shown as typed).
func TestPageWritesTextOnly(t *testing.T) {
	rec := httptest.NewRecorder()
	Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/dashboard", nil))
	if m := regexp.MustCompile(`innerHTML|outerHTML|insertAdjacentHTML|document\.write|\beval\(|new Function|DOMParser|createContextualFragment`).Find(rec.Body.Bytes()); m != nil {
		t.Errorf("the page uses %q", m)
	}
}
