// Package link owns the link of the Argent tool-server protocol: a flow
// run whose files (the flow, its run: fragments, nested flows, baselines
// and tool file arguments) stay on the client and travel with the call as
// members. Each section of the protocol seed is one file here: both ends,
// the client that collects and sends members and writes the baselines of
// the result, and the server that reads members, pre-validates a flow and
// runs it with the flow runner over a member source. One file is not the
// seed's: styles.go, this project's extension that sends a snapshot's
// stylePath file as a member with role "style".
package link
