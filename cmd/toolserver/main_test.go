package main

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the run when a goroutine outlives the tests: every server,
// sweeper and browser a command starts ends before the command returns.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
