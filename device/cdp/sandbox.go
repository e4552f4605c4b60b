package cdp

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/toolserver/toolserver/internal/printable"
)

// procSys is where the kernel's settings are read from.
const procSys = "/proc/sys"

// maxReason bounds the line of Chromium's output a notice quotes.
const maxReason = 300

// userNamespaceSettings are the kernel settings that take away the
// unprivileged user namespaces Chromium's sandbox needs, each with the
// value that does and what the notice says then.
var userNamespaceSettings = []struct{ path, value, why string }{
	{"kernel/unprivileged_userns_clone", "0", "the kernel refuses unprivileged user namespaces (kernel.unprivileged_userns_clone = 0)"},
	{"user/max_user_namespaces", "0", "the kernel allows no user namespaces (user.max_user_namespaces = 0)"},
	{"kernel/apparmor_restrict_unprivileged_userns", "1", "AppArmor restricts unprivileged user namespaces (kernel.apparmor_restrict_unprivileged_userns = 1)"},
}

// sandboxReason says why Chromium could not start with its sandbox, for
// the notice of the fallback to --no-sandbox: running as root (euid 0),
// a kernel setting under sys (a /proc/sys) that takes away the user
// namespaces the sandbox needs, else what Chromium printed about it in
// err (chromedp puts its output after the first line), else that it
// printed nothing.
func sandboxReason(err error, euid int, sys string) string {
	if euid == 0 {
		return "running as root"
	}
	for _, s := range userNamespaceSettings {
		if b, rerr := os.ReadFile(filepath.Join(sys, s.path)); rerr == nil && strings.TrimSpace(string(b)) == s.value {
			return s.why
		}
	}
	first, output, _ := strings.Cut(err.Error(), "\n")
	if line := chromiumSaid(output); line != "" {
		return line
	}
	return strings.TrimSuffix(strings.TrimSpace(first), ":") + ", and Chromium printed nothing"
}

// chromiumSaid picks from Chromium's output the line that explains a
// failed start: the last that names the sandbox, else the last line,
// without its log prefix ("[pid:tid:time:LEVEL:file:line] "), escaped and
// capped.
func chromiumSaid(output string) string {
	var last, sandbox string
	for _, l := range strings.Split(output, "\n") {
		l = strings.TrimSpace(l)
		if strings.HasPrefix(l, "[") {
			if _, rest, ok := strings.Cut(l, "] "); ok {
				l = rest
			}
		}
		if l == "" {
			continue
		}
		last = l
		if strings.Contains(strings.ToLower(l), "sandbox") {
			sandbox = l
		}
	}
	if sandbox != "" {
		last = sandbox
	}
	if len(last) > maxReason {
		last = strings.ToValidUTF8(last[:maxReason], "") + "…"
	}
	return printable.String(last)
}
