package flow

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"
)

// Selector finds an element on the page. Every field that is set must match
// (logical AND):
//
//   - ID: exact, case-insensitive; the DOM id, data-testid, aria-label or name.
//   - Text: case-insensitive substring of the element's text.
//   - Matches: a regular expression (text: { matches: … }), unanchored and
//     case-sensitive, tested against the element's own text.
//   - Role: the ARIA role, explicit or implied by the tag (case-insensitive).
//   - Any: the universal selector; it has no field of its own and always
//     comes with a scope.
//   - Loose: the bare-string form ("tap: Save"). Text holds the string, and
//     the matcher tries it as an ID first, then as Text.
//
// The scopes narrow by the frames of other elements: Within (inside the
// anchor's frame), After (after the anchor in reading order), Next (the
// nearest such follower). At most MaxSelectorScopes scope keys in one tree.
type Selector struct {
	ID      string
	Text    string
	Matches string
	// Regexp is Matches compiled with Go's regexp, for Go-side matching; the
	// in-page matcher compiles Matches itself (see Spec).
	Regexp *regexp.Regexp
	Role   string
	Any    bool
	Loose  bool
	Within *Selector
	After  *Selector
	Next   *Selector
	// Line and Column locate the selector in the YAML (0 when built by hand).
	Line, Column int
}

// selectorKeys are the keys of a selector map. identifier is Argent's alias
// of id, accepted on parse and never written.
var selectorKeys = []string{"id", "identifier", "text", "role", "any", "within", "after", "next"}

var scopeKeys = []string{"within", "after", "next"}

// Spec returns the selector as a JSON-ready map for an in-page JavaScript
// matcher. Only set fields appear:
//
//	{"id": string, "text": string, "matches": string, "role": string,
//	 "any": true, "loose": true,
//	 "within": {…}, "after": {…}, "next": {…}}
//
// "matches" is a JavaScript-compatible pattern (Parse rejects Go-only
// syntax), to be compiled with new RegExp(matches) and no flags. A loose
// selector is {"text": s, "loose": true}: try s as an id, then as text. The
// map is canonical: it does not depend on the key order of the YAML, and
// encoding/json writes its keys sorted.
func (s *Selector) Spec() map[string]any {
	if s == nil {
		return nil
	}
	m := map[string]any{}
	if s.ID != "" {
		m["id"] = s.ID
	}
	if s.Text != "" {
		m["text"] = s.Text
	}
	if s.Matches != "" {
		m["matches"] = s.Matches
	}
	if s.Role != "" {
		m["role"] = s.Role
	}
	if s.Any {
		m["any"] = true
	}
	if s.Loose {
		m["loose"] = true
	}
	if s.Within != nil {
		m["within"] = s.Within.Spec()
	}
	if s.After != nil {
		m["after"] = s.After.Spec()
	}
	if s.Next != nil {
		m["next"] = s.Next.Spec()
	}
	return m
}

// MarshalJSON encodes Spec.
func (s *Selector) MarshalJSON() ([]byte, error) { return json.Marshal(s.Spec()) }

// String describes the selector for messages, in the YAML's spelling:
// `id="save" role="button" within (text="Card")`, `"Save"` for a loose one.
func (s *Selector) String() string {
	if s == nil {
		return "<nil>"
	}
	if s.Loose {
		return fmt.Sprintf("%q", s.Text)
	}
	var parts []string
	if s.Any {
		parts = append(parts, "*")
	}
	if s.ID != "" {
		parts = append(parts, fmt.Sprintf("id=%q", s.ID))
	}
	if s.Text != "" {
		parts = append(parts, fmt.Sprintf("text=%q", s.Text))
	}
	if s.Matches != "" {
		parts = append(parts, "text=/"+s.Matches+"/")
	}
	if s.Role != "" {
		parts = append(parts, fmt.Sprintf("role=%q", s.Role))
	}
	for _, sc := range s.scopes() {
		parts = append(parts, sc.key+" ("+sc.sel.String()+")")
	}
	return strings.Join(parts, " ")
}

type scope struct {
	key string
	sel *Selector
}

func (s *Selector) scopes() []scope {
	var out []scope
	for _, sc := range []scope{{"within", s.Within}, {"after", s.After}, {"next", s.Next}} {
		if sc.sel != nil {
			out = append(out, sc)
		}
	}
	return out
}

// CropIdentity returns the string whose SHA-256 names a cropOn baseline. For
// a selector without scopes or any it is byte for byte Argent's cropIdentity,
// JSON.stringify([text, matches, id, role, loose]) with null for an unset
// field, so a cropped baseline recorded by Argent is found here. Argent
// leaves scopes out, which lets two cropOn selectors that differ only in
// scope share a baseline; here a selector with scopes or any appends one
// more element, the canonical JSON of those parts, so they never collide.
func (s *Selector) CropIdentity() string {
	var b strings.Builder
	b.WriteByte('[')
	for i, v := range []string{s.Text, s.Matches, s.ID, s.Role} {
		if i > 0 {
			b.WriteByte(',')
		}
		if v == "" {
			b.WriteString("null")
		} else {
			writeJSString(&b, v)
		}
	}
	if s.Loose {
		b.WriteString(",true")
	} else {
		b.WriteString(",false")
	}
	if s.Any || len(s.scopes()) > 0 {
		extra := map[string]any{}
		if s.Any {
			extra["any"] = true
		}
		for _, sc := range s.scopes() {
			extra[sc.key] = sc.sel.Spec()
		}
		b.WriteByte(',')
		writeJSValue(&b, extra)
	}
	b.WriteByte(']')
	return b.String()
}

// CropHash returns the first 8 hex digits of the SHA-256 of CropIdentity,
// the "-crop-<hash>" suffix of a cropOn baseline (docs/product.md, "Devices").
func (s *Selector) CropHash() string {
	sum := sha256.Sum256([]byte(s.CropIdentity()))
	return hex.EncodeToString(sum[:4])
}

// writeJSValue writes v the way JavaScript's JSON.stringify would, with map
// keys sorted so the output is canonical. It knows the types Spec returns.
func writeJSValue(b *strings.Builder, v any) {
	switch v := v.(type) {
	case string:
		writeJSString(b, v)
	case bool:
		if v {
			b.WriteString("true")
		} else {
			b.WriteString("false")
		}
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		b.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				b.WriteByte(',')
			}
			writeJSString(b, k)
			b.WriteByte(':')
			writeJSValue(b, v[k])
		}
		b.WriteByte('}')
	default:
		b.WriteString("null")
	}
}

// writeJSString quotes s as JSON.stringify does. encoding/json differs: it
// escapes <, >, & and U+2028/U+2029, which would change the crop hash.
func writeJSString(b *strings.Builder, s string) {
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\b':
			b.WriteString(`\b`)
		case '\f':
			b.WriteString(`\f`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		default:
			if r < 0x20 {
				fmt.Fprintf(b, `\u%04x`, r)
			} else {
				b.WriteRune(r)
			}
		}
	}
	b.WriteByte('"')
}

// selector parses a selector slot: a bare string (loose) or a map. where is
// the slot's path inside the directive ("on", "text.in", "on.within") and
// prefixes every message. budget is shared by the whole selector tree.
func (p *parser) selector(n *yaml.Node, where string, budget *int) (*Selector, *Error) {
	n = resolve(n)
	if n == nil || isNull(n) {
		return nil, errAt(n, ProblemSelector, "%smissing selector (a string, or a map of id, text, role)", pfx(where))
	}
	switch n.Kind {
	case yaml.ScalarNode:
		s, ok := strValue(n)
		if !ok {
			return nil, errAt(n, ProblemSelector, "%sa selector must be a string or a map, got %s; quote it (%q) to match that text", pfx(where), describe(n), n.Value)
		}
		if err := visibleText(n, where, s); err != nil {
			return nil, err
		}
		return &Selector{Text: s, Loose: true, Line: n.Line, Column: n.Column}, nil
	case yaml.MappingNode:
	default:
		return nil, errAt(n, ProblemSelector, "%sa selector must be a string or a map, got %s", pfx(where), describe(n))
	}
	o, err := newObject(n)
	if err != nil {
		return nil, err
	}
	for _, e := range o.entries {
		if !slices.Contains(selectorKeys, e.name) {
			msg := fmt.Sprintf("%sunknown selector key %q%s (allowed: id, text, role, any, within, after, next)%s", pfx(where), e.name, suggest(e.name, selectorKeys), commaHint(o, e))
			if e.name == "matches" {
				msg = fmt.Sprintf("%sa regex selector is written text: { matches: <regex> }, not matches: at the top of the selector", pfx(where))
			}
			return nil, errAt(e.key, ProblemUnknownKey, "%s", msg)
		}
	}
	sel := &Selector{Line: n.Line, Column: n.Column}
	present, err := p.selectorScopes(sel, o, where, budget)
	if err != nil {
		return nil, err
	}
	if v := o.get("any"); v != nil {
		if b, ok := boolValue(v); !ok || !b {
			return nil, errAt(v, ProblemSelector, "%sany takes only true (it is the universal selector); drop it to select by id, text or role", pfx(where))
		}
		for _, k := range []string{"id", "identifier", "text", "role"} {
			if o.has(k) {
				return nil, errAt(o.key(k), ProblemSelector, "%sany: true already matches every element; drop any or drop %s", pfx(where), k)
			}
		}
		if len(present) == 0 {
			return nil, errAt(v, ProblemSelector, "%sany: true matches every element on the page; pair it with a scope (within, after or next)", pfx(where))
		}
		sel.Any = true
		return sel, nil
	}
	if err := p.selectorMatchers(sel, o, where); err != nil {
		return nil, err
	}
	if sel.ID == "" && sel.Text == "" && sel.Matches == "" && sel.Role == "" {
		if len(present) > 0 {
			return nil, errAt(n, ProblemSelector, "%s%s only narrows where to look; the selector still needs its own id, text or role (or any: true for any element)", pfx(where), strings.Join(present, "/"))
		}
		return nil, errAt(n, ProblemSelector, "%sa selector needs at least one of id, text or role", pfx(where))
	}
	return sel, nil
}

// selectorScopes parses the scopes of a selector map (within, after, next)
// into sel and returns the keys present, for the messages of a selector
// that has only scopes.
func (p *parser) selectorScopes(sel *Selector, o *object, where string, budget *int) ([]string, *Error) {
	var present []string
	for _, k := range scopeKeys {
		v := o.get(k)
		if v == nil {
			continue
		}
		present = append(present, k)
		// One budget for the whole tree, spent per scope key, so sibling
		// branches cannot multiply (Argent counts the same way).
		*budget--
		if *budget < 0 {
			return nil, errAt(o.key(k), ProblemSelector, "%sa selector carries more than %d scopes (within/after/next) in total", pfx(where), MaxSelectorScopes)
		}
		inner, err := p.selector(v, join(where, k), budget)
		if err != nil {
			return nil, err
		}
		switch k {
		case "within":
			sel.Within = inner
		case "after":
			sel.After = inner
		case "next":
			sel.Next = inner
		}
	}
	return present, nil
}

// selectorMatchers parses what a selector map matches the element itself
// by: id (or its alias identifier), role and text.
func (p *parser) selectorMatchers(sel *Selector, o *object, where string) *Error {
	if o.has("id") && o.has("identifier") {
		return errAt(o.key("identifier"), ProblemSelector, "%sa selector takes id or identifier (its alias), not both", pfx(where))
	}
	for _, k := range []string{"id", "identifier", "role"} {
		v := o.get(k)
		if v == nil {
			continue
		}
		s, ok := strValue(v)
		if !ok || s == "" {
			return errAt(v, ProblemSelector, "%s%s must be a non-empty string, got %s", pfx(where), k, describe(v))
		}
		if k == "role" {
			sel.Role = s
		} else {
			sel.ID = s
		}
	}
	if v := o.get("text"); v != nil {
		return p.selectorText(sel, v, where)
	}
	return nil
}

// selectorText parses a selector's text: a string or { matches: <regex> }.
func (p *parser) selectorText(sel *Selector, v *yaml.Node, where string) *Error {
	v = resolve(v)
	if v.Kind == yaml.MappingNode {
		o, err := newObject(v)
		if err != nil {
			return err
		}
		if err := o.only(join(where, "text"), "matches"); err != nil {
			return err
		}
		m := o.get("matches")
		pat, ok := strValue(m)
		if m == nil || !ok || pat == "" {
			return errAt(v, ProblemSelector, "%stext: { matches } needs a non-empty regex string; for a substring write text: <string>", pfx(where))
		}
		re, err := compilePattern(m, join(where, "text.matches"), pat)
		if err != nil {
			return err
		}
		sel.Matches, sel.Regexp = pat, re
		return nil
	}
	s, ok := strValue(v)
	if !ok {
		return errAt(v, ProblemSelector, "%stext must be a string or { matches: <regex> }, got %s; quote it (%q)", pfx(where), describe(v), v.Value)
	}
	if err := visibleText(v, join(where, "text"), s); err != nil {
		return err
	}
	sel.Text = s
	return nil
}

// visibleText rejects a text that renders as nothing: empty, whitespace, or
// only zero-width, control and private-use (icon-font) characters. Such a
// selector shows as empty in the YAML and matches unpredictably (Argent's
// hasVisibleText).
func visibleText(n *yaml.Node, where, s string) *Error {
	for _, r := range s {
		if unicode.Is(unicode.Cf, r) || unicode.Is(unicode.Co, r) || unicode.Is(unicode.Cc, r) || unicode.IsSpace(r) {
			continue
		}
		return nil
	}
	if s == "" {
		return errAt(n, ProblemSelector, "%sthe selector text is empty", pfx(where))
	}
	return errAt(n, ProblemSelector, "%sthe selector text %q has no visible character (zero-width and icon-font characters render as nothing); select by id or role instead", pfx(where), s)
}

// compilePattern compiles a flow regex with Go's regexp and also rejects the
// syntax Go accepts but JavaScript reads differently or not at all: the
// in-page matcher runs the same pattern with new RegExp(pattern), so a
// pattern must mean the same thing in both engines. (JavaScript-only syntax
// such as lookaround and backreferences is rejected by Go itself.)
func compilePattern(n *yaml.Node, where, pat string) (*regexp.Regexp, *Error) {
	re, err := regexp.Compile(pat)
	if err != nil {
		return nil, &Error{Line: n.Line, Column: n.Column, Problem: ProblemRegexp, Err: err,
			Msg: fmt.Sprintf("%sinvalid regex %q: %v", pfx(where), pat, err)}
	}
	if why := goOnlySyntax(pat); why != "" {
		return nil, errAt(n, ProblemRegexp, "%sregex %q uses %s, which JavaScript does not read the same way; flows match with JavaScript regular expressions", pfx(where), pat, why)
	}
	return re, nil
}

// The patterns are compiled on first use, not before main, which every
// command pays (docs/performance.md, "Start-up").
var (
	inlineFlags = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^\(\?[imsU-]*\)`) })
	groupFlags  = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^\(\?[imsU-]*:`) })
	posixClass  = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^\[:[a-z]+:\]`) })
)

// goOnlySyntax returns a description of the first Go-only construct in pat,
// or "" when pat means the same in Go and JavaScript.
func goOnlySyntax(pat string) string {
	inClass := false
	for i := 0; i < len(pat); {
		c := pat[i]
		switch {
		case c == '\\' && i+1 < len(pat):
			switch e := pat[i+1]; e {
			case 'A', 'z', 'Q', 'E', 'C':
				return `\` + string(e)
			case 'p', 'P':
				return `\` + string(e) + " (Unicode classes)"
			case 'x':
				if i+2 < len(pat) && pat[i+2] == '{' {
					return `\x{…}`
				}
			case '1', '2', '3', '4', '5', '6', '7', '8', '9':
				return `\` + string(e) + " (an octal escape in Go, a backreference in JavaScript)"
			}
			i += 2
			continue
		case inClass && c == '[' && posixClass().MatchString(pat[i:]):
			return "a POSIX class " + posixClass().FindString(pat[i:])
		case inClass && c == ']':
			inClass = false
		case !inClass && c == '[':
			inClass = true
			// A ']' right after '[' or '[^' is a literal in both engines.
			if strings.HasPrefix(pat[i:], "[^]") {
				i += 3
				continue
			}
			if strings.HasPrefix(pat[i:], "[]") {
				i += 2
				continue
			}
		case !inClass && c == '(' && strings.HasPrefix(pat[i:], "(?P<"):
			return "(?P<name>…) (JavaScript spells a named group (?<name>…))"
		case !inClass && c == '(' && inlineFlags().MatchString(pat[i:]):
			return "an inline flag group " + inlineFlags().FindString(pat[i:])
		case !inClass && c == '(' && groupFlags().MatchString(pat[i:]) && strings.Contains(groupFlags().FindString(pat[i:]), "U"):
			return "the U (ungreedy) flag"
		}
		_, size := utf8.DecodeRuneInString(pat[i:])
		i += size
	}
	return ""
}

// node encodes the selector as its YAML spelling: a bare string for a loose
// selector, else a flow-style map in a fixed key order. id is always written
// id, never its alias identifier.
func (s *Selector) node() (*yaml.Node, error) {
	if s == nil {
		return nil, errors.New("flow: nil selector")
	}
	if s.Loose {
		if s.ID != "" || s.Matches != "" || s.Role != "" || s.Any || len(s.scopes()) > 0 {
			return nil, fmt.Errorf("flow: a loose selector holds only Text, got %s", s)
		}
		return strNode(s.Text), nil
	}
	if s.Text != "" && s.Matches != "" {
		return nil, fmt.Errorf("flow: a selector holds Text or Matches, not both (%s)", s)
	}
	m := mapNode(true)
	if s.Any {
		addPair(m, "any", boolNode(true))
	}
	if s.ID != "" {
		addPair(m, "id", strNode(s.ID))
	}
	switch {
	case s.Text != "":
		addPair(m, "text", strNode(s.Text))
	case s.Matches != "":
		addPair(m, "text", addPair(mapNode(true), "matches", strNode(s.Matches)))
	}
	if s.Role != "" {
		addPair(m, "role", strNode(s.Role))
	}
	for _, sc := range s.scopes() {
		n, err := sc.sel.node()
		if err != nil {
			return nil, err
		}
		addPair(m, sc.key, n)
	}
	return m, nil
}
