// Package dashboard serves the runs dashboard: one static page that
// reads the /v1 control plane with the bearer token the user gives it.
package dashboard

import (
	_ "embed"
	"net/http"
)

//go:embed page/index.html
var page []byte

// Handler serves the dashboard's page at /dashboard. The page holds no
// data: it asks for the token and reads /v1 with it.
func Handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Cache-Control", "no-store")
		w.Header().Set("Content-Security-Policy", "default-src 'self'; img-src 'self' blob:; style-src 'self' 'unsafe-inline'; script-src 'self' 'unsafe-inline'; connect-src 'self'")
		w.Write(page)
	})
}
