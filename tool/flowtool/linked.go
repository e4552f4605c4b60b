package flowtool

import (
	"context"
	"encoding/base64"
	"errors"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/toolserver/toolserver/fault"
	"github.com/toolserver/toolserver/flow"
	"github.com/toolserver/toolserver/flow/run"
	"github.com/toolserver/toolserver/link/server"
	"github.com/toolserver/toolserver/tool"
	"github.com/toolserver/toolserver/tool/flowtool/flowargs"
	"github.com/toolserver/toolserver/wire"
)

// linkedCall is what the Prepare hook of flow-execute found in the flow
// file input: the input object, and the members when the client sent them.
type linkedCall struct {
	target  string
	in      wire.FileInputObject
	members *server.Members // nil when the client sent no members field
}

const linkedKey = "link"

// prepareLinked reads a flow input's members before the arguments are checked
// (docs/link-protocol.md, "What the tool-server does with the members"),
// once the arguments a run records are within their caps.
func (t *Tools) prepareLinked(ctx context.Context, call *tool.Call) error {
	if err := flowargs.Check(call.Args); err != nil {
		return err
	}
	target, in, ok := flowargs.FlowInput(call.Args)
	if !ok {
		return nil
	}
	lc := &linkedCall{target: target, in: in}
	if in.Members != nil {
		m, err := server.Receive(ctx, in.Members, t.Uploads)
		if err != nil {
			return err
		}
		lc.members = m
	}
	call.Values[linkedKey] = lc
	return nil
}

// hostCopy reports whether the client's flow file is this machine's file:
// a co-located client, run from disk.
func hostCopy(in wire.FileInputObject) bool {
	return in.Size != nil && in.MtimeMs != nil && tool.SameHostFile(in.Path, *in.Size, *in.MtimeMs)
}

// linkedEntry builds the entry of a linked run from the flow input: its
// bytes, canonical and spelling as the client sent them.
func linkedEntry(lc *linkedCall, name string) (run.Entry, error) {
	in := lc.in
	canonical := in.Canonical
	if canonical == "" {
		canonical = in.Path
	}
	sp := wire.Spelling{State: wire.SpellListed}
	if in.Spelling != nil {
		sp = *in.Spelling
	}
	f := &flow.File{Path: in.Path, Canonical: canonical, Spelling: sp}
	if in.Content == nil {
		f.Err = &flow.OpenError{Path: canonical, Err: os.ErrNotExist}
	} else {
		b, err := wire.DecodeBase64(*in.Content)
		if err != nil {
			return run.Entry{}, &fault.Error{Kind: fault.Unprocessed, Field: lc.target, Message: lc.target + ": content is not valid base64"}
		}
		f.Data = b
	}
	stem := strings.TrimSuffix(path.Base(filepath.ToSlash(in.Path)), ".yaml")
	if name == "" {
		name = stem
	}
	return run.Entry{File: f, Name: name, StemFallback: stem}, nil
}

// toolInfo tells pre-validation what the server's tools declare.
func (t *Tools) toolInfo(name string) ([]wire.FileInput, bool) {
	tl, ok := t.Registry.Get(name)
	if !ok {
		return nil, false
	}
	return tl.FileInputs, true
}

// linkedCaller calls tools for a linked run: each file argument is looked
// up by the path as written (a baseline written earlier in the call, then
// the members) and handed to the tool as the bytes of a file input.
func (t *Tools) linkedCaller(src *server.Source) run.ToolCaller {
	return func(ctx context.Context, name string, args map[string]any) (any, error) {
		if err := t.memberFiles(src, name, args, ""); err != nil {
			return nil, err
		}
		return t.invokeStep(ctx, name, args)
	}
}

// memberFiles replaces each file argument of a call of toolName by a file input
// holding the bytes the client sent for its path, so the tool gets them as from
// a direct call (docs/link-protocol.md, "Tool files"): the registry keeps them
// in a temp file for the length of the call, and a tool that reads only the
// files sent with a call (screenshot-diff on a wildcard bind) takes them.
// suffix ends an error's message.
func (t *Tools) memberFiles(src *server.Source, toolName string, args map[string]any, suffix string) error {
	inputs, _ := t.toolInfo(toolName)
	// The file arguments by the rule the client used to send them.
	for _, target := range wire.FileArguments(inputs, args) {
		p := args[target].(string)
		data, err := src.ToolFile(p, target, toolName)
		if err != nil {
			var refused *flow.RefusedError
			if errors.As(err, &refused) || suffix == "" {
				return err
			}
			return &fault.Error{Kind: fault.Validation, Field: "args", Message: err.Error() + suffix}
		}
		args[target] = memberInput(p, data)
	}
	return nil
}

// memberInput is a file input at the client's path with data as its
// content. Its mtimeMs of -1 matches no real file, so the registry never
// takes a file of this machine that has the same path for it.
func memberInput(path string, data []byte) wire.FileInputObject {
	size, mtime := int64(len(data)), float64(-1)
	content := base64.StdEncoding.EncodeToString(data)
	return wire.FileInputObject{ArgentFileInput: true, Path: path, Size: &size, MtimeMs: &mtime, Content: &content}
}
