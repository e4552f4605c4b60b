package server

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/http"
)

// requestIDHeader names the id of a request in its answer, so a user can
// quote it and an operator find its log lines.
const requestIDHeader = "X-Request-Id"

type requestIDKey struct{}

// withRequestID gives each request an id of its own: in its context, in
// the X-Request-Id header of its answer, in the access log line and in
// the log line and the answer of an internal fault. An id a client or a
// proxy sends is not taken, so a log line never carries text from outside.
func withRequestID(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := newRequestID()
		w.Header().Set(requestIDHeader, id)
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), requestIDKey{}, id)))
	})
}

// newRequestID returns 16 random hex digits: unique enough to find one
// request in a log, short enough to read out.
func newRequestID() string {
	var b [8]byte
	_, _ = rand.Read(b[:]) // never fails (crypto/rand)
	return hex.EncodeToString(b[:])
}

// requestID returns the id withRequestID gave the request of ctx.
func requestID(ctx context.Context) string {
	id, _ := ctx.Value(requestIDKey{}).(string)
	return id
}
