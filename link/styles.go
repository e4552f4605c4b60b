package link

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"

	"github.com/toolserver/toolserver/flow"
	"github.com/toolserver/toolserver/link/wire"
)

// Style members are this project's extension of the protocol, not the
// seed's: a snapshot's stylePath names a CSS file beside the flow file,
// and a run over a link reads it from the members as it reads a run:
// fragment. The client sends each one as a member with role "style",
// keyed exactly as a run: target is (the real directory of the flow file
// that names it, a NUL, the stylePath as written), with path, canonical,
// size, mtimeMs and content, or state missing/refused and error, under
// the client policy of every member. A tool-server that does not know the
// role ignores it (seed, "What the tool-server does with the members"); a
// client that does not send it (Argent's published ones) leaves the step
// an error that says so.

// styleFiles sends the stylePath files of the snapshots of one flow file,
// each resolved beside the flow's real file, once per key. A file is read
// as a local run reads it (flow.Disk.ReadStyleFile) under the call's
// policy: missing, or refused outside the roots, for a .css name that
// links to another kind of file, a directory, a file over the 64 KiB cap
// or one the client cannot read.
func (c *memberCollector) styleFiles(ctx context.Context, canonical string, fl *flow.Flow) error {
	dir := filepath.Dir(canonical)
	for _, target := range fl.StylePaths() {
		key := wire.Key(dir, target)
		if c.styles[key] {
			continue
		}
		c.styles[key] = true
		file, mt := flow.Disk{Policy: c.policy}.ReadStyleFile(dir, target)
		m := wire.Member{Role: wire.RoleStyle, Key: key, Path: file.Path, Canonical: file.Canonical}
		var refused *flow.RefusedError
		switch {
		case errors.As(file.Err, &refused):
			m.State, m.Error = wire.StateRefused, refused.Reason
			c.emit(m, sentRefused(refused.Reason))
			continue
		case file.Err != nil:
			m.State = wire.StateMissing
			c.emit(m, wire.StateMissing)
			continue
		}
		sent, err := c.st.send.place(ctx, &m, file.Canonical, file.Data, mt)
		if err != nil {
			return err
		}
		c.emit(m, sent)
	}
	return nil
}

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

// ReadStyle implements flow.Source: the style member with the key of
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
