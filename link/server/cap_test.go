package server

import (
	"errors"
	"strings"
	"testing"

	"github.com/toolserver/toolserver/fault"
	httpserver "github.com/toolserver/toolserver/server"
	"github.com/toolserver/toolserver/wire"
)

// The 32 MiB cap on inline content is on the decoded bytes: 32 MiB + 1
// byte encodes to as many base64 characters as 32 MiB (both fill their
// last group of four), so a check on the text let one byte too many
// through.

// zerosBase64 is the standard base64 of n zero bytes, built without
// encoding them.
func zerosBase64(n int) string {
	return strings.Repeat("A", n/3*4) + []string{"", "AA==", "AAA="}[n%3]
}

// TestCapOnDecodedSize: on the tool-server, a member of each role (flow,
// baseline, tool file) of exactly 32 MiB is kept and one byte more is the 422
// of docs/link-protocol.md (the client's half is link/client's
// TestCapOnDecodedSize). The cases share two texts of 43 MB and run in parallel
// (each holds about 100 MB more under -race).
func TestCapOnDecodedSize(t *testing.T) {
	t.Parallel()
	atCap, over := zerosBase64(wire.MaxFileBytes), zerosBase64(wire.MaxFileBytes+1)
	for _, role := range []string{wire.RoleFlow, wire.RoleBaseline, wire.RoleTool} {
		t.Run(role, func(t *testing.T) {
			t.Parallel()
			receiveAtCap(t, role, atCap, over)
		})
	}
}

// receiveAtCap: a member of role of exactly 32 MiB (atCap, base64) is
// kept, one byte more (over) is the 422 of docs/link-protocol.md
// ("What the tool-server does with the members").
func receiveAtCap(t *testing.T, role, atCap, over string) {
	p := "/client/proj/big-" + role
	member := func(content *string, size int64) wire.Member {
		m := wire.Member{Role: role, Key: p, Path: p, Content: content, Size: &size}
		if role == wire.RoleFlow {
			m.Key, m.Canonical, m.Spelling = wire.Key("/client/proj", "big-flow"), p, &wire.Spelling{State: wire.SpellListed}
		}
		return m
	}
	m := member(&atCap, wire.MaxFileBytes)
	got, err := Receive(t.Context(), []wire.Member{m}, nil)
	if err != nil {
		t.Fatalf("%s member of 32 MiB: got %v, want it kept", role, err)
	}
	if r := got.Get(m.Key); r == nil || !r.HasData || len(r.Data) != wire.MaxFileBytes || r.State != "" {
		t.Errorf("%s member of 32 MiB: got %+v, want its bytes kept", role, r)
	}
	_, err = Receive(t.Context(), []wire.Member{member(&over, wire.MaxFileBytes+1)}, nil)
	var te *fault.Error
	want := `member "` + p + `" is larger than the 32 MiB cap on a file sent to the tool-server`
	if !errors.As(err, &te) || httpserver.Status(te.Kind) != 422 || te.Message != want {
		t.Errorf("%s member of 32 MiB + 1: got %v, want 422 %q", role, err, want)
	}
}
