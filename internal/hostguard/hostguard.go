// Package hostguard holds the one rule of which Host header a server on
// this machine answers, for serve's guard and report serve's: a page in a
// browser whose DNS name was rebound to 127.0.0.1 reaches the server
// with its own name in Host, so a server bound to a host answers only
// the names that can be meant for it.
package hostguard

import (
	"net"
	"strings"
)

// Allowed reports whether a request whose Host header is hostport may
// reach a server bound to bindHost (lower case, without brackets):
// hostport names loopback (see Loopback) or the bind host, with or
// without a port. A wildcard bind answers any name; that is the
// caller's decision, not this rule's.
func Allowed(hostport, bindHost string) bool {
	host := hostOf(hostport)
	return host != "" && (host == bindHost || loopback(host))
}

// Loopback reports whether hostport names this machine's loopback:
// localhost, a name under .localhost (RFC 6761 keeps them on loopback),
// or a loopback address, with or without a port. These are all a server
// bound to loopback answers.
func Loopback(hostport string) bool {
	host := hostOf(hostport)
	return host != "" && loopback(host)
}

// hostOf is the host of a Host header, lower case, without port or
// brackets.
func hostOf(hostport string) string {
	host, _, err := net.SplitHostPort(hostport)
	if err != nil {
		host = hostport
	}
	return strings.ToLower(strings.Trim(host, "[]"))
}

func loopback(host string) bool {
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
