// Package wire is the vocabulary both ends of the link share
// (docs/link-protocol.md): the one type of a file-input object
// (FileInputObject) and its decoders, the file-input declaration GET
// /tools lists (FileInput) with its collect values, members, their roles
// and states, keys, Spelling, the file-input rules both ends decide by
// (SetFileInputs, FileArguments), DecodeBase64, the client-file directive
// of a result (ClientFile), the sentences and codes
// the protocol fixes, the recorder's tool names, and the limits.
//
// It imports nothing of this module, so any package may import it: the
// client and the server end, and the packages that use its limits and
// types (clientfs, clientpath, flow, tool).
package wire
