package fault_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/toolserver/toolserver/fault"
)

// TestInfrastructureBit: the infrastructure column is what a client's
// exit code branches on.
func TestInfrastructureBit(t *testing.T) {
	for _, tc := range []struct {
		kind  fault.Kind
		infra bool
	}{
		{fault.Validation, false},
		{fault.Unauthorized, true},
		{fault.Forbidden, true},
		{fault.NotFound, false},
		{fault.MethodNotAllowed, false},
		{fault.Timeout, true},
		{fault.Conflict, false},
		{fault.TooLarge, true},
		{fault.UnsupportedMedia, false},
		{fault.Unprocessed, false},
		{fault.Internal, true},
		{fault.WriteFailed, false},
		{fault.Unavailable, true},
		{fault.InsufficientStorage, true},
		{"no-such-kind", false},
	} {
		if got := tc.kind.Infrastructure(); got != tc.infra {
			t.Errorf("%s: infrastructure got %v, want %v", tc.kind, got, tc.infra)
		}
		if got := fault.IsInfrastructure(fault.Classify(tc.kind, errors.New("x"))); got != tc.infra {
			t.Errorf("Classify(%s): marked %v, want %v", tc.kind, got, tc.infra)
		}
	}
}

// TestInfrastructureMark: a marked error reads as the error it marks and
// matches what it matched; nil stays nil; marking twice wraps once.
func TestInfrastructureMark(t *testing.T) {
	base := errors.New("chromium died")
	err := fault.Infrastructure(fmt.Errorf("step 2: %w", base))
	if !errors.Is(err, fault.ErrInfrastructure) || !errors.Is(err, base) || err.Error() != "step 2: chromium died" {
		t.Fatalf("got %v (infrastructure %v, base %v)", err, errors.Is(err, fault.ErrInfrastructure), errors.Is(err, base))
	}
	if again := fault.Infrastructure(err); again != err {
		t.Errorf("marking a marked error again: got a new wrapper")
	}
	if fault.Infrastructure(nil) != nil {
		t.Errorf("Infrastructure(nil): got non-nil")
	}
	if fault.IsInfrastructure(base) {
		t.Errorf("an unmarked error reads as infrastructure")
	}
}
