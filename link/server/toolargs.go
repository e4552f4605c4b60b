package server

import (
	"encoding/base64"
	"errors"

	"github.com/toolserver/toolserver/fault"
	"github.com/toolserver/toolserver/flow"
	"github.com/toolserver/toolserver/wire"
)

// ToolArgs replaces each file argument of a call of toolName, whose file
// inputs are inputs, by a file input holding the bytes the client sent for
// its path, so the tool gets them as from a direct call
// (docs/link-protocol.md, "Tool files"): the registry keeps them in a temp
// file for the length of the call, and a tool that reads only the files
// sent with a call (screenshot-diff on a wildcard bind) takes them. A
// linked run's tool: steps and a recorded step's live call both go
// through it. suffix ends the message of an error that is not a refusal;
// with no suffix the error is returned as it is.
func (s *Source) ToolArgs(toolName string, inputs []wire.FileInput, args map[string]any, suffix string) error {
	// The file arguments by the rule the client used to send them.
	for _, target := range wire.FileArguments(inputs, args) {
		p := args[target].(string)
		data, err := s.ToolFile(p, target, toolName)
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
