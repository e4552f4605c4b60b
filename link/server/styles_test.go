package server_test

import (
	"encoding/base64"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolserver/toolserver/flow"
	"github.com/toolserver/toolserver/link/server"
	"github.com/toolserver/toolserver/wire"
)

var listed = &wire.Spelling{State: wire.SpellListed}

func b64(b []byte) string { return base64.StdEncoding.EncodeToString(b) }

// TestStyleNotSent: a client that sends members but no style member (one
// that does not know this extension, such as Argent's) leaves the
// stylePath missing, with a message that says why and what to do.
func TestStyleNotSent(t *testing.T) {
	canonical := "/work/proj/.argent/flows/main.yaml"
	content := b64([]byte("steps:\n  - snapshot: { name: a, stylePath: capture.css }\n"))
	members := []wire.Member{{Role: wire.RoleFlow, Key: wire.Key("/work/proj/.argent/flows", "other.yaml"), Path: "/work/proj/.argent/flows/other.yaml",
		Canonical: "/work/proj/.argent/flows/other.yaml", Spelling: listed, Content: &content}}
	m, err := server.Receive(t.Context(), members, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, src := range []*server.Source{server.NewSource(m), server.NewSource(nil)} {
		_, err = src.ReadStyle(filepath.Dir(canonical), "capture.css")
		var notSent *server.StyleNotSentError
		if !errors.As(err, &notSent) || !flow.IsMissing(err) {
			t.Fatalf("ReadStyle: got %v, want a *StyleNotSentError that IsMissing", err)
		}
		want := "the client sent no file for /work/proj/.argent/flows/capture.css with the call: stylePath files travel as members only from toolserver's own client"
		if !strings.HasPrefix(err.Error(), want) || !strings.Contains(err.Error(), "style: |") {
			t.Errorf("message: got %q, want it to start %q and name style: |", err, want)
		}
	}
}
