package server_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/toolserver/toolserver/server"
)

// TestMCPRouteGuarded: /mcp is served by Config.MCP, every method of the
// streamable transport (POST, GET for the event stream, DELETE), behind
// the token, the Host guard and the cross-site guard of every route; the
// JSON-only rule of POST /tools/{name} is not applied to it (the SDK
// checks its own content type).
func TestMCPRouteGuarded(t *testing.T) {
	t.Parallel()
	var (
		mu      sync.Mutex
		reached []string
	)
	mcp := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		reached = append(reached, r.Method)
		mu.Unlock()
		w.WriteHeader(http.StatusAccepted)
	})
	ts := httptest.NewServer(server.New(server.Config{Addr: "127.0.0.1:0", Token: "s3cret", MCP: mcp}).Handler())
	t.Cleanup(ts.Close)
	const bearer = "Bearer s3cret"
	for _, tc := range []struct {
		name, method string
		hdr          []string
		status       int
	}{
		{"no token", "POST", []string{"Content-Type", "application/json"}, 401},
		{"bad token", "GET", []string{"Authorization", "Bearer nope", "Accept", "text/event-stream"}, 401},
		{"another origin", "POST", []string{"Authorization", bearer, "Content-Type", "application/json", "Origin", "http://evil.example"}, 403},
		{"cross-site", "POST", []string{"Authorization", bearer, "Content-Type", "application/json", "Sec-Fetch-Site", "cross-site"}, 403},
		{"a rebound name", "POST", []string{"Authorization", bearer, "Content-Type", "application/json", "Host", "evil.example"}, 403},
		{"post", "POST", []string{"Authorization", bearer, "Content-Type", "application/json", "Accept", "application/json, text/event-stream"}, 202},
		{"event stream", "GET", []string{"Authorization", bearer, "Accept", "text/event-stream"}, 202},
		{"end session", "DELETE", []string{"Authorization", bearer}, 202},
	} {
		resp, body := do(t, tc.method, ts.URL+"/mcp", `{"jsonrpc":"2.0","id":1,"method":"ping"}`, tc.hdr...)
		if resp.StatusCode != tc.status {
			t.Errorf("%s: got %d %s, want %d", tc.name, resp.StatusCode, body, tc.status)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if got := strings.Join(reached, " "); got != "POST GET DELETE" {
		t.Errorf("the MCP handler got %q, want POST GET DELETE", got)
	}
	// Without Config.MCP there is no /mcp.
	plain := httptest.NewServer(server.New(server.Config{Addr: "127.0.0.1:0"}).Handler())
	t.Cleanup(plain.Close)
	if resp, body := do(t, "POST", plain.URL+"/mcp", `{}`, "Content-Type", "application/json"); resp.StatusCode != 404 {
		t.Errorf("no MCP: got %d %s, want 404", resp.StatusCode, body)
	}
}
