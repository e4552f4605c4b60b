package link

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolserver/toolserver/flow"
	"github.com/toolserver/toolserver/internal/clientfs"
	"github.com/toolserver/toolserver/server"
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
	atCap, over := zerosBase64(MaxFileBytes), zerosBase64(MaxFileBytes+1)
	for _, role := range []string{RoleFlow, RoleBaseline, RoleTool} {
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
	member := func(content *string, size int64) Member {
		m := Member{Role: role, Key: p, Path: p, Content: content, Size: &size}
		if role == RoleFlow {
			m.Key, m.Canonical, m.Spelling = Key("/client/proj", "big-flow"), p, &flow.Spelling{State: flow.SpellListed}
		}
		return m
	}
	m := member(&atCap, MaxFileBytes)
	got, err := Receive(t.Context(), []Member{m}, nil)
	if err != nil {
		t.Fatalf("%s member of 32 MiB: got %v, want it kept", role, err)
	}
	if r := got.Get(m.Key); r == nil || !r.HasData || len(r.Data) != MaxFileBytes || r.State != "" {
		t.Errorf("%s member of 32 MiB: got %+v, want its bytes kept", role, r)
	}
	_, err = Receive(t.Context(), []Member{member(&over, MaxFileBytes+1)}, nil)
	var te *tool.Error
	want := `member "` + p + `" is larger than the 32 MiB cap on a file sent to the tool-server`
	if !errors.As(err, &te) || server.Status(te.Kind) != 422 || te.Message != want {
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
		{MaxFileBytes, atCap, "cap.png", ""},
		{MaxFileBytes + 1, over, "over.png", " is larger than the 32 MiB cap on a baseline"},
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
