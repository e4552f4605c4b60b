package run

import (
	"fmt"

	"github.com/toolserver/toolserver/fault"
	"github.com/toolserver/toolserver/flow"
	"github.com/toolserver/toolserver/internal/clientpath"
	"github.com/toolserver/toolserver/wire"
)

// CheckNameRoot validates the flow a tool call names by a flow name and a
// project_root, with the messages and codes Argent's tools give: a name of
// letters, digits, _ and - (FLOW_NAME_INVALID), and an absolute root
// without ".." segments (FLOW_PROJECT_ROOT_INVALID). flow-execute and the
// recorder's tools both name their flow file this way, so they share it.
func CheckNameRoot(name, root string) error {
	invalid := func(code, field, format string, v ...any) error {
		return &fault.Error{Kind: fault.Validation, Code: code, Field: field, Message: fmt.Sprintf(format, v...)}
	}
	if !flow.ValidName(name) {
		return invalid("FLOW_NAME_INVALID", wire.ArgName, "%s", flow.InvalidName(name))
	}
	if !clientpath.IsAbs(root) {
		return invalid("FLOW_PROJECT_ROOT_INVALID", wire.ArgProjectRoot, "project_root must be an absolute path (got %q). Pass the absolute path to the project root directory — the same cwd the calling agent is working in.", root)
	}
	if clientpath.HasDotDot(root) {
		return invalid("FLOW_PROJECT_ROOT_INVALID", wire.ArgProjectRoot, "project_root must not contain \"..\" segments (got %q).", root)
	}
	return nil
}
