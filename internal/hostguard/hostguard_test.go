package hostguard

import "testing"

func TestAllowed(t *testing.T) {
	for _, tc := range []struct {
		host, bind string
		allowed    bool
		loopback   bool
	}{
		{"localhost:3000", "127.0.0.1", true, true},
		{"LOCALHOST", "127.0.0.1", true, true},
		{"app.localhost:3000", "127.0.0.1", true, true},
		{"127.0.0.1", "127.0.0.1", true, true},
		{"127.8.9.10:80", "127.0.0.1", true, true},
		{"[::1]:3000", "::1", true, true},
		{"tools.internal:3000", "tools.internal", true, false},
		{"evil.example:3000", "127.0.0.1", false, false},
		{"127.0.0.1.evil.example", "127.0.0.1", false, false},
		{"localhost.evil.example", "127.0.0.1", false, false},
		{"10.0.0.5:3000", "127.0.0.1", false, false},
		{"", "", false, false},
	} {
		if got := Allowed(tc.host, tc.bind); got != tc.allowed {
			t.Errorf("Allowed(%q, %q) = %v, want %v", tc.host, tc.bind, got, tc.allowed)
		}
		if got := Loopback(tc.host); got != tc.loopback {
			t.Errorf("Loopback(%q) = %v, want %v", tc.host, got, tc.loopback)
		}
	}
}
