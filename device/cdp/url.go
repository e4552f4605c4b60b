package cdp

// This file decides which URLs a device opens. A URL is read the way
// Chromium's parser (the WHATWG URL standard) will read it, and its scheme
// must be on a short list: a refusal list keyed on the text a caller sent
// is defeated by the characters the browser drops before it parses
// ("\x01file:", "fi\tle:") and by schemes that wrap others
// ("view-source:file:").

import (
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"strconv"
	"strings"
)

// The schemes a device opens, for the messages of a refusal.
const schemesOpened = "http, https, data and about:blank, and file where the tool-server allows it"

// urlPolicy is what a pool's devices may open.
type urlPolicy struct {
	denyFiles bool
	hosts     *HostList // nil: every host
}

// normalizeURL returns raw as Chromium's URL parser sees it: C0 control
// characters and spaces stripped from both ends, tabs and newlines removed
// everywhere (the WHATWG URL standard's first steps).
func normalizeURL(raw string) string {
	s := strings.TrimFunc(raw, func(r rune) bool { return r <= ' ' })
	if !strings.ContainsAny(s, "\t\n\r") {
		return s
	}
	return strings.Map(func(r rune) rune {
		if r == '\t' || r == '\n' || r == '\r' {
			return -1
		}
		return r
	}, s)
}

// splitScheme returns the lower-cased scheme of an absolute URL and what
// follows its colon; ok is false when u starts with no scheme (a letter,
// then letters, digits, "+", "-" or ".", then ":").
func splitScheme(u string) (scheme, rest string, ok bool) {
	for i := 0; i < len(u); i++ {
		c := u[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z':
		case i > 0 && (c >= '0' && c <= '9' || c == '+' || c == '-' || c == '.'):
		case i > 0 && c == ':':
			return strings.ToLower(u[:i]), u[i+1:], true
		default:
			return "", "", false
		}
	}
	return "", "", false
}

// check returns the URL to give the browser for raw, or why a device does
// not open it: a scheme off the list (ErrBadURL), a file: URL where they
// are off (ErrFileURL), a host off the allowed list (ErrHostNotAllowed).
func (p urlPolicy) check(raw string) (string, error) { return p.checkVia(raw, nil) }

// checkVia is check for a browser context whose proxy takes the hosts
// proxied reports (a run's tunnel): the allowed hosts bind only the
// others, which the proxy checks itself (Pool.CheckHost).
func (p urlPolicy) checkVia(raw string, proxied func(host string) bool) (string, error) {
	u := normalizeURL(raw)
	scheme, rest, ok := splitScheme(u)
	if !ok {
		return "", fmt.Errorf("open %q: %w: not an absolute URL; give its scheme, such as https://example.com/ (a device opens %s)", raw, ErrBadURL, schemesOpened)
	}
	switch scheme {
	case "http", "https":
		host, err := urlHost(rest)
		if err != nil {
			return "", fmt.Errorf("open %q: %w: %v", raw, ErrBadURL, err)
		}
		if p.hosts != nil && (proxied == nil || !proxied(strings.Trim(host, "[]"))) {
			if err := p.hosts.check(host); err != nil {
				return "", fmt.Errorf("open %q: %w", raw, err)
			}
		}
	case "file":
		if p.denyFiles {
			return "", fmt.Errorf("open %q: %w (it serves remote callers; a page must come from a URL this machine can fetch)", raw, ErrFileURL)
		}
	case "about":
		// about:blank is the empty page; Chromium maps other about: URLs
		// to its own chrome:// pages.
		if rest != "blank" {
			return "", fmt.Errorf("open %q: %w: of the about: URLs only about:blank opens (a device opens %s)", raw, ErrBadURL, schemesOpened)
		}
	case "data":
		// A page of the caller's own making: it reaches no more than a
		// page the caller serves would (Chromium never lets it load a
		// file: URL, and the allowed hosts bind what it fetches).
	default:
		return "", fmt.Errorf("open %q: %w: the scheme %s: is not one a device opens (%s)", raw, ErrBadURL, scheme, schemesOpened)
	}
	return u, nil
}

// urlHost returns the host of an http or https URL given what follows its
// "scheme:", split off as Chromium splits it: the slashes and backslashes
// after the scheme skipped, the authority ending at the first "/", "\",
// "?" or "#", user info up to its last "@", and a port after the last
// colon outside brackets.
func urlHost(rest string) (string, error) {
	rest = strings.TrimLeft(rest, `/\`)
	authority := rest
	if i := strings.IndexAny(rest, `/\?#`); i >= 0 {
		authority = rest[:i]
	}
	if i := strings.LastIndexByte(authority, '@'); i >= 0 {
		authority = authority[i+1:]
	}
	host, port := authority, ""
	if strings.HasPrefix(authority, "[") {
		end := strings.IndexByte(authority, ']')
		if end < 0 {
			return "", fmt.Errorf("the host %q has no closing bracket", authority)
		}
		host = authority[:end+1]
		switch after := authority[end+1:]; {
		case after == "":
		case after[0] == ':':
			port = after[1:]
		default:
			return "", fmt.Errorf("%q after the host %s", after, host)
		}
	} else if i := strings.LastIndexByte(authority, ':'); i >= 0 {
		host, port = authority[:i], authority[i+1:]
	}
	if host == "" {
		return "", errors.New("no host")
	}
	if port != "" {
		if _, err := strconv.ParseUint(port, 10, 16); err != nil {
			return "", fmt.Errorf("the port %q is not a number within 0..65535", port)
		}
	}
	return host, nil
}

// HostList is the hosts whose pages devices may open (Options.AllowHosts):
// host names, "*.example.com" for every name under example.com (not
// example.com itself), and IPv4 or IPv6 addresses. Ports are not part of
// an entry: an allowed host is allowed on every port.
type HostList struct {
	names    map[string]bool // lower-case host names and canonical addresses
	suffixes []string        // ".example.com" for *.example.com
	entries  []string        // canonical, in the order given
}

// ParseHostList returns the list of the entries, or an error naming the
// first entry that is not a host name, a "*." pattern or an IP address.
// Empty entries are skipped; a list with none is an error, since an empty
// list would allow nothing.
func ParseHostList(entries []string) (*HostList, error) {
	l := &HostList{names: map[string]bool{}}
	for _, e := range entries {
		e = strings.TrimSpace(e)
		if e == "" {
			continue
		}
		canon, suffix, err := parseHostEntry(e)
		if err != nil {
			return nil, err
		}
		if suffix {
			l.suffixes = append(l.suffixes, canon[1:]) // ".example.com"
		} else {
			l.names[canon] = true
		}
		if !slices.Contains(l.entries, canon) {
			l.entries = append(l.entries, canon)
		}
	}
	if len(l.entries) == 0 {
		return nil, errors.New("allowed hosts: none given; name at least one host, or leave the list out to allow every host")
	}
	return l, nil
}

// parseHostEntry returns the canonical form of one entry of a host list,
// and whether it is a "*." pattern.
func parseHostEntry(e string) (canon string, suffix bool, err error) {
	bad := func(why string) (string, bool, error) {
		return "", false, fmt.Errorf("allowed hosts: %q %s; want a host name (example.com), *.example.com, or an IP address", e, why)
	}
	if strings.Contains(e, "/") {
		return bad("is not a host (no scheme or path)")
	}
	if a, err := netip.ParseAddr(strings.TrimSuffix(strings.TrimPrefix(e, "["), "]")); err == nil {
		switch {
		case a.Zone() != "":
			return bad("has a zone")
		case a.Is4In6():
			return bad("is an IPv4 address written as IPv6; write it as IPv4")
		}
		return a.String(), false, nil
	}
	name := strings.ToLower(e)
	if rest, ok := strings.CutPrefix(name, "*."); ok {
		name, suffix = rest, true
	}
	if strings.Contains(name, ":") {
		return bad("has a port or is not an address (an allowed host is allowed on every port)")
	}
	if why := checkHostName(name); why != "" {
		return bad(why)
	}
	if suffix {
		return "*." + name, true, nil
	}
	return name, false, nil
}

// checkHostName says what keeps name from being an ASCII host name, or "".
func checkHostName(name string) string {
	if name == "" || len(name) > 253 {
		return "is not a host name"
	}
	labels := strings.Split(name, ".")
	for _, l := range labels {
		if l == "" {
			return "has an empty label (a host name has no leading, trailing or double dot)"
		}
		for i := 0; i < len(l); i++ {
			c := l[i]
			if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
				return "has a character a host name does not (write a name in its ASCII form, xn--…)"
			}
		}
	}
	if endsInNumber(labels) {
		return "is neither a host name nor an IP address"
	}
	return ""
}

// endsInNumber reports whether a host's last label is a number, which
// makes the browser read the host as an IPv4 address (the WHATWG "ends in
// a number" rule).
func endsInNumber(labels []string) bool {
	last := labels[len(labels)-1]
	if last == "" && len(labels) > 1 {
		last = labels[len(labels)-2]
	}
	if last == "" {
		return false
	}
	if strings.Trim(last, "0123456789") == "" {
		return true
	}
	hex, ok := strings.CutPrefix(strings.ToLower(last), "0x")
	return ok && strings.Trim(hex, "0123456789abcdef") == ""
}

// String returns the entries, comma-separated.
func (l *HostList) String() string { return strings.Join(l.entries, ",") }

// allows reports whether the canonical host is on the list.
func (l *HostList) allows(host string) bool {
	if l.names[host] {
		return true
	}
	for _, s := range l.suffixes {
		if strings.HasSuffix(host, s) {
			return true
		}
	}
	return false
}

// check returns nil when the host of a URL, as urlHost split it off, is on
// the list, else an error wrapping ErrHostNotAllowed that names it. A host
// the list cannot be checked against (escaped or not ASCII) is refused
// too.
func (l *HostList) check(host string) error {
	canon, err := canonicalHost(host)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrHostNotAllowed, err)
	}
	if !l.allows(canon) {
		return fmt.Errorf("%w: %s is not one of the hosts this tool-server opens (%s)", ErrHostNotAllowed, canon, l)
	}
	return nil
}

// canonicalHost returns host as the browser canonicalizes it, for the
// hosts a list can name: an address in brackets, an IPv4 address in any of
// the forms the WHATWG parser reads (0x7f.1, 2130706433), or an ASCII
// name, lower-cased.
func canonicalHost(host string) (string, error) {
	if inner, ok := strings.CutPrefix(host, "["); ok {
		a, err := netip.ParseAddr(strings.TrimSuffix(inner, "]"))
		if err != nil || !a.Is6() || a.Zone() != "" {
			return "", fmt.Errorf("the host %s is not an IPv6 address", host)
		}
		return a.String(), nil
	}
	name := strings.ToLower(host)
	for i := 0; i < len(name); i++ {
		if c := name[i]; c == '%' || c >= 0x80 {
			return "", fmt.Errorf("the host %q is escaped or not ASCII; write it in its ASCII form (xn--…) to have it checked against the allowed hosts", host)
		}
	}
	labels := strings.Split(name, ".")
	if !endsInNumber(labels) {
		return name, nil
	}
	a, ok := parseIPv4(labels)
	if !ok {
		return "", fmt.Errorf("the host %q is not a valid IPv4 address", host)
	}
	return a.String(), nil
}

// parseIPv4 reads an IPv4 host as the WHATWG URL standard does: one to
// four parts, each decimal, 0x-hexadecimal or 0-octal, the last filling
// the bytes the others leave.
func parseIPv4(labels []string) (netip.Addr, bool) {
	if len(labels) > 1 && labels[len(labels)-1] == "" {
		labels = labels[:len(labels)-1]
	}
	if len(labels) > 4 {
		return netip.Addr{}, false
	}
	nums := make([]uint64, len(labels))
	for i, l := range labels {
		base, digits := 10, l
		switch {
		case strings.HasPrefix(l, "0x"):
			base, digits = 16, l[2:]
		case len(l) > 1 && l[0] == '0':
			base, digits = 8, l[1:]
		}
		if digits == "" {
			if base != 16 && l != "0" {
				return netip.Addr{}, false
			}
			digits = "0"
		}
		n, err := strconv.ParseUint(digits, base, 64)
		if err != nil {
			return netip.Addr{}, false
		}
		nums[i] = n
	}
	var v uint64
	for i, n := range nums[:len(nums)-1] {
		if n > 255 {
			return netip.Addr{}, false
		}
		v |= n << (8 * (3 - i))
	}
	last := nums[len(nums)-1]
	if last >= 1<<(8*(5-len(nums))) {
		return netip.Addr{}, false
	}
	v |= last
	return netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)}), true
}

// resolverRules is Chromium's --host-resolver-rules for the list: every
// host fails to resolve except those of the list. The browser applies it
// to every connection of every page (redirects, frames, fetches, workers,
// addresses written as numbers too), which a check of the URL a caller
// gives cannot.
func (l *HostList) resolverRules() string {
	var b strings.Builder
	b.WriteString("MAP * ~NOTFOUND")
	for _, e := range l.entries {
		b.WriteString(", EXCLUDE ")
		b.WriteString(e)
	}
	return b.String()
}
