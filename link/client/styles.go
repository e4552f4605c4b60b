package client

import (
	"context"
	"errors"
	"path/filepath"

	"github.com/toolserver/toolserver/flow"
	flowrun "github.com/toolserver/toolserver/flow/run"
	"github.com/toolserver/toolserver/wire"
)

// Style members are this project's extension of the protocol
// (docs/link-protocol.md has no such role): a snapshot's stylePath names a CSS
// file beside the flow file, and a run over a link reads it from the members as
// it reads a run: fragment. The client sends each one as a member with role
// "style", keyed exactly as a run: target is (the real directory of the flow
// file that names it, a NUL, the stylePath as written), with path, canonical,
// size, mtimeMs and content, or state missing/refused and error, under the
// client policy of every member. A tool-server that does not know the role
// ignores it (docs/link-protocol.md, "What the tool-server does with the
// members"); a client that does not send it (Argent's published ones) leaves
// the step an error that says so.

// styleFiles sends the stylePath files of the snapshots of one flow file,
// each resolved beside the flow's real file, once per key. A file is read
// as a local run reads it (flowrun.Disk.ReadStyleFile) under the call's
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
		file, mt := flowrun.Disk{Policy: c.policy}.ReadStyleFile(dir, target)
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
