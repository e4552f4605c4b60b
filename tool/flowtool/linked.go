package flowtool

import (
	"context"
	"errors"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/toolserver/toolserver/fault"
	"github.com/toolserver/toolserver/flow"
	flowrun "github.com/toolserver/toolserver/flow/run"
	linkserver "github.com/toolserver/toolserver/link/server"
	"github.com/toolserver/toolserver/tool"
	"github.com/toolserver/toolserver/wire"
)

// linkedCall is what the Prepare hook of flow-execute found in the flow
// file input: the input object, and the members when the client sent them.
type linkedCall struct {
	target  string
	in      wire.FileInputObject
	members *linkserver.Members // nil when the client sent no members field
}

const linkedKey = "link"

// prepareLinked reads a flow input's members before the arguments are checked
// (docs/link-protocol.md, "What the tool-server does with the members"),
// once the arguments a run records are within their caps.
func (t *Tools) prepareLinked(ctx context.Context, call *tool.Call) error {
	a := wire.ReadExecute(call.Args)
	if err := a.Check(); err != nil {
		return capError(err)
	}
	target, in, ok := a.FlowInput()
	if !ok {
		return nil
	}
	lc := &linkedCall{target: target, in: in}
	if in.Members != nil {
		m, err := linkserver.Receive(ctx, in.Members, t.Uploads)
		if err != nil {
			return err
		}
		lc.members = m
		call.Values[tool.SentMembers] = true
	}
	call.Values[linkedKey] = lc
	return nil
}

// capError is the validation error of an argument over its cap.
func capError(err error) error {
	if ae, ok := errors.AsType[*wire.ArgError](err); ok {
		return &fault.Error{Kind: fault.Validation, Field: ae.Field, Message: ae.Message}
	}
	return err
}

// hostCopy reports whether the client's flow file is this machine's file:
// a co-located client, run from disk.
func hostCopy(in wire.FileInputObject) bool {
	return in.Size != nil && in.MtimeMs != nil && tool.SameHostFile(in.Path, *in.Size, *in.MtimeMs)
}

// linkedEntry builds the entry of a linked run from the flow input: its
// bytes, canonical and spelling as the client sent them.
func linkedEntry(lc *linkedCall, name string) (flowrun.Entry, error) {
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
			return flowrun.Entry{}, &fault.Error{Kind: fault.Unprocessed, Field: lc.target, Message: lc.target + ": content is not valid base64"}
		}
		f.Data = b
	}
	stem := strings.TrimSuffix(path.Base(filepath.ToSlash(in.Path)), ".yaml")
	if name == "" {
		name = stem
	}
	return flowrun.Entry{File: f, Name: name, StemFallback: stem}, nil
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
// the members) and handed to the tool as the bytes of a file input
// (linkserver.Source.ToolArgs).
func (t *Tools) linkedCaller(src *linkserver.Source) flowrun.ToolCaller {
	return func(ctx context.Context, name string, args map[string]any) (any, error) {
		inputs, _ := t.toolInfo(name)
		if err := src.ToolArgs(name, inputs, args, ""); err != nil {
			return nil, err
		}
		return t.invokeStep(ctx, name, args)
	}
}
