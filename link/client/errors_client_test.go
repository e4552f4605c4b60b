package client_test

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"testing"

	"github.com/toolserver/toolserver/fault"
	"github.com/toolserver/toolserver/link/client"
	"github.com/toolserver/toolserver/link/linktest"
)

// TestCallErrorsClassified: what the link client returns matches
// fault.ErrInfrastructure exactly when the machinery failed (the server
// is unreachable, refuses the token, the stream breaks or is not the
// protocol, a proxy answers) and not when the call itself was refused
// (a rejected flow, a bad argument), whatever the status beside it.
func TestCallErrorsClassified(t *testing.T) {
	for _, tc := range []struct {
		name   string
		answer func(w http.ResponseWriter, body []byte)
		infra  bool
	}{
		{"rejected flow in the stream", func(w http.ResponseWriter, body []byte) {
			linktest.Stream(w, `{"event":"error","error":"step 1","error_code":"FLOW_FILE_INVALID","error_kind":"validation"}`)
		}, false},
		{"rejected flow with Argent's 500", func(w http.ResponseWriter, body []byte) {
			linktest.WriteJSON(w, 500, map[string]any{"error": "[Tool:flow-execute] This flow uses run:", "error_code": "FLOW_FILE_INVALID", "error_kind": "validation"})
		}, false},
		{"bad argument", func(w http.ResponseWriter, body []byte) {
			linktest.WriteJSON(w, 400, map[string]any{"error": "x: required", "error_kind": "validation"})
		}, false},
		{"member fails a check", func(w http.ResponseWriter, body []byte) {
			linktest.WriteJSON(w, 422, map[string]any{"error": "bad member", "error_kind": "unprocessable"})
		}, false},
		{"error line without a kind", func(w http.ResponseWriter, body []byte) {
			linktest.Stream(w, `{"event":"error"}`)
		}, false},
		{"internal fault in the stream", func(w http.ResponseWriter, body []byte) {
			linktest.Stream(w, `{"event":"progress","data":{}}`, `{"event":"error","error":"internal error (request 1)","error_kind":"internal"}`)
		}, true},
		{"token refused", func(w http.ResponseWriter, body []byte) {
			linktest.WriteJSON(w, 401, map[string]any{"error": "bad bearer token", "error_code": "UNAUTHORIZED", "error_kind": "unauthorized"})
		}, true},
		{"Chromium unavailable", func(w http.ResponseWriter, body []byte) {
			linktest.WriteJSON(w, 503, map[string]any{"error": "chromium not found", "error_kind": "unavailable"})
		}, true},
		{"proxy's gateway page", func(w http.ResponseWriter, body []byte) {
			w.WriteHeader(502)
			fmt.Fprint(w, "<html>bad gateway</html>")
		}, true},
		{"another server's kind on a 403", func(w http.ResponseWriter, body []byte) {
			linktest.WriteJSON(w, 403, map[string]any{"error": "no", "error_kind": "something-else"})
		}, true},
		{"stream line not JSON", func(w http.ResponseWriter, body []byte) {
			linktest.Stream(w, `{"event":"progress","data":{}}`, `<html>`)
		}, true},
		{"stream ends without a result", func(w http.ResponseWriter, body []byte) {
			linktest.Stream(w, `{"event":"progress","data":{}}`)
		}, true},
		{"answer not JSON", func(w http.ResponseWriter, body []byte) {
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, "<html>")
		}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newStub(t)
			s.Answer = tc.answer
			_, err := s.Client("").Call(t.Context(), "keyboard", map[string]any{}, client.CallOptions{})
			if err == nil {
				t.Fatal("got no error")
			}
			if got := errors.Is(err, fault.ErrInfrastructure); got != tc.infra {
				t.Fatalf("errors.Is(%q, ErrInfrastructure): got %v, want %v", err, got, tc.infra)
			}
		})
	}
}

// TestUnreachableServerIsInfrastructure: nothing listens at the URL.
func TestUnreachableServerIsInfrastructure(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	_, err = client.NewClient("http://"+addr, "", nil).Call(t.Context(), "keyboard", map[string]any{}, client.CallOptions{})
	if !errors.Is(err, fault.ErrInfrastructure) {
		t.Fatalf("got %v, want an error matching ErrInfrastructure", err)
	}
}
