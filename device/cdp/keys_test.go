package cdp_test

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/toolserver/toolserver/device/cdp"
	"github.com/toolserver/toolserver/device/cdp/cdptest"
)

// pressPage boots id on press.html, where #second has the focus and every
// keydown is logged in #log as key/code/modifiers.
func pressPage(t *testing.T, id string) *cdp.Device {
	t.Helper()
	d := cdptest.Device(t, id)
	if err := d.Launch(ctxT(t), cdptest.Pages(t)+"/press.html"); err != nil {
		t.Fatalf("launch: %v", err)
	}
	return d
}

// value reads the value of the input #id.
func value(t *testing.T, d *cdp.Device, id string) string {
	t.Helper()
	raw, err := d.Eval(ctxT(t), `document.getElementById(`+quote(id)+`).value`)
	if err != nil {
		t.Fatalf("read #%s: %v", id, err)
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		t.Fatalf("read #%s: %v (%s)", id, err, raw)
	}
	return s
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

func TestPressChords(t *testing.T) {
	t.Parallel()
	d := pressPage(t, "chromium-cdp-862x600")
	ctx := ctxT(t)
	// Control+A selects the input's text and Backspace deletes it: the
	// chord reaches Chromium's editing commands, not just the listeners.
	if err := d.Press(ctx, "Control+A", 1); err != nil {
		t.Fatal(err)
	}
	if err := d.Press(ctx, "Backspace", 1); err != nil {
		t.Fatal(err)
	}
	if got := value(t, d, "second"); got != "" {
		t.Fatalf("after Control+A, Backspace: got %q, want an empty input", got)
	}
	// Single characters type, as written; times repeats.
	for _, k := range []string{"a", "B", "/", "7"} {
		if err := d.Press(ctx, k, 1); err != nil {
			t.Fatalf("press %q: %v", k, err)
		}
	}
	if err := d.Press(ctx, "x", 3); err != nil {
		t.Fatal(err)
	}
	if got := value(t, d, "second"); got != "aB/7xxx" {
		t.Fatalf("typed: got %q, want %q", got, "aB/7xxx")
	}
	if err := d.Press(ctx, "backspace", 2); err != nil {
		t.Fatal(err)
	}
	if got := value(t, d, "second"); got != "aB/7x" {
		t.Fatalf("after backspace ×2: got %q, want %q", got, "aB/7x")
	}
	// Shift+Tab moves the focus back, Tab forward.
	if err := d.Press(ctx, "Shift+Tab", 1); err != nil {
		t.Fatal(err)
	}
	if got := text(t, d, "focus"); got != "first" {
		t.Fatalf("after Shift+Tab: focus on %q, want first", got)
	}
	if err := d.Press(ctx, "Tab", 2); err != nil {
		t.Fatal(err)
	}
	if got := text(t, d, "focus"); got != "third" {
		t.Fatalf("after Tab ×2: focus on %q, want third", got)
	}
	// Meta+Enter is a shortcut: it does not submit the form; Enter does.
	if err := d.Press(ctx, "Meta+Enter", 1); err != nil {
		t.Fatal(err)
	}
	if got := text(t, d, "submitted"); got != "" {
		t.Fatalf("after Meta+Enter: got %q, want the form not submitted", got)
	}
	if err := d.Press(ctx, "Enter", 1); err != nil {
		t.Fatal(err)
	}
	if got := text(t, d, "submitted"); got != "submitted " {
		t.Fatalf("after Enter: got %q, want %q", got, "submitted ")
	}
	// The page saw each key with its modifiers, the modifiers themselves
	// pressed first.
	log := text(t, d, "log")
	for _, want := range []string{
		"Control/ControlLeft/C a/KeyA/C Backspace/Backspace/ ",
		"a/KeyA/ B/KeyB/ //", "7/Digit7/ ",
		"Shift/ShiftLeft/S Tab/Tab/S Tab/Tab/ Tab/Tab/ ",
		"Meta/MetaLeft/M Enter/Enter/M Enter/Enter/ ",
	} {
		if !strings.Contains(log, want) {
			t.Errorf("key log: got %q, want it to contain %q", log, want)
		}
	}
}

func TestPressNamedKeysAndErrors(t *testing.T) {
	t.Parallel()
	d := pressPage(t, "chromium-cdp-863x600")
	ctx := ctxT(t)
	// Every name KeyNames lists reaches the page under that DOM name.
	names := cdp.KeyNames()
	for _, n := range []string{"Enter", "Tab", "Escape", "Backspace", "ArrowUp", "ArrowDown", "ArrowLeft", "ArrowRight", "Home", "End", "PageUp", "PageDown", "Space", "F5"} {
		if !slices.Contains(names, n) {
			t.Errorf("KeyNames: got %v, want it to hold %s", names, n)
		}
	}
	if _, err := d.Eval(ctx, `document.getElementById('log').textContent = ''`); err != nil {
		t.Fatal(err)
	}
	var want strings.Builder
	for _, n := range names {
		if n == "Tab" {
			continue // it would move the focus off the page's inputs
		}
		if err := d.Press(ctx, n, 1); err != nil {
			t.Fatalf("press %s: %v", n, err)
		}
		key := n
		if n == "Space" {
			key = " "
		}
		want.WriteString(key + "/")
	}
	var got strings.Builder
	for _, ev := range splitLog(text(t, d, "log")) {
		got.WriteString(ev + "/")
	}
	if got.String() != want.String() {
		t.Errorf("keys the page saw: got %q, want %q", got.String(), want.String())
	}
	for _, bad := range []string{"Enterr", "Control+", "Hyper+A", "Control+Control+A", "ab", ""} {
		err := d.Press(ctx, bad, 1)
		if !errors.Is(err, cdp.ErrUnknownKey) {
			t.Errorf("press %q: got %v, want ErrUnknownKey", bad, err)
		}
	}
	if err := d.Press(ctx, "Enterr", 1); err == nil || !strings.Contains(err.Error(), "PageDown") {
		t.Errorf("unknown key message: got %v, want it to list the names", err)
	}
}

// splitLog returns the key of each event #log recorded without
// modifiers.
func splitLog(log string) []string {
	var out []string
	for _, ev := range strings.Split(log, "/ ") {
		if ev == "" {
			continue
		}
		key, _, _ := strings.Cut(ev, "/")
		out = append(out, key)
	}
	return out
}
