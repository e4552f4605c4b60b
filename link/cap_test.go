package link

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolserver/toolserver/internal/clientfs"
	"github.com/toolserver/toolserver/link/wire"
	"github.com/toolserver/toolserver/tool"
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
// baseline, tool file) of exactly 32 MiB is kept and one byte more is the
// seed's 422; on the client, a baseline of the result of exactly 32 MiB
// is written and one byte more refused, writing nothing. The cases share
// two texts of 43 MB and run in parallel (each holds about 100 MB more
// under -race).
func TestCapOnDecodedSize(t *testing.T) {
	t.Parallel()
	atCap, over := zerosBase64(wire.MaxFileBytes), zerosBase64(wire.MaxFileBytes+1)
	for _, role := range []string{wire.RoleFlow, wire.RoleBaseline, wire.RoleTool} {
		t.Run(role, func(t *testing.T) {
			t.Parallel()
			receiveAtCap(t, role, atCap, over)
		})
	}
	t.Run("client", func(t *testing.T) {
		t.Parallel()
		writeBaselineAtCap(t, atCap, over)
	})
}

// receiveAtCap: a member of role of exactly 32 MiB (atCap, base64) is
// kept, one byte more (over) is the seed's 422.
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
	var te *tool.Error
	want := `member "` + p + `" is larger than the 32 MiB cap on a file sent to the tool-server`
	if !errors.As(err, &te) || te.HTTPStatus() != 422 || te.Message != want {
		t.Errorf("%s member of 32 MiB + 1: got %v, want 422 %q", role, err, want)
	}
}

// writeBaselineAtCap: on the client, a baseline of exactly 32 MiB (atCap,
// base64) is written, one byte more (over) refused, writing nothing.
func writeBaselineAtCap(t *testing.T, atCap, over string) {
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(root, "proj", ".argent", "flows", "__baselines__", "big")
	st := &callState{writable: map[string]*clientfs.Policy{dir: nil}}
	for _, tc := range []struct {
		n       int
		zeros   string
		name    string
		refusal string
	}{
		{wire.MaxFileBytes, atCap, "cap.png", ""},
		{wire.MaxFileBytes + 1, over, "over.png", " is larger than the 32 MiB cap on a baseline"},
	} {
		p := filepath.Join(dir, tc.name)
		// The PNG signature and a zero byte are "iVBORw0KGgoA", three
		// groups; the zeros of 9 bytes fewer are the same text without
		// its first three groups.
		written, why := st.writeBaseline(p, "iVBORw0KGgoA"+tc.zeros[12:])
		if tc.refusal != "" {
			if why != p+tc.refusal {
				t.Errorf("baseline of %d bytes: got %q %q, want the refusal %q", tc.n, written, why, p+tc.refusal)
			}
			if _, err := os.Lstat(p); !os.IsNotExist(err) {
				t.Errorf("baseline of %d bytes: got %v, want nothing written", tc.n, err)
			}
			continue
		}
		fi, err := os.Stat(p)
		if why != "" || written != p || err != nil || fi.Size() != int64(tc.n) {
			t.Errorf("baseline of %d bytes: got %q %q (%v), want %s written with %d bytes", tc.n, written, why, err, p, tc.n)
		}
	}
}
