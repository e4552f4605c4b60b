//go:build unix

package client_test

import (
	"path/filepath"
	"syscall"
	"testing"

	"github.com/toolserver/toolserver/link/client"
	"github.com/toolserver/toolserver/wire"
)

// TestFIFOIsRefused: a pipe named like a flow is refused without being
// opened (opening it would wait for a writer forever).
func TestFIFOIsRefused(t *testing.T) {
	f := newFixture(t)
	s := newStub(t)
	pipe := filepath.Join(f.flows, "pipe.yaml")
	if err := syscall.Mkfifo(pipe, 0o644); err != nil {
		t.Fatal(err)
	}
	f.put("main.yaml", "steps:\n  - run: pipe\n")
	in := f.run(s, "main.yaml", nil, client.CallOptions{})
	assertJSON(t, "members", in["members"], []wire.Member{
		stateOf(flowMember(f.flows, "pipe.yaml", pipe, listed), wire.StateRefused, pipe+" is not a regular file"),
	})
}
