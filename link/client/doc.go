// Package client is the client end of the link (docs/link-protocol.md):
// it lists a tool-server's tools, wraps a call's file inputs, collects the
// members of a flow or of a recorded step under the client policy, sends
// their bytes inline or through POST /upload, posts the call once and
// reads its stream, and applies the client-file directives of the result
// (it writes the baselines, or plans them in a dry run).
//
// It never imports link/server, the HTTP server or the store: it meets the
// server end only in wire. Its tests run against a stub tool-server,
// and those that prove both ends agree also read what the client sent
// with link/server.
package client
