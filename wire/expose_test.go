package wire

import (
	"fmt"
	"strings"
	"testing"
)

func TestParseTarget(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Target
		err  string
	}{
		{in: "localhost:5173", want: Target{"localhost", 5173}},
		{in: "LOCALHOST:80", want: Target{"localhost", 80}},
		{in: "127.0.0.1:8080", want: Target{"127.0.0.1", 8080}},
		{in: "[::1]:3000", want: Target{"::1", 3000}},
		{in: "localhost", want: Target{"localhost", 0}},
		{in: "[::1]", want: Target{"::1", 0}},
		{in: "127.0.0.2:9", want: Target{"127.0.0.2", 9}},
		{in: "", err: "an empty target"},
		{in: "example.com:80", err: "is not this machine's loopback"},
		{in: "10.0.0.1:80", err: "is not this machine's loopback"},
		{in: "0.0.0.0:80", err: "is not this machine's loopback"},
		{in: "localhost:0", err: "the port must be 1 to 65535"},
		{in: "localhost:70000", err: "the port must be 1 to 65535"},
		{in: "localhost:http", err: "the port must be 1 to 65535"},
		{in: strings.Repeat("a", 65), err: "longer than a target"},
	} {
		got, err := ParseTarget(tc.in)
		switch {
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("ParseTarget(%q): got %v, %v; want an error with %q", tc.in, got, err, tc.err)
		case tc.err == "" && (err != nil || got != tc.want):
			t.Errorf("ParseTarget(%q): got %v, %v; want %v", tc.in, got, err, tc.want)
		}
	}
	if s := (Target{"::1", 3000}).String(); s != "[::1]:3000" {
		t.Errorf("String: %q", s)
	}
}

func TestParseTargetsAndMatch(t *testing.T) {
	ts, err := ParseTargets([]string{"localhost:5173, 127.0.0.1:8080", "localhost:5173"})
	if err != nil || ts.String() != "localhost:5173,127.0.0.1:8080" {
		t.Fatalf("ParseTargets: %v %v", ts, err)
	}
	for _, tc := range []struct {
		host string
		port int
		ok   bool
		dial string
	}{
		{"localhost", 5173, true, "127.0.0.1:5173"},
		{"127.0.0.1", 5173, true, "127.0.0.1:5173"},
		{"[::1]", 8080, true, "127.0.0.1:8080"},
		{"localhost", 9999, false, ""},
		{"example.com", 5173, false, ""},
		{"client.toolserver.localhost", 80, false, ""},
	} {
		got, ok := ts.Match(tc.host, tc.port)
		if ok != tc.ok || (ok && got.Addrs()[0] != tc.dial) {
			t.Errorf("Match(%s, %d): got %v %v, want %v dialing %s", tc.host, tc.port, got, ok, tc.ok, tc.dial)
		}
	}
	all, _ := ParseTargets([]string{"localhost", "127.0.0.1:9"})
	if got, ok := all.Match("127.0.0.1", 9); !ok || got.Host != "127.0.0.1" {
		t.Errorf("a target for the port wins: %v %v", got, ok)
	}
	if got, ok := all.Match("localhost", 4321); !ok || got.Port != 4321 || got.Addrs()[1] != "[::1]:4321" {
		t.Errorf("localhost is every port: %v %v", got, ok)
	}
	many := make([]string, MaxTargets+1)
	for i := range many {
		many[i] = fmt.Sprintf("localhost:%d", 1000+i)
	}
	if _, err := ParseTargets(many); err == nil || !strings.Contains(err.Error(), "at most 32") {
		t.Errorf("past MaxTargets: %v", err)
	}
}
