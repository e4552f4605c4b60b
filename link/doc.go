// Package link is the link of the Argent tool-server protocol
// (docs/link-protocol.md): a flow run whose files (the flow, its run:
// fragments, nested flows, baselines and tool file arguments) stay on the
// client and travel with the call as members. The directory holds three
// packages:
//
//   - wire: the vocabulary both ends share (the file-input object,
//     members, roles, keys, spelling, the file-input rules, the sentences
//     and codes the protocol fixes, the recorder's tool names, the
//     limits). It imports nothing of this module.
//   - link/client: the client end. It collects and sends the members,
//     makes the call, reads its stream and writes the baselines of the
//     result. It never imports link/server, the HTTP server or the store.
//   - link/server: the tool-server end. It reads the members, pre-validates
//     a flow and answers the runner from the members. It never imports
//     link/client.
//
// The two ends agree because they share wire; the agreement tests of
// link/client (TestSourcesAgree, TestStyleSourcesAgree) run a flow from
// the disk and from the members the client sent, as the server receives
// them, and compare.
//
// Each section of the protocol is one file:
//
//	docs/link-protocol.md ("`collect` in `GET /tools`")                   wire/fileinput.go
//	docs/link-protocol.md ("The flow file input")                         link/client/input.go
//	docs/link-protocol.md ("Members")                                     link/client/members.go
//	docs/link-protocol.md ("Spelling")                                    wire/spelling.go
//	docs/link-protocol.md ("Client policy")                               internal/clientfs/policy.go
//	docs/link-protocol.md ("Baselines")                                   link/client/baselines.go
//	docs/link-protocol.md ("Tool files")                                  link/client/toolfiles.go
//	docs/link-protocol.md ("The call")                                    link/client/client.go
//	docs/link-protocol.md ("What the tool-server does with the members")  link/server/receive.go
//	docs/link-protocol.md ("Baselines in the result")                     link/client/apply.go
//	docs/link-protocol.md ("Members of a recorded step")                  link/client/recordstep.go
//	docs/link-protocol.md ("The `x-argent-linked` header")                tool/recordtool/recording.go
//	docs/link-protocol.md ("Older clients and tool-servers")              link/server/older.go
//
// Beside those files: the object of "The flow file input" is
// wire/input.go, and the bytes of "Members" travel by
// link/client/upload.go; the [flow-files] lines of "Client policy" are
// link/client/filelog.go; the rule of a file argument ("Tool files") that
// both ends apply is wire/fileargs.go; "The call" reads its answer in
// link/client/stream.go, and its errors are link/client/errors.go and
// link/client/notrun.go; the tool-server's side of "What the tool-server
// does with the members" goes on in link/server/uploads.go (an uploaded
// member), link/server/prevalidate.go (the checks before the first step)
// and link/server/source.go (the runner reading the members); the directive of
// "Baselines in the result" is wire/clientfile.go, and its dry run
// link/client/dryrun.go.
//
// One extension is this project's, not the protocol's: style members, a
// snapshot's stylePath file sent with role "style"
// (link/client/styles.go, link/server/styles.go).
package link
