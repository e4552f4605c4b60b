// Package wire is the vocabulary both ends of the link share
// (docs/link-protocol.md): the one type of a file-input object
// (FileInputObject) and its decoders, the file-input declaration GET
// /tools lists (FileInput) with its collect values, members, their roles
// and states, keys, Spelling, the file-input rules both ends decide by
// (SetFileInputs, FileArguments), DecodeBase64, the client-file directive
// of a result (ClientFile), the sentences and codes
// the protocol fixes, the recorder's tool names, the limits, the
// grammar of what a tunnel exposes (Target, ParseTargets, Match), and the
// run request itself: flow-execute's arguments (ExecuteArgs), their names,
// caps and decoders, which the client, the tool, the plane and the readers
// of a nested flow share.
//
// It is the ground floor: it imports only internal/clientpath (whose rule
// IsAbs the file-input rules use), so any package may import it: the
// client and the server end, the tunnel, and the packages that use its
// limits and types (clientfs, flow, tool).
package wire
