package client

import (
	"context"
	"fmt"
	"testing"

	"github.com/toolserver/toolserver/fault"
)

// TestNotRun: only a call that was never sent, or that the tool-server
// refused before running it, may go to another tool-server.
func TestNotRun(t *testing.T) {
	t.Parallel()
	_, unreachable := NewClient("http://127.0.0.1:1", "", nil).Tools(context.Background())
	for _, tc := range []struct {
		name string
		err  error
		want bool
	}{
		{"unreachable", unreachable, true},
		{"draining", &CallError{Status: 503, Code: "DRAINING"}, true},
		{"queue full", fmt.Errorf("wrapped: %w", &CallError{Status: 503, Code: "QUEUE_FULL"}), true},
		{"chromium down", &CallError{Status: 503, Kind: "unavailable"}, false},
		{"closed mid-call", &ClosedError{Tool: "flow-execute"}, false},
		{"a failed flow", fault.Infrastructure(fmt.Errorf("boom")), false},
	} {
		if got := NotRun(tc.err); got != tc.want {
			t.Errorf("%s: NotRun(%v) = %v, want %v", tc.name, tc.err, got, tc.want)
		}
	}
}
