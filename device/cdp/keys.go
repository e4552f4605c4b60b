package cdp

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/chromedp/cdproto/input"
)

// ErrUnknownKey is the error of a key or chord that names no key.
var ErrUnknownKey = errors.New("unknown key")

// The bits of Input.dispatchKeyEvent's modifiers field.
const (
	modAlt   int64 = 1
	modCtrl  int64 = 2
	modMeta  int64 = 4
	modShift int64 = 8
)

// modifier is a key a chord holds down while it presses its last key.
type modifier struct {
	k   key
	bit int64
}

// modifiers are the modifier names of a chord, lower-cased, with the
// spellings people bring from other tools (ctrl, cmd, option).
var modifiers = map[string]modifier{
	"control": {key{"Control", "ControlLeft", 17, ""}, modCtrl},
	"ctrl":    {key{"Control", "ControlLeft", 17, ""}, modCtrl},
	"shift":   {key{"Shift", "ShiftLeft", 16, ""}, modShift},
	"alt":     {key{"Alt", "AltLeft", 18, ""}, modAlt},
	"option":  {key{"Alt", "AltLeft", 18, ""}, modAlt},
	"meta":    {key{"Meta", "MetaLeft", 91, ""}, modMeta},
	"cmd":     {key{"Meta", "MetaLeft", 91, ""}, modMeta},
	"command": {key{"Meta", "MetaLeft", 91, ""}, modMeta},
}

// chord is a key pressed with modifiers held: Control+A, Shift+Tab.
type chord struct {
	held []modifier
	mods int64
	main key
}

// KeyNames returns the key names Press takes besides single characters,
// in the DOM's spelling (KeyboardEvent.key), for messages and the flow
// format's documentation.
func KeyNames() []string {
	seen := map[string]bool{}
	var out []string
	for _, k := range namedKeys {
		name := k.key
		if name == " " {
			name = "Space"
		}
		if !seen[name] {
			seen[name] = true
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}

// parseChord reads a key name ("Enter", "enter", "arrow-up", "PageDown"),
// a single character ("a", "/"), or either after modifiers joined by "+"
// ("Control+A", "Shift+Tab", "Control++" for the plus key).
func parseChord(name string) (chord, error) {
	parts := strings.Split(name, "+")
	if strings.HasSuffix(name, "+") && len(name) > 1 {
		// "Control++": the last key is the plus sign itself.
		parts = append(strings.Split(strings.TrimSuffix(name, "++"), "+"), "+")
	} else if name == "+" {
		parts = []string{"+"}
	}
	var c chord
	for _, p := range parts[:len(parts)-1] {
		m, ok := modifiers[strings.ToLower(strings.TrimSpace(p))]
		if !ok {
			return chord{}, unknownKey(name, fmt.Sprintf("%q is not a modifier (Control, Shift, Alt, Meta)", p))
		}
		if c.mods&m.bit != 0 {
			return chord{}, unknownKey(name, fmt.Sprintf("%s is named twice", m.k.key))
		}
		c.mods |= m.bit
		c.held = append(c.held, m)
	}
	last := parts[len(parts)-1]
	if k, ok := lookupKey(last); ok && last != "" {
		c.main = k
	} else if r, size := utf8.DecodeRuneInString(last); size == len(last) && size > 0 && r != utf8.RuneError && unicode.IsPrint(r) && !unicode.IsSpace(r) {
		c.main = charKey(r, c.mods)
	} else {
		return chord{}, unknownKey(name, "")
	}
	if c.mods&(modCtrl|modAlt|modMeta) != 0 {
		// A shortcut types nothing: a held Control, Alt or Meta makes the
		// key a command, as on a real keyboard.
		c.main.text = ""
	}
	return c, nil
}

func unknownKey(name, why string) error {
	if why != "" {
		why += "; "
	}
	return fmt.Errorf("%w %q: %swant a single character, one of %s, or either after modifiers joined by + (Control+A, Shift+Tab, Meta+Enter)",
		ErrUnknownKey, name, why, strings.Join(KeyNames(), ", "))
}

// charKey is the key that types r. A letter pressed with Control, Alt or
// Meta reads as a real keyboard sends it: lower-case, upper-case with
// Shift.
func charKey(r rune, mods int64) key {
	s := string(r)
	k := key{key: s, text: s}
	switch {
	case r < 128 && unicode.IsLetter(r):
		up := strings.ToUpper(s)
		k.code, k.vk = "Key"+up, int64(up[0])
		if mods&(modCtrl|modAlt|modMeta) != 0 {
			k.key = strings.ToLower(s)
			if mods&modShift != 0 {
				k.key = up
			}
		}
	case r >= '0' && r <= '9':
		k.code, k.vk = "Digit"+s, int64(r)
	}
	return k
}

// keyEvent sends one key event of k with the modifiers mods held.
func keyEvent(tab context.Context, typ input.DispatchKeyEventType, k key, mods int64) error {
	p := input.DispatchKeyEventParams{Type: typ, Modifiers: mods, Key: k.key, Code: k.code, WindowsVirtualKeyCode: k.vk, NativeVirtualKeyCode: k.vk}
	if typ == input.DispatchKeyEventTypeKeyDown {
		p.Text, p.UnmodifiedText = k.text, k.text
	}
	return send(tab, input.DispatchKeyEvent, p)
}

// pressChord presses each modifier, then the key, and releases them in
// the reverse order, so the page sees what a person's hands would make.
func pressChord(tab context.Context, c chord) error {
	var held int64
	for _, m := range c.held {
		held |= m.bit
		if err := keyEvent(tab, input.DispatchKeyEventTypeRawKeyDown, m.k, held); err != nil {
			return err
		}
	}
	down := input.DispatchKeyEventTypeKeyDown
	if c.main.text == "" {
		down = input.DispatchKeyEventTypeRawKeyDown
	}
	if err := keyEvent(tab, down, c.main, c.mods); err != nil {
		return err
	}
	if err := keyEvent(tab, input.DispatchKeyEventTypeKeyUp, c.main, c.mods); err != nil {
		return err
	}
	for _, m := range slices.Backward(c.held) {
		held &^= m.bit
		if err := keyEvent(tab, input.DispatchKeyEventTypeKeyUp, m.k, held); err != nil {
			return err
		}
	}
	return nil
}

// Press presses a key or a chord times times on the focused element:
// a name of KeyNames (any case, and the keyboard tool's spellings such as
// arrow-up), a single character, or either after modifiers joined by +
// (Control+A, Shift+Tab, Meta+Enter). A name it does not know is an
// ErrUnknownKey before anything is sent.
func (d *Device) Press(ctx context.Context, name string, times int) error {
	c, err := parseChord(name)
	if err != nil {
		return err
	}
	return d.call(ctx, "key "+name, func(tab context.Context) error {
		for range max(times, 1) {
			if err := pressChord(tab, c); err != nil {
				return err
			}
		}
		return nil
	})
}
