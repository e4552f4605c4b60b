package tool_test

import (
	"testing"

	"github.com/toolserver/toolserver/tool"
)

// TestKindTable reads the one error table both ways: each kind has its
// status, a status without a kind (a proxy's page) stands for the kind of
// the table's first row with it, and the infrastructure column is what a
// client's exit code branches on.
func TestKindTable(t *testing.T) {
	for _, tc := range []struct {
		kind   tool.Kind
		status int
		infra  bool
	}{
		{tool.KindValidation, 400, false},
		{tool.KindUnauthorized, 401, true},
		{tool.KindForbidden, 403, true},
		{tool.KindNotFound, 404, false},
		{tool.KindMethodNotAllowed, 405, false},
		{tool.KindTimeout, 408, true},
		{tool.KindConflict, 409, false},
		{tool.KindTooLarge, 413, true},
		{tool.KindUnsupportedMedia, 415, false},
		{tool.KindUnprocessed, 422, false},
		{tool.KindInternal, 500, true},
		{tool.KindWriteFailed, 500, false},
		{tool.KindUnavailable, 503, true},
		{tool.KindInsufficientStorage, 507, true},
		{"no-such-kind", 500, false},
	} {
		if got := tc.kind.Status(); got != tc.status {
			t.Errorf("%s: status got %d, want %d", tc.kind, got, tc.status)
		}
		if got := tc.kind.Infrastructure(); got != tc.infra {
			t.Errorf("%s: infrastructure got %v, want %v", tc.kind, got, tc.infra)
		}
	}
	for status, want := range map[int]tool.Kind{
		400: tool.KindValidation, 401: tool.KindUnauthorized, 403: tool.KindForbidden, 408: tool.KindTimeout, 413: tool.KindTooLarge, 415: tool.KindUnsupportedMedia,
		422: tool.KindUnprocessed, 500: tool.KindInternal, 503: tool.KindUnavailable, 507: tool.KindInsufficientStorage,
		407: tool.KindUnauthorized, 502: tool.KindUnavailable, 504: tool.KindUnavailable,
		418: tool.KindValidation, 599: tool.KindInternal, 200: "", 302: "",
	} {
		if got := tool.KindOf(status); got != want {
			t.Errorf("KindOf(%d): got %q, want %q", status, got, want)
		}
	}
	for _, tc := range []struct {
		kind     tool.Kind
		internal bool
	}{{tool.KindInternal, true}, {"", true}, {"made-up", true}, {tool.KindWriteFailed, false}, {tool.KindValidation, false}} {
		if got := (&tool.Error{Kind: tc.kind}).Internal(); got != tc.internal {
			t.Errorf("Internal() of kind %q: got %v, want %v", tc.kind, got, tc.internal)
		}
	}
}
