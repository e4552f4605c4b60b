package client

import (
	"fmt"

	"github.com/toolserver/toolserver/internal/printable"
	"github.com/toolserver/toolserver/wire"
)

// FilesLogEnv is the environment variable that turns on the [flow-files] lines
// (docs/link-protocol.md, "Client policy"): with the value 1 a client prints
// one line per member before the call and one per baseline written after it.
// The caller reads the environment and sets CallOptions.FilesLog.
const FilesLogEnv = "ARGENT_FLOW_FILES_LOG"

// memberLogLine is the [flow-files] line of a member: a flow or a style
// file by its canonical, a baseline or a tool file by its key, then how it was sent:
// "inline <bytes>", "upload <bytes>", "missing", "listed" or
// "refused (<reason>)". It never holds the content.
func memberLogLine(m *wire.Member, sent string) string {
	subject := m.Key
	if m.Role == wire.RoleFlow || m.Role == wire.RoleStyle {
		subject = m.Canonical
	}
	return printable.String(fmt.Sprintf("[flow-files] %s %s: %s", m.Role, subject, sent))
}

// writtenLogLine is the line of a baseline the client wrote after the call.
func writtenLogLine(path string) string {
	return printable.String(fmt.Sprintf("[flow-files] baseline %s: written", path))
}

// sentInline, sentUpload, sentRefused are the tails of a member's line.
func sentInline(n int) string       { return fmt.Sprintf("inline %d", n) }
func sentUpload(n int) string       { return fmt.Sprintf("upload %d", n) }
func sentRefused(why string) string { return "refused (" + why + ")" }
