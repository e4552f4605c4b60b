package cdp

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestFindChromium: $CHROMIUM_PATH wins; otherwise the headless shell is
// taken before the full browser when PATH has both, the full browser
// when it is alone, and with neither the error says what to install.
func TestFindChromium(t *testing.T) {
	dir := t.TempDir()
	exe := func(name string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
		return p
	}
	t.Setenv("PATH", dir)
	t.Setenv("CHROMIUM_PATH", "")

	if _, err := findChromium(""); !errors.Is(err, ErrNoChromium) || !strings.Contains(err.Error(), InstallHint) {
		t.Errorf("nothing on PATH: got %v, want ErrNoChromium with %q", err, InstallHint)
	}
	full := exe("chromium")
	if got, err := findChromium(""); err != nil || got != full {
		t.Errorf("chromium alone: got %q, %v, want %q", got, err, full)
	}
	shell := exe("chromium-headless-shell")
	if got, err := findChromium(""); err != nil || got != shell {
		t.Errorf("both on PATH: got %q, %v, want the headless shell %q", got, err, shell)
	}
	t.Setenv("CHROMIUM_PATH", full)
	if got, err := findChromium(""); err != nil || got != full {
		t.Errorf("CHROMIUM_PATH set: got %q, %v, want %q", got, err, full)
	}
	if got, err := findChromium(shell); err != nil || got != shell {
		t.Errorf("an explicit path: got %q, %v, want %q", got, err, shell)
	}
}
