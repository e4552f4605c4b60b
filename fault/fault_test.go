package fault_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/toolserver/toolserver/fault"
)

// TestClassify: an error of a kind with the infrastructure bit is marked
// as the machinery's failure, any other is left as it is.
func TestClassify(t *testing.T) {
	for _, k := range append(fault.Kinds(), "no-such-kind") {
		err := errors.New("x")
		if got := fault.IsInfrastructure(fault.Classify(k, err)); got != k.Infrastructure() {
			t.Errorf("Classify(%s): marked %v, want %v", k, got, k.Infrastructure())
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
