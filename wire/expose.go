package wire

import (
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
)

// The grammar of what a client exposes through a tunnel (flow run
// --expose, the project config's expose:, the upgrade's header): the
// language checks it when it reads a config, and both ends of the tunnel
// (link/tunnel and its two users) match requests with it.

// FilesHost is the host a page opens the client's project files at: a
// launch: with a relative path, over a link with a tunnel, opens
// http://FilesHost/<the file's path on the client>. A name under
// .localhost, so the page is a secure context as a file: page is, and
// one no resolver answers for: only the tunnel reaches it.
const FilesHost = "client.toolserver.localhost"

// MaxTargets bounds the targets a client exposes.
const MaxTargets = 32

// Target is one thing a client exposes: a port of its loopback, or all of
// them (Port 0). Host is how the client dials it: localhost tries
// 127.0.0.1 then ::1, an address only itself.
type Target struct {
	Host string
	Port int
}

// String is the target as flow run --expose spells it.
func (t Target) String() string {
	if t.Port != 0 {
		return net.JoinHostPort(t.Host, strconv.Itoa(t.Port))
	}
	if strings.Contains(t.Host, ":") {
		return "[" + t.Host + "]"
	}
	return t.Host
}

// ParseTarget reads a target: localhost:5173, 127.0.0.1:8080, [::1]:3000,
// or a host alone (localhost) for every port of the loopback. Anything
// but the client's own loopback is refused: a tunnel never reaches
// another machine.
func ParseTarget(s string) (Target, error) {
	if s == "" {
		return Target{}, errors.New("an empty target; write localhost:5173, 127.0.0.1:8080 or localhost")
	}
	if len(s) > 64 {
		return Target{}, fmt.Errorf("%.64q… is longer than a target (64 bytes)", s)
	}
	host, port := s, ""
	if h, p, err := net.SplitHostPort(s); err == nil {
		host, port = h, p
	} else if strings.HasPrefix(s, "[") && strings.HasSuffix(s, "]") {
		host = s[1 : len(s)-1]
	} else if strings.Count(s, ":") == 1 {
		return Target{}, fmt.Errorf("%q: %v", s, err)
	}
	host = strings.ToLower(host)
	if !Loopback(host) {
		return Target{}, fmt.Errorf("%q is not this machine's loopback: a tunnel exposes localhost, 127.0.0.1 or [::1] only", s)
	}
	t := Target{Host: host}
	if port != "" {
		n, err := strconv.Atoi(port)
		if err != nil || n < 1 || n > 65535 {
			return Target{}, fmt.Errorf("%q: the port must be 1 to 65535", s)
		}
		t.Port = n
	}
	return t, nil
}

// Targets is what one tunnel exposes.
type Targets []Target

// ParseTargets reads targets, each a list joined by commas; duplicates
// go, and more than MaxTargets is refused.
func ParseTargets(specs []string) (Targets, error) {
	var out Targets
	seen := map[Target]bool{}
	for _, spec := range specs {
		for s := range strings.SplitSeq(spec, ",") {
			t, err := ParseTarget(strings.TrimSpace(s))
			if err != nil {
				return nil, err
			}
			if seen[t] {
				continue
			}
			seen[t] = true
			out = append(out, t)
		}
	}
	if len(out) > MaxTargets {
		return nil, fmt.Errorf("%d targets: a tunnel exposes at most %d", len(out), MaxTargets)
	}
	return out, nil
}

// String is the targets as HeaderExpose carries them.
func (ts Targets) String() string {
	s := make([]string, len(ts))
	for i, t := range ts {
		s[i] = t.String()
	}
	return strings.Join(s, ",")
}

// Match finds the target a request for host:port goes to: host must be a
// loopback name (the page asked for localhost, 127.0.0.1 or [::1]), and
// a target must expose port, itself or as every port. A target for that
// very port wins over one for every port.
func (ts Targets) Match(host string, port int) (Target, bool) {
	if !Loopback(host) || port < 1 {
		return Target{}, false
	}
	var any *Target
	for i, t := range ts {
		if t.Port == port {
			return t, true
		}
		if t.Port == 0 && any == nil {
			any = &ts[i]
		}
	}
	if any != nil {
		return Target{Host: any.Host, Port: port}, true
	}
	return Target{}, false
}

// Loopback reports whether host names the machine's own loopback:
// localhost, an address of 127.0.0.0/8, or ::1 (with or without its
// brackets).
func Loopback(host string) bool {
	host = strings.TrimSuffix(strings.ToLower(strings.Trim(host, "[]")), ".")
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// Addrs are the addresses the client dials for t, in order: localhost is
// 127.0.0.1, then ::1; never a name another resolver could answer.
func (t Target) Addrs() []string {
	p := strconv.Itoa(t.Port)
	if t.Host == "localhost" {
		return []string{net.JoinHostPort("127.0.0.1", p), net.JoinHostPort("::1", p)}
	}
	return []string{net.JoinHostPort(t.Host, p)}
}
