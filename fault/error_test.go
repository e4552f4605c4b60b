package fault_test

import (
	"testing"

	"github.com/toolserver/toolserver/fault"
)

// TestInternal: an internal fault of ours, or a kind the table does not
// know, never reaches the client verbatim.
func TestInternal(t *testing.T) {
	for _, tc := range []struct {
		kind     fault.Kind
		internal bool
	}{{fault.Internal, true}, {"", true}, {"made-up", true}, {fault.WriteFailed, false}, {fault.Validation, false}} {
		if got := (&fault.Error{Kind: tc.kind}).Internal(); got != tc.internal {
			t.Errorf("Internal() of kind %q: got %v, want %v", tc.kind, got, tc.internal)
		}
	}
}
