// Package wire is the vocabulary both ends of the link share
// (docs/link-protocol.md): the one type of a file-input object
// (FileInputObject) and its decoders, the file-input declaration GET
// /tools lists (FileInput) with its collect values, members, their roles
// and states, keys, Spelling, the file-input rules both ends decide by
// (SetFileInputs, FileArguments), DecodeBase64, the client-file directive
// of a result (ClientFile), the sentences and codes
// the protocol fixes, the recorder's tool names, the limits, and the
// grammar of what a tunnel exposes (Target, ParseTargets, Match).
//
// It is the ground floor: it imports only internal/clientpath (whose rule
// IsAbs the file-input rules use), so any package may import it: the
// client and the server end, the tunnel, and the packages that use its
// limits and types (clientfs, flow, tool).
package wire
