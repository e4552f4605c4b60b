package client_test

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the run when a goroutine outlives the tests, such as the
// writer of a streamed directory upload.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
