package flow

import (
	"encoding/json"
	"reflect"
	"testing"
)

// parseSelector parses the selector of "tap: <src>" on a one-step flow.
func parseSelector(t *testing.T, src string) *Selector {
	t.Helper()
	f := mustParseString(t, "steps:\n  - tap: "+src+"\n")
	return directive[*Tap](t, f.Steps[0]).On
}

func TestSelectorSpec(t *testing.T) {
	cases := []struct {
		src  string
		want map[string]any
	}{
		{`Save`, map[string]any{"text": "Save", "loose": true}},
		{`"Save all"`, map[string]any{"text": "Save all", "loose": true}},
		{`{ id: save }`, map[string]any{"id": "save"}},
		{`{ identifier: save }`, map[string]any{"id": "save"}},
		{`{ text: Save }`, map[string]any{"text": "Save"}},
		{`{ text: { matches: '^Save \d$' } }`, map[string]any{"matches": `^Save \d$`}},
		{`{ role: button, text: OK, id: ok }`, map[string]any{"role": "button", "text": "OK", "id": "ok"}},
		{`{ any: true, after: { text: Danger zone } }`, map[string]any{"any": true, "after": map[string]any{"text": "Danger zone"}}},
		{`{ role: switch, next: Wi-Fi }`, map[string]any{"role": "switch", "next": map[string]any{"text": "Wi-Fi", "loose": true}}},
		{`{ text: Delete, within: { id: card, within: { role: main } } }`, map[string]any{
			"text": "Delete", "within": map[string]any{"id": "card", "within": map[string]any{"role": "main"}},
		}},
	}
	for _, c := range cases {
		sel := parseSelector(t, c.src)
		if got := sel.Spec(); !reflect.DeepEqual(got, c.want) {
			t.Errorf("Spec(%s): got %v, want %v", c.src, got, c.want)
		}
		data, err := json.Marshal(sel)
		if err != nil {
			t.Fatal(err)
		}
		want, _ := json.Marshal(c.want)
		if string(data) != string(want) {
			t.Errorf("MarshalJSON(%s): got %s, want %s", c.src, data, want)
		}
	}
	var nilSel *Selector
	if nilSel.Spec() != nil {
		t.Errorf("Spec of nil: got %v, want nil", nilSel.Spec())
	}
}

func TestSelectorJSONShape(t *testing.T) {
	sel := parseSelector(t, `{ text: { matches: 'a<b' }, role: row, after: { any: true, within: list } }`)
	data, err := json.Marshal(sel)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"after":{"any":true,"within":{"loose":true,"text":"list"}},"matches":"a\u003cb","role":"row"}`
	if string(data) != want {
		t.Errorf("MarshalJSON: got %s, want %s", data, want)
	}
}

func TestSelectorOrderIndependent(t *testing.T) {
	a := parseSelector(t, `{ text: Total, id: total, role: cell, within: { role: table, id: cart } }`)
	b := parseSelector(t, `{ within: { id: cart, role: table }, role: cell, id: total, text: Total }`)
	if !reflect.DeepEqual(a.Spec(), b.Spec()) {
		t.Errorf("Spec: got %v and %v, want equal", a.Spec(), b.Spec())
	}
	if a.CropHash() != b.CropHash() {
		t.Errorf("CropHash: got %s and %s, want equal", a.CropHash(), b.CropHash())
	}
}

// TestCropIdentityMatchesArgent pins the crop identity of selectors without
// scopes to Argent's cropIdentity; the want values were computed with Node's
// JSON.stringify and crypto over [text, textMatches, identifier, role, loose].
func TestCropIdentityMatchesArgent(t *testing.T) {
	cases := []struct {
		sel      *Selector
		identity string
		hash     string
	}{
		{&Selector{Text: "Save", Loose: true}, `["Save",null,null,null,true]`, "80d0e988"},
		{&Selector{ID: "price-card"}, `[null,null,"price-card",null,false]`, "cd3eb8aa"},
		{&Selector{Text: "Total <$5> & \"more\"\u2028é\n", Role: "cell"}, "[\"Total <$5> & \\\"more\\\"\u2028é\\n\",null,null,\"cell\",false]", "e0f3150d"},
		{&Selector{Matches: `^Order #\d+$`, ID: "row"}, `[null,"^Order #\\d+$","row",null,false]`, "642c3220"},
	}
	for _, c := range cases {
		if got := c.sel.CropIdentity(); got != c.identity {
			t.Errorf("CropIdentity(%s): got %s, want %s", c.sel, got, c.identity)
		}
		if got := c.sel.CropHash(); got != c.hash {
			t.Errorf("CropHash(%s): got %s, want %s", c.sel, got, c.hash)
		}
	}
}

func TestCropIdentityScopes(t *testing.T) {
	plain := &Selector{Text: "Delete"}
	inCard := &Selector{Text: "Delete", Within: &Selector{ID: "card"}}
	inRow := &Selector{Text: "Delete", Within: &Selector{ID: "row"}}
	if plain.CropHash() == inCard.CropHash() || inCard.CropHash() == inRow.CropHash() {
		t.Errorf("CropHash: got %s %s %s, want three different hashes", plain.CropHash(), inCard.CropHash(), inRow.CropHash())
	}
	if got, want := inCard.CropIdentity(), `["Delete",null,null,null,false,{"within":{"id":"card"}}]`; got != want {
		t.Errorf("CropIdentity: got %s, want %s", got, want)
	}
	anyAfter := &Selector{Any: true, After: &Selector{Text: "x", Loose: true}}
	if got, want := anyAfter.CropIdentity(), `[null,null,null,null,false,{"after":{"loose":true,"text":"x"},"any":true}]`; got != want {
		t.Errorf("CropIdentity: got %s, want %s", got, want)
	}
}

func TestSelectorString(t *testing.T) {
	cases := map[string]string{
		`Save`:                        `"Save"`,
		`{ id: a, text: B, role: c }`: `id="a" text="B" role="c"`,
		`{ text: { matches: '^x' } }`: `text=/^x/`,
		`{ any: true, after: { text: Danger }, next: z }`: `* after (text="Danger") next ("z")`,
	}
	for src, want := range cases {
		if got := parseSelector(t, src).String(); got != want {
			t.Errorf("String(%s): got %s, want %s", src, got, want)
		}
	}
}

func TestGoOnlySyntax(t *testing.T) {
	cases := []struct {
		pat  string
		want string // "" when the pattern is portable
	}{
		{`^Order #\d+$`, ""},
		{`a|b(c)?[x-z]\.\s\w\b`, ""},
		{`(?:a)(?<n>b)`, ""},
		{`(?i:save)`, ""},
		{`[]a]`, ""},
		{`[^]a]`, ""},
		{`\[[:alpha:]`, ""},
		{`(?i)save`, "an inline flag group (?i)"},
		{`(?U:a+)`, "the U (ungreedy) flag"},
		{`(?P<n>a)`, "(?P<name>…)"},
		{`\Asave`, `\A`},
		{`save\z`, `\z`},
		{`\Q.\E`, `\Q`},
		{`\pL`, `\p (Unicode classes)`},
		{`\P{Greek}`, `\P (Unicode classes)`},
		{`\x{41}`, `\x{…}`},
		{`\101`, `\1 (an octal escape`},
		{`[[:alpha:]]`, "a POSIX class [:alpha:]"},
	}
	for _, c := range cases {
		got := goOnlySyntax(c.pat)
		if c.want == "" && got != "" || c.want != "" && (len(got) < len(c.want) || got[:len(c.want)] != c.want) {
			t.Errorf("goOnlySyntax(%q): got %q, want %q", c.pat, got, c.want)
		}
	}
}

func TestSelectorLines(t *testing.T) {
	f := mustParseString(t, "steps:\n  - tap:\n      text: a\n      within:\n        id: b\n")
	sel := directive[*Tap](t, f.Steps[0]).On
	if sel.Line != 3 || sel.Within.Line != 5 {
		t.Errorf("selector lines: got %d and %d, want 3 and 5", sel.Line, sel.Within.Line)
	}
}
