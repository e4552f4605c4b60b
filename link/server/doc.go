// Package server is the tool-server end of the link
// (docs/link-protocol.md): it reads the members of a call, their uploads
// included (ParseInput, Receive), checks a linked flow before its first
// step (Prevalidate), rejects the flow of an older client that sends no
// members when the flow needs them (OlderClient), and answers the flow
// runner from the members (Source).
//
// It never imports link/client: it meets the client end only in wire.
// A package that also imports the HTTP server (package server) imports it
// under another name.
package server
