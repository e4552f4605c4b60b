package server_test

import (
	"testing"

	"github.com/toolserver/toolserver/fault"
	"github.com/toolserver/toolserver/server"
)

// TestKindTable reads the one error table: each kind has its status on
// both envelopes.
func TestKindTable(t *testing.T) {
	for _, tc := range []struct {
		kind   fault.Kind
		status int
	}{
		{fault.Validation, 400},
		{fault.Unauthorized, 401},
		{fault.Forbidden, 403},
		{fault.NotFound, 404},
		{fault.MethodNotAllowed, 405},
		{fault.Timeout, 408},
		{fault.Conflict, 409},
		{fault.TooLarge, 413},
		{fault.UnsupportedMedia, 415},
		{fault.Unprocessed, 422},
		{fault.Internal, 500},
		{fault.WriteFailed, 500},
		{fault.Unavailable, 503},
		{fault.InsufficientStorage, 507},
		{"no-such-kind", 500},
	} {
		if got := server.Status(tc.kind); got != tc.status {
			t.Errorf("%s: status got %d, want %d", tc.kind, got, tc.status)
		}
	}
	for _, k := range fault.Kinds() {
		if got := server.Status(k); got == 500 && k != fault.Internal && k != fault.WriteFailed {
			t.Errorf("%s: has no row of its own in the table", k)
		}
	}
}
