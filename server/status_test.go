package server_test

import (
	"testing"

	"github.com/toolserver/toolserver/fault"
	linkclient "github.com/toolserver/toolserver/link/client"
	"github.com/toolserver/toolserver/server"
)

// TestKindTable reads the one error table: each kind has its status on
// both envelopes, and the infrastructure column (fault's) is what a
// client's exit code branches on.
func TestKindTable(t *testing.T) {
	for _, tc := range []struct {
		kind   fault.Kind
		status int
		infra  bool
	}{
		{fault.Validation, 400, false},
		{fault.Unauthorized, 401, true},
		{fault.Forbidden, 403, true},
		{fault.NotFound, 404, false},
		{fault.MethodNotAllowed, 405, false},
		{fault.Timeout, 408, true},
		{fault.Conflict, 409, false},
		{fault.TooLarge, 413, true},
		{fault.UnsupportedMedia, 415, false},
		{fault.Unprocessed, 422, false},
		{fault.Internal, 500, true},
		{fault.WriteFailed, 500, false},
		{fault.Unavailable, 503, true},
		{fault.InsufficientStorage, 507, true},
		{"no-such-kind", 500, false},
	} {
		if got := server.Status(tc.kind); got != tc.status {
			t.Errorf("%s: status got %d, want %d", tc.kind, got, tc.status)
		}
		if got := tc.kind.Infrastructure(); got != tc.infra {
			t.Errorf("%s: infrastructure got %v, want %v", tc.kind, got, tc.infra)
		}
	}
	for _, k := range fault.Kinds() {
		if got := server.Status(k); got == 500 && k != fault.Internal && k != fault.WriteFailed {
			t.Errorf("%s: has no row of its own in the table", k)
		}
	}
}

// TestClientReadsTheTable: an answer that names no kind (a proxy's page
// in front of us) reads, on the client, as the kind this table answers
// with its status; write_failed shares 500 with internal, the first row.
func TestClientReadsTheTable(t *testing.T) {
	for _, k := range fault.Kinds() {
		want := k
		if k == fault.WriteFailed {
			want = fault.Internal
		}
		if got := linkclient.KindOfStatus(server.Status(k)); got != want {
			t.Errorf("%s answers %d, which a client reads as %q, want %q", k, server.Status(k), got, want)
		}
	}
}
