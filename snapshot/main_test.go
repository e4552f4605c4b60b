package snapshot

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the run when a goroutine outlives the tests: the compare
// workers and the joint decoder's goroutines end before their call returns.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
