package client

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/toolserver/toolserver/flow"
	"github.com/toolserver/toolserver/internal/clientfs"
	"github.com/toolserver/toolserver/wire"
)

// toolFileArgs returns the file arguments of a tool: step
// (docs/link-protocol.md, "Tool files"), by the rule both ends share
// (wire.FileArguments): the arguments its tool declares as a file input whose
// path is only that argument ("${<target>}"), whose value is an absolute path
// ending in .png or .yaml in any case. An input whose unwrapWhenSet argument is
// also set stays unread: the tool's own check refuses the call. No other
// argument is ever a file, an absolute .png path that a keyboard step types
// among them. A value absolute only on another system (C:\ on this one) is not
// a path this client can read.
func toolFileArgs(specs []wire.FileInput, args map[string]any) []string {
	var out []string
	for _, target := range wire.FileArguments(specs, args) {
		if v := args[target].(string); filepath.IsAbs(v) {
			out = append(out, v)
		}
	}
	return out
}

// toolFiles sends the file arguments of one tool: step, each path once.
// A tool: flow-execute step has none: the walk follows it as a nested
// flow.
func (c *memberCollector) toolFiles(ctx context.Context, name string, args map[string]any) error {
	if name == flow.ToolFlowExecute {
		return nil
	}
	for _, p := range toolFileArgs(c.st.specs[name], args) {
		if c.toolPaths[p] {
			continue
		}
		c.toolPaths[p] = true
		if err := c.toolMember(ctx, p); err != nil {
			return err
		}
	}
	return nil
}

// notSentToolExt is the refusal of a tool file whose name links to a file
// with another ending.
func notSentToolExt(path string) string {
	return clientfs.LinksToOther(path, "one of "+strings.Join(wire.SentToolExts, ", "))
}

// toolMember sends one tool file by the path as written: missing when
// nothing is there, refused outside the roots, for a name that links to
// a file not ending in .png or .yaml, a directory, a file the client
// cannot read or one over the cap.
func (c *memberCollector) toolMember(ctx context.Context, file string) error {
	m := wire.Member{Role: wire.RoleTool, Key: file, Path: file}
	refuse := func(why string) error {
		m.State, m.Error = wire.StateRefused, why
		c.emit(m, sentRefused(why))
		return nil
	}
	canonical := clientfs.RealPath(file)
	if !c.policy.Serves(canonical) {
		return refuse(c.policy.Outside(file))
	}
	if !wire.HasSentToolExt(canonical) {
		return refuse(notSentToolExt(file))
	}
	fi, err := os.Stat(canonical)
	switch {
	case errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR):
		m.State = wire.StateMissing
		c.emit(m, wire.StateMissing)
		return nil
	case err != nil:
		return refuse(clientfs.ErrorText(err, "stat", canonical))
	case fi.IsDir():
		return refuse(clientfs.EISDIRRead)
	}
	_, sent, err := c.sendBytes(ctx, &m, canonical)
	if err != nil {
		return err
	}
	c.emit(m, sent)
	return nil
}
