// Package dashboard serves the runs dashboard: one static page that
// reads the /v1 control plane with the bearer token the user gives it.
package dashboard

import (
	_ "embed"
	"net/http"
	"sync"

	"github.com/toolserver/toolserver/report"
)

//go:embed page/index.html
var source []byte

// page is index.html with the report's snapshot viewer inlined: the page
// is one response, because every other path of the server needs the
// bearer token, which a <script src> or <link> cannot send. Made on first
// use, not before main, which every command pays (docs/performance.md,
// "Start-up").
var page = sync.OnceValue(func() []byte { return report.Inline(source) })

// csp is the page's Content-Security-Policy: its one inline script by
// its hash (no other script runs, inline or not), its own style, images
// from the server or the blob: URLs of the images it fetched with the
// token, requests to its own origin only, and no framing. Hashed on first
// use, as page is made.
var csp = sync.OnceValue(func() string {
	return "default-src 'none'; script-src '" + report.ScriptHash(page()) + "'; style-src 'unsafe-inline'; img-src blob:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
})

// Handler serves the dashboard's page at /dashboard. The page holds no
// data: it asks for the token and reads /v1 with it.
func Handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Cache-Control", "no-store")
		w.Header().Set("Content-Security-Policy", csp())
		w.Header().Set("X-Content-Type-Options", "nosniff")
		w.Header().Set("Referrer-Policy", "no-referrer")
		w.Write(page())
	})
}
