package server

import (
	"fmt"
	"io/fs"
	"strings"

	"github.com/toolserver/toolserver/flow"
	"github.com/toolserver/toolserver/wire"
)

// Style members (role "style", this project's extension of the protocol;
// see link/client/styles.go) on the tool-server: a stylePath reads from the
// members as a run: fragment does.

// StyleNotSentError is a stylePath whose file the client did not send:
// its client does not know style members.
type StyleNotSentError struct {
	// Path is the directory of the flow file, a separator and the
	// stylePath as written.
	Path string
}

func (e *StyleNotSentError) Error() string {
	return fmt.Sprintf("the client sent no file for %s with the call: stylePath files travel as members only from toolserver's own client (toolserver flow run --link), not from Argent's published CLI or MCP adapter; put the CSS inline with style: |, or run the flow with toolserver's client", e.Path)
}

// Unwrap makes the file count as missing (flow.IsMissing).
func (e *StyleNotSentError) Unwrap() error { return fs.ErrNotExist }

// ReadStyle implements run.Source: the style member with the key of
// target beside dir. A missing member is worded as the client's OS words
// a missing file, as for a run: fragment; no member at all is a
// *StyleNotSentError.
func (s *Source) ReadStyle(dir, target string) ([]byte, error) {
	r := s.m.Get(wire.Key(dir, target))
	switch {
	case r == nil || r.Role != wire.RoleStyle:
		return nil, &StyleNotSentError{Path: strings.TrimRight(dir, `/\`) + "/" + target}
	case r.State == wire.StateRefused:
		return nil, &flow.RefusedError{Reason: r.Error}
	case r.HasData:
		return r.Data, nil
	}
	return nil, notExist(r.Canonical)
}
