package clientpath

import (
	"path/filepath"
	"strings"
	"testing"
)

func TestClientPaths(t *testing.T) {
	for _, tc := range []struct {
		p           string
		abs, dotdot bool
		dir, base   string
	}{
		{"/work/proj/a.yaml", true, false, "/work/proj", "a.yaml"},
		{`C:\proj\flows\a.yaml`, true, false, `C:\proj\flows`, "a.yaml"},
		{"c:/proj/a.yaml", true, false, "c:/proj", "a.yaml"},
		{"rel/a.yaml", false, false, "rel", "a.yaml"},
		{"/work/../etc", true, true, "/work/..", "etc"},
		{`C:\a\..\b`, true, true, `C:\a\..`, "b"},
		{"/a.yaml", true, false, "/", "a.yaml"},
		{"a.yaml", false, false, ".", "a.yaml"},
		{"1:/x", false, false, "1:", "x"},
	} {
		if got := IsAbs(tc.p); got != tc.abs {
			t.Errorf("IsAbs(%q): got %v, want %v", tc.p, got, tc.abs)
		}
		if got := HasDotDot(tc.p); got != tc.dotdot {
			t.Errorf("HasDotDot(%q): got %v, want %v", tc.p, got, tc.dotdot)
		}
		if got := Dir(tc.p); got != tc.dir {
			t.Errorf("Dir(%q): got %q, want %q", tc.p, got, tc.dir)
		}
		if got := Base(tc.p); got != tc.base {
			t.Errorf("Base(%q): got %q, want %q", tc.p, got, tc.base)
		}
	}
}

func TestFileName(t *testing.T) {
	long := strings.Repeat("n", 255)
	for p, want := range map[string]string{
		"/work/proj/a.png":    "a.png",
		`C:\proj\a.png`:       "a.png",
		"a.png":               "a.png",
		"/work/" + long:       long,
		"":                    "",
		"/":                   "",
		"/x/":                 "",
		`C:\x\`:               "",
		"/..":                 "",
		"/x/.":                "",
		".":                   "",
		`C:\x\..`:             "",
		"/x/a\x00b":           "",
		"/work/" + long + "n": "",
	} {
		got, ok := FileName(p)
		if got != want || ok != (want != "") {
			t.Errorf("FileName(%q): got %q %v, want %q %v", p, got, ok, want, want != "")
		}
	}
}

func TestFlowsDir(t *testing.T) {
	for root, want := range map[string]string{
		"/work/proj":  "/work/proj/.argent/flows",
		"/work/proj/": "/work/proj/.argent/flows",
		`C:\proj\`:    `C:\proj/.argent/flows`,
		"/":           "/.argent/flows",
	} {
		if got := FlowsDir(root); got != want {
			t.Errorf("FlowsDir(%q): got %q, want %q", root, got, want)
		}
	}
}

// TestLocalFlowsDir: this machine's join, cleaned, "" the working
// directory; IsFlowsDir tells such a directory.
func TestLocalFlowsDir(t *testing.T) {
	for root, want := range map[string]string{
		".":       ".argent/flows",
		"":        ".argent/flows",
		"./proj/": "proj/.argent/flows",
		"/work":   "/work/.argent/flows",
	} {
		if got := LocalFlowsDir(root); got != filepath.FromSlash(want) {
			t.Errorf("LocalFlowsDir(%q): got %q, want %q", root, got, want)
		}
		if !IsFlowsDir(LocalFlowsDir(root)) {
			t.Errorf("IsFlowsDir(LocalFlowsDir(%q)): got false", root)
		}
	}
	for _, dir := range []string{"/work/flows", "/work/.argent", "/.argent/flows/x"} {
		if IsFlowsDir(dir) {
			t.Errorf("IsFlowsDir(%q): got true", dir)
		}
	}
}
