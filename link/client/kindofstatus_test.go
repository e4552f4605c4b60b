package client

import (
	"testing"

	"github.com/toolserver/toolserver/fault"
)

// TestKindOfStatus: a status without a kind (a proxy's page) stands for
// the kind the tool-server answers with it, first row first, then the
// statuses only a proxy answers.
func TestKindOfStatus(t *testing.T) {
	for status, want := range map[int]fault.Kind{
		400: fault.Validation, 401: fault.Unauthorized, 403: fault.Forbidden, 408: fault.Timeout, 413: fault.TooLarge, 415: fault.UnsupportedMedia,
		422: fault.Unprocessed, 500: fault.Internal, 503: fault.Unavailable, 507: fault.InsufficientStorage,
		407: fault.Unauthorized, 502: fault.Unavailable, 504: fault.Unavailable,
		418: fault.Validation, 599: fault.Internal, 200: "", 302: "",
	} {
		if got := KindOfStatus(status); got != want {
			t.Errorf("KindOf(%d): got %q, want %q", status, got, want)
		}
	}
}
