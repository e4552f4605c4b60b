package wire

// The sentences and codes the protocol fixes, which clients and users
// read: one owner, so the end that writes one and the end that reads it
// cannot drift apart.

// The sentences a tool-server answers when a client that sends no members
// meets a tool-server that reads them (docs/link-protocol.md, "Older
// clients and tool-servers").
const (
	OlderRun      = "This tool-server runs run: steps for a client that sends their fragments with the call. Update the argent CLI or MCP adapter on the client."
	OlderSnapshot = "This tool-server runs snapshot: steps for a client that sends their baselines with the call. Update the argent CLI or MCP adapter on the client."
	OlderNested   = "This tool-server runs tool: flow-execute steps that name a flow with name, for a client that sends those flows with the call. Update the argent CLI or MCP adapter on the client."
	OlderToolFile = "This tool-server runs tool: steps with file arguments for a client that sends them with the call. Update the argent CLI or MCP adapter on the client."
)

// CodeFlowFileInvalid is Argent's error code of a flow file a tool
// refuses: one it cannot read, parse or run, and one the tool-server
// rejects before the first step (docs/link-protocol.md, "What the
// tool-server does with the members").
const CodeFlowFileInvalid = "FLOW_FILE_INVALID"

// The error codes of a tool-server that refused a call before running
// anything: it is stopping, or its queue is full. Only such a call (or one
// never sent) may go to another tool-server.
const (
	CodeDraining  = "DRAINING"
	CodeQueueFull = "QUEUE_FULL"
)

// NotSent is the text of a call that never reached the tool-server.
const NotSent = "the call was not sent"

// ClosedBeforeResult is the error of a call whose connection closed before its
// result arrived (docs/link-protocol.md, "The call"), a format of the tool's
// name and the cause: the call is never sent again, since the tool may have
// run.
const ClosedBeforeResult = "The connection to the tool-server closed before %s finished (%v). The tool may have run; check its effect before you run it again."

// RefusedByClient is the reason of a member refused without one.
const RefusedByClient = "refused by the client"
