package cdp

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSandboxReason: the notice of the fallback to --no-sandbox says why
// the sandbox failed: root, a kernel setting read from a /proc/sys tree
// (a directory of real files here), else Chromium's own line about it.
func TestSandboxReason(t *testing.T) {
	t.Parallel()
	// What chromedp returns when Chromium exits before it listens: its
	// output after the first line, log lines in Chromium's format.
	const noUsable = "start /usr/bin/chromium-headless-shell: chrome failed to start:\n" +
		"[1202/011938.971782:ERROR:dbus/bus.cc:405] Failed to connect to the bus: Failed to connect to socket /run/dbus/system_bus_socket: No such file or directory\n" +
		"[1202/011938.981726:FATAL:content/browser/zygote_host/zygote_host_impl_linux.cc:128] No usable sandbox! If you are running on Ubuntu 23.10+ or another Linux distro that has disabled unprivileged user namespaces with AppArmor, see https://chromium.googlesource.com/chromium/src/+/main/docs/security/apparmor-userns-restrictions.md.\n"
	sysctl := func(t *testing.T, settings map[string]string) string {
		dir := t.TempDir()
		for p, v := range settings {
			os.MkdirAll(filepath.Join(dir, filepath.Dir(p)), 0o755)
			if err := os.WriteFile(filepath.Join(dir, p), []byte(v+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return dir
	}
	open := map[string]string{"kernel/unprivileged_userns_clone": "1", "user/max_user_namespaces": "63412", "kernel/apparmor_restrict_unprivileged_userns": "0"}
	for _, c := range []struct {
		name     string
		euid     int
		settings map[string]string
		err      string
		want     string
	}{
		{"root", 0, open, "start x: chrome failed to start:\n", "running as root"},
		{"Debian's switch", 1000, map[string]string{"kernel/unprivileged_userns_clone": "0"}, noUsable,
			"the kernel refuses unprivileged user namespaces (kernel.unprivileged_userns_clone = 0)"},
		{"no namespaces", 1000, map[string]string{"user/max_user_namespaces": "0"}, noUsable,
			"the kernel allows no user namespaces (user.max_user_namespaces = 0)"},
		{"AppArmor", 1000, map[string]string{"kernel/apparmor_restrict_unprivileged_userns": "1"}, noUsable,
			"AppArmor restricts unprivileged user namespaces (kernel.apparmor_restrict_unprivileged_userns = 1)"},
		{"Chromium's line", 1000, open, noUsable, "No usable sandbox! If you are running on Ubuntu 23.10+"},
		{"no line about the sandbox", 1000, nil, "start x: chrome failed to start:\n[1:2:3:FATAL:a.cc:1] Missing X server\n\n", "Missing X server"},
		{"escaped", 1000, nil, "start x: chrome failed to start:\nsandbox \x1b[2J\n", `sandbox \u001b[2J`},
		{"silent", 1000, nil, "start /usr/bin/chromium: chrome failed to start:\n", "start /usr/bin/chromium: chrome failed to start, and Chromium printed nothing"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := sandboxReason(errors.New(c.err), c.euid, sysctl(t, c.settings))
			if !strings.HasPrefix(got, c.want) {
				t.Errorf("got %q, want it to start with %q", got, c.want)
			}
		})
	}
	long := sandboxReason(errors.New("x:\nsandbox "+strings.Repeat("é", 400)), 1000, t.TempDir())
	if len(long) > maxReason+len("…") || !strings.HasSuffix(long, "…") {
		t.Errorf("a long line: got %d bytes %q, want at most %d and an ellipsis", len(long), long, maxReason)
	}
}
