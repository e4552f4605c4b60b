package cdp

import (
	"errors"
	"strings"
	"testing"
)

// TestURLPolicy: a URL is read as Chromium reads it (C0 controls and
// spaces stripped from the ends, tabs and newlines removed anywhere), and
// only the schemes of the list open; what the browser is given is the
// URL as it reads it.
func TestURLPolicy(t *testing.T) {
	t.Parallel()
	remote := urlPolicy{denyFiles: true}
	local := urlPolicy{}
	for _, tc := range []struct {
		name   string
		policy urlPolicy
		url    string
		want   string // the URL given to the browser, when it opens
		err    error
	}{
		{"http", remote, "http://example.com/a?b#c", "http://example.com/a?b#c", nil},
		{"https upper case", remote, "HTTPS://EXAMPLE.COM/", "HTTPS://EXAMPLE.COM/", nil},
		{"spaces and controls around", remote, " \x00\x1fhttps://example.com/ \n", "https://example.com/", nil},
		{"tab inside", remote, "ht\ttp://example.com/", "http://example.com/", nil},
		{"about:blank", remote, "about:blank", "about:blank", nil},
		{"data", remote, "data:text/html,<p>hi</p>", "data:text/html,<p>hi</p>", nil},
		{"file where allowed", local, "file:///tmp/a.html", "file:///tmp/a.html", nil},
		{"file with a control char where allowed", local, "\x01file:///tmp/a.html", "file:///tmp/a.html", nil},

		{"file", remote, "file:///etc/hostname", "", ErrFileURL},
		{"file upper case after a space", remote, " FILE:///etc/hostname", "", ErrFileURL},
		{"file after a control char", remote, "\u0001file:///etc/hostname", "", ErrFileURL},
		{"file after NUL", remote, "\x00file:///etc/hostname", "", ErrFileURL},
		{"file with a tab", remote, "fi\tle:///etc/hostname", "", ErrFileURL},
		{"file with a newline", remote, "fi\nle:///etc/hostname", "", ErrFileURL},
		{"file with a carriage return", remote, "file\r:///etc/hostname", "", ErrFileURL},
		{"file, control char at the end", remote, "file:///etc/hostname\x1f", "", ErrFileURL},
		{"view-source of a file", remote, "view-source:file:///etc/hostname", "", ErrBadURL},
		{"view-source of a file where files open", local, "view-source:file:///etc/hostname", "", ErrBadURL},
		{"view-source of http", local, "VIEW-SOURCE:http://example.com/", "", ErrBadURL},
		{"chrome settings", local, "chrome://settings", "", ErrBadURL},
		{"chrome crash", local, "chrome://crash", "", ErrBadURL},
		{"chrome crash with a tab", local, "chr\tome://crash", "", ErrBadURL},
		{"chrome-untrusted", local, "chrome-untrusted://terminal/", "", ErrBadURL},
		{"devtools", local, "devtools://devtools/bundled/inspector.html", "", ErrBadURL},
		{"javascript", local, "javascript:alert(1)", "", ErrBadURL},
		{"javascript with a newline", local, "java\nscript:alert(1)", "", ErrBadURL},
		{"blob", local, "blob:http://example.com/0b5c1e0e", "", ErrBadURL},
		{"filesystem", local, "filesystem:http://example.com/temporary/a", "", ErrBadURL},
		{"about settings", local, "about:settings", "", ErrBadURL},
		{"about blank with more", local, "about:blank/../settings", "", ErrBadURL},
		{"ftp", local, "ftp://example.com/", "", ErrBadURL},
		{"websocket", local, "ws://example.com/", "", ErrBadURL},
		{"extension", local, "chrome-extension://abcdef/page.html", "", ErrBadURL},
		{"no scheme", local, "example.com", "", ErrBadURL},
		{"a path", local, "/etc/hostname", "", ErrBadURL},
		{"a Windows path", remote, `C:\site\a.html`, "", ErrBadURL},
		{"empty", local, "", "", ErrBadURL},
		{"only controls", local, " \t\x01", "", ErrBadURL},
		{"no host", local, "http://", "", ErrBadURL},
		{"no host, a path", local, "http:///?x", "", ErrBadURL},
		{"unclosed bracket", local, "http://[::1", "", ErrBadURL},
		{"port too large", local, "http://example.com:99999/", "", ErrBadURL},
		{"port not a number", local, "http://example.com:8o/", "", ErrBadURL},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.policy.check(tc.url)
			if !errors.Is(err, tc.err) || got != tc.want {
				t.Fatalf("check(%q) = %q, %v; want %q, %v", tc.url, got, err, tc.want, tc.err)
			}
			if err != nil && !strings.Contains(err.Error(), "open ") {
				t.Fatalf("error %q does not name the URL", err)
			}
		})
	}
}

// TestHostList: the allowed hosts match the host the browser will read
// from a URL (after user info, with backslashes, as an address written as
// a number), and anything the list cannot be checked against is refused.
func TestHostList(t *testing.T) {
	t.Parallel()
	l, err := ParseHostList([]string{"Example.com", " *.example.org", "127.0.0.1", "[::1]", "", "example.com"})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := l.String(), "example.com,*.example.org,127.0.0.1,::1"; got != want {
		t.Fatalf("String() = %q, want %q", got, want)
	}
	if got, want := l.resolverRules(), "MAP * ~NOTFOUND, EXCLUDE example.com, EXCLUDE *.example.org, EXCLUDE 127.0.0.1, EXCLUDE ::1"; got != want {
		t.Fatalf("resolverRules() = %q, want %q", got, want)
	}
	p := urlPolicy{denyFiles: true, hosts: l}
	for _, tc := range []struct {
		url  string
		host string // named by the refusal; "" when the URL opens
	}{
		{"http://example.com/", ""},
		{"https://EXAMPLE.com:8443/a", ""},
		{"http://user:pw@example.com/", ""},
		{`http:/\example.com/`, ""},
		{"http:example.com", ""},
		{"http://a.example.org/", ""},
		{"http://a.b.example.org/", ""},
		{"http://127.0.0.1:3000/", ""},
		{"http://2130706433/", ""},
		{"http://0x7f.1/", ""},
		{"http://0177.0.0.1/", ""},
		{"http://[::1]:3000/", ""},
		{"http://[0:0::1]/", ""},
		{"data:text/html,hi", ""},
		{"about:blank", ""},

		{"http://example.org/", "example.org"},
		{"http://evil.example.com/", "evil.example.com"},
		{"http://example.com.evil.net/", "example.com.evil.net"},
		{"http://example.com@evil.net/", "evil.net"},
		{`http://evil.net\@example.com/`, "evil.net"},
		{"http://evil.net#@example.com/", "evil.net"},
		{"http://evil.net?@example.com/", "evil.net"},
		{"http://localhost:3000/", "localhost"},
		{"http://example.com./", "example.com."},
		{"http://169.254.169.254/latest/meta-data/", "169.254.169.254"},
		{"http://0xa9fea9fe/", "169.254.169.254"},
		{"http://169.254.43518/", "169.254.169.254"},
		{"http://[::2]/", "::2"},
		{"http://%65xample.com/", "%65xample.com"},
		{"http://bücher.example.org/", "bücher.example.org"},
		{"http://1.2.3.4.5/", "1.2.3.4.5"},
		{"http://256.0.0.1/", "256.0.0.1"},
	} {
		got, err := p.check(tc.url)
		switch {
		case tc.host == "" && err != nil:
			t.Errorf("check(%q): %v, want it to open", tc.url, err)
		case tc.host == "":
		case !errors.Is(err, ErrHostNotAllowed) || !strings.Contains(err.Error(), tc.host):
			t.Errorf("check(%q) = %q, %v; want ErrHostNotAllowed naming %q", tc.url, got, err, tc.host)
		}
	}
}

func TestParseHostListRefuses(t *testing.T) {
	t.Parallel()
	for _, entries := range [][]string{
		nil,
		{"", " "},
		{"http://example.com"},
		{"example.com/path"},
		{"example.com:8080"},
		{"*"},
		{"*.*.example.com"},
		{"a..example.com"},
		{"example.com."},
		{".example.com"},
		{"0x7f.1"},
		{"1.2.3"},
		{"::ffff:127.0.0.1"},
		{"fe80::1%eth0"},
		{"bücher.example"},
		{"exa mple.com"},
	} {
		if l, err := ParseHostList(entries); err == nil {
			t.Errorf("ParseHostList(%q) = %v, want an error", entries, l)
		} else if len(entries) > 0 && strings.TrimSpace(entries[0]) != "" && !strings.Contains(err.Error(), entries[0]) {
			t.Errorf("ParseHostList(%q): error %q does not name the entry", entries, err)
		}
	}
}
