package flow

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// loadSchema decodes Schema() into a generic JSON value.
func loadSchema(t *testing.T) map[string]any {
	t.Helper()
	var s map[string]any
	if err := json.Unmarshal(Schema(), &s); err != nil {
		t.Fatalf("Schema is not valid JSON: %v", err)
	}
	return s
}

func TestSchemaIsJSON(t *testing.T) {
	out := Schema()
	if !strings.HasSuffix(string(out), "}\n") || strings.HasSuffix(string(out), "\n\n") {
		t.Errorf("Schema: got %q at the end, want one trailing newline", out[len(out)-3:])
	}
	s := loadSchema(t)
	if got, want := s["$schema"], "https://json-schema.org/draft/2020-12/schema"; got != want {
		t.Errorf("$schema: got %v, want %v", got, want)
	}
	if !json.Valid(out) {
		t.Errorf("json.Valid(Schema()): got false, want true")
	}
}

// schemaDirectives maps each directive the schema lists in $defs/step to
// the schema of its value.
func schemaDirectives(t *testing.T, s map[string]any) map[Kind]map[string]any {
	t.Helper()
	v := &validator{root: s}
	out := map[Kind]map[string]any{}
	for name, body := range v.def("step")["properties"].(map[string]any) {
		out[Kind(name)] = body.(map[string]any)
	}
	return out
}

// schemaSiblings maps each directive to the branch of $defs/step that
// applies when the step holds it: its if is {type: object, required: [kind]}.
func schemaSiblings(t *testing.T, s map[string]any) map[Kind]map[string]any {
	t.Helper()
	v := &validator{root: s}
	out := map[Kind]map[string]any{}
	for _, c := range asList(v.def("step")["allOf"]) {
		cond := c.(map[string]any)
		req := asList(cond["if"].(map[string]any)["required"])
		if len(req) == 1 && slices.Contains(allKinds, Kind(req[0].(string))) {
			out[Kind(req[0].(string))] = cond["then"].(map[string]any)
		}
	}
	return out
}

// markdownExample returns the YAML block of a markdownDescription.
func markdownExample(md string) (string, bool) {
	_, rest, ok := strings.Cut(md, "```yaml\n")
	if !ok {
		return "", false
	}
	example, _, ok := strings.Cut(rest, "\n```")
	return example, ok
}

func TestSchemaListsEveryDirective(t *testing.T) {
	s := loadSchema(t)
	var got []string
	for k, body := range schemaDirectives(t, s) {
		got = append(got, string(k))
		// What an editor shows on hover and beside each completion.
		desc, _ := body["description"].(string)
		md, _ := body["markdownDescription"].(string)
		if desc == "" {
			t.Errorf("%s: got no description, want one", k)
		}
		example, ok := markdownExample(md)
		if !ok || !strings.HasPrefix(example, "- "+string(k)+": ") {
			t.Errorf("%s: markdownDescription %q holds no example starting %q", k, md, "- "+string(k)+": ")
			continue
		}
		// The example is a step the parser and the schema both accept.
		src := "steps:\n  " + strings.ReplaceAll(example, "\n", "\n  ") + "\n"
		if _, err := Parse(string(k)+"-example.yaml", []byte(src)); err != nil {
			t.Errorf("%s: the example %q does not parse: %v", k, example, err)
		}
		v := &validator{root: s}
		if errs := v.validate(s, yamlToJSON(t, []byte(src)), "$"); len(errs) > 0 {
			t.Errorf("%s: the example %q fails the schema: %v", k, example, errs)
		}
	}
	var want []string
	for _, k := range allKinds {
		want = append(want, string(k))
	}
	sort.Strings(got)
	sort.Strings(want)
	if !slices.Equal(got, want) {
		t.Errorf("schema directives: got %v, want %v", got, want)
	}
	// The keys a step may hold: the directives and their siblings, so a
	// language server reports any other key as not a directive.
	v := &validator{root: s}
	var names []string
	for _, n := range asList(v.def("step")["propertyNames"].(map[string]any)["if"].(map[string]any)["enum"]) {
		names = append(names, n.(string))
	}
	wantNames := slices.Clone(want)
	for _, sib := range stepSiblings {
		wantNames = append(wantNames, sib...)
	}
	sort.Strings(names)
	sort.Strings(wantNames)
	if !slices.Equal(names, wantNames) {
		t.Errorf("step key names: got %v, want %v", names, wantNames)
	}
}

// schemaHint returns the directive the schema's hint-<directive> patterns
// name for a step key that is not a directive, or "".
func schemaHint(t *testing.T, v *validator, key string) Kind {
	t.Helper()
	var hits []Kind
	for _, k := range allKinds {
		hint := v.def("hint-" + string(k))
		if len(v.validate(hint, key, "$")) == 0 {
			hits = append(hits, k)
		}
	}
	if len(hits) > 1 {
		t.Errorf("%q: matches the hints of %v, want one at most", key, hits)
	}
	if len(hits) == 0 {
		return ""
	}
	return hits[0]
}

// TestSchemaHintsMatchParser: the "did you mean" a language server shows
// for a key that is another tool's word for a directive, or a directive
// spelt another way, is the one toolserver flow list gives.
func TestSchemaHintsMatchParser(t *testing.T) {
	s := loadSchema(t)
	v := &validator{root: s}
	keys := []string{"longPress", "long_press", "LongPress", "scrollTo", "scroll_to", "Tap", "TAP", "tapOn", "inputText", "take-screenshot", "assertVisible", "runFlow", "wait_for", "Press_Key"}
	for syn := range directiveSynonyms {
		keys = append(keys, syn)
	}
	hint := regexp.MustCompile(`\(did you mean "([^"]+)"\?\)`)
	for _, key := range keys {
		m := hint.FindStringSubmatch(unknownDirective(key))
		if m == nil {
			t.Fatalf("%q: unknownDirective gives no hint: %s", key, unknownDirective(key))
		}
		if got := schemaHint(t, v, key); got != Kind(m[1]) {
			t.Errorf("%q: got the schema's hint %q, want %q as flow list says", key, got, m[1])
		}
	}
	// No hint for a word that means nothing here, nor for a sibling.
	for _, key := range []string{"foo", "steps", "args", "delayMs", "tapx", "clicks"} {
		if got := schemaHint(t, v, key); got != "" {
			t.Errorf("%q: got the schema's hint %q, want none", key, got)
		}
	}
}

// TestSchemaOptionsMatchParser compares, for every directive, the keys the
// schema allows in its body (and beside it in the step) with the parser's
// tables, so neither side can grow an option alone.
func TestSchemaOptionsMatchParser(t *testing.T) {
	s := loadSchema(t)
	v := &validator{root: s}
	branches := schemaSiblings(t, s)
	for kind, body := range schemaDirectives(t, s) {
		got := v.bodyKeys(body)
		want := slices.Sorted(slices.Values(directiveOptions[kind]))
		if !slices.Equal(got, want) {
			t.Errorf("%s options: got %v, want %v", kind, got, want)
		}
		then, ok := branches[kind]
		if !ok {
			t.Errorf("%s: no if/then branch in $defs/step", kind)
			continue
		}
		var siblings []string
		for _, k := range asList(then["propertyNames"].(map[string]any)["enum"]) {
			if k != string(kind) {
				siblings = append(siblings, k.(string))
			}
		}
		sort.Strings(siblings)
		wantSib := slices.Sorted(slices.Values(stepSiblings[kind]))
		if !slices.Equal(siblings, wantSib) {
			t.Errorf("%s step keys: got %v, want %v", kind, siblings, wantSib)
		}
		// The siblings have their schema in the same branch, where the
		// language server offers them once the directive is written.
		var described []string
		for k := range asMap(then).props() {
			described = append(described, k)
		}
		sort.Strings(described)
		if !slices.Equal(described, wantSib) {
			t.Errorf("%s sibling schemas: got %v, want %v", kind, described, wantSib)
		}
	}
	var sel []string
	for k := range v.def("selectorMap")["properties"].(map[string]any) {
		sel = append(sel, k)
	}
	sort.Strings(sel)
	if want := slices.Sorted(slices.Values(selectorKeys)); !slices.Equal(sel, want) {
		t.Errorf("selector keys: got %v, want %v", sel, want)
	}
	var text []string
	for k := range v.def("textCheck")["properties"].(map[string]any) {
		text = append(text, k)
	}
	sort.Strings(text)
	if want := slices.Sorted(slices.Values(textCheckKeys)); !slices.Equal(text, want) {
		t.Errorf("text condition keys: got %v, want %v", text, want)
	}
	var top []string
	for k := range s["properties"].(map[string]any) {
		top = append(top, k)
	}
	sort.Strings(top)
	if want := slices.Sorted(slices.Values(topLevelKeys)); !slices.Equal(top, want) {
		t.Errorf("top-level keys: got %v, want %v", top, want)
	}
}

// yamlToJSON reads a flow file as an editor's YAML plugin would before
// validating it: plain YAML decoded to JSON values.
func yamlToJSON(t *testing.T, data []byte) any {
	t.Helper()
	var v any
	if err := yaml.Unmarshal(data, &v); err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// repoFlows lists the flow files of the repository: testdata/valid and
// every .argent/flows/*.yaml (examples/, bench/, cmd/toolserver/testdata/),
// but those under a testdata/invalid (internal/compat's project of flows
// that are wrong on purpose).
func repoFlows(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob("testdata/valid/*.yaml")
	if err != nil {
		t.Fatal(err)
	}
	err = filepath.WalkDir("..", func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == ".cache" || d.Name() == "node_modules") {
			return filepath.SkipDir
		}
		if d.IsDir() && d.Name() == "invalid" && filepath.Base(filepath.Dir(path)) == "testdata" {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(path, ".yaml") && filepath.Base(filepath.Dir(path)) == "flows" && filepath.Base(filepath.Dir(filepath.Dir(path))) == ".argent" {
			files = append(files, path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 20 {
		t.Fatalf("found %d flow files in the repository, want the examples', bench's and testdata's: %v", len(files), files)
	}
	return files
}

func TestSchemaAcceptsValidFlows(t *testing.T) {
	s := loadSchema(t)
	for _, path := range repoFlows(t) {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		v := &validator{root: s}
		if errs := v.validate(s, yamlToJSON(t, data), "$"); len(errs) > 0 {
			t.Errorf("%s: got schema errors %v, want none", path, errs)
		}
		if v.unknown != nil {
			t.Fatalf("the test validator does not implement %v", v.unknown)
		}
	}
}

// TestSchemaRejectsInvalidFlows: the invalid flows a schema can express
// (as opposed to a regex that does not compile or a bad secret name) must
// fail schema validation too.
func TestSchemaRejectsInvalidFlows(t *testing.T) {
	s := loadSchema(t)
	files := []string{
		"unknown-option.yaml", "unknown-directive.yaml", "else.yaml", "two-directives.yaml",
		"empty-step.yaml", "bad-selector.yaml", "assert-timeout.yaml", "nested-when.yaml",
		"bare-list.yaml", "top-level-key.yaml", "wrong-type.yaml", "several.yaml",
	}
	for _, name := range files {
		data, err := os.ReadFile(filepath.Join("testdata/invalid", name))
		if err != nil {
			t.Fatal(err)
		}
		v := &validator{root: s}
		if errs := v.validate(s, yamlToJSON(t, data), "$"); len(errs) == 0 {
			t.Errorf("%s: got no schema errors, want some", name)
		}
	}
	for _, src := range []string{
		"steps: [tap: { any: true }]",
		"steps: [tap: { id: a, identifier: b }]",
		"steps: [tap: { x: 2, y: 0 }]",
		"steps: [snapshot: a/b]",
		"steps: [run: /abs.yaml]",
		"steps: [script: { path: a.js }]",
		"steps: [pinch: { scale: 1 }]",
		"steps: [await: { text: { in: a, contains: x, equals: y } }]",
		"steps: [when: { platform: windows }, steps: [echo: x]]",
		"steps: [snapshot: { name: a, maxDiffPixels: -1 }]",
		"steps: [snapshot: { name: a, maxDiffPixels: 1.5 }]",
		"steps: [snapshot: { name: a, threshold: 2 }]",
		"steps: [snapshot: { name: a, fullPage: yes }]",
		"steps: [snapshot: { name: a, fullPage: true, cropOn: b }]",
		"steps: [snapshot: { name: a, mask: [] }]",
		"steps: [snapshot: { name: a, mask: [{ idd: b }] }]",
		"steps: [snapshot: { name: a, mask: [" + strings.Repeat("b, ", 32) + "b] }]",
		"steps: [snapshot: { name: a, mask: b, maskColor: red }]",
		"steps: [snapshot: { name: a, maskColor: \"#000000\" }]",
		"steps: [snapshot: { name: a, hide: 5 }]",
		"steps: [snapshot: { name: a, style: \"\" }]",
		"steps: [snapshot: { name: a, style: " + strings.Repeat("x", 65537) + " }]",
		"steps: [snapshot: { name: a, stylePath: /abs.css }]",
		"steps: [snapshot: { name: a, stylePath: a.scss }]",
		"steps: [snapshot: { name: a, stylePath: 'a\\b.css' }]",
		"steps: [snapshot: { name: a, stylePath: dir/.css }]",
		"steps: [snapshot: { name: a, maskColour: \"#000000\" }]",
		// The typos and stray keys a language server reports at the step.
		"steps: [click: Go]",
		"steps: [{}]",
		"steps: [steps: [echo: x]]",
		"steps: [args: {}]",
		"steps: [{ tap: a, args: {} }]",
		"steps: [{ tool: x, steps: [echo: y] }]",
		"steps: [{ tool: x, delay: 5 }]",
		"steps: [{ when: { visible: a } }]",
		"steps: [{ when: { visible: a }, steps: [click: b] }]",
		"steps: [{ tap: a, snapshot: b }]",
	} {
		v := &validator{root: s}
		if errs := v.validate(s, yamlToJSON(t, []byte(src)), "$"); len(errs) == 0 {
			t.Errorf("%s: got no schema errors, want some", src)
		}
	}
}

// validator checks a JSON value against the subset of draft 2020-12 that
// schema.json uses. A keyword it does not know is recorded in unknown, so a
// schema edit that needs more fails the test instead of passing unchecked.
type validator struct {
	root    map[string]any
	unknown []string
}

// ignoredKeywords annotate without validating: errorMessage is the message
// yaml-language-server shows instead of its own for that schema's failure.
var ignoredKeywords = map[string]bool{"$schema": true, "$id": true, "$defs": true, "title": true, "description": true, "markdownDescription": true, "errorMessage": true}

func (v *validator) def(name string) map[string]any {
	return v.root["$defs"].(map[string]any)[name].(map[string]any)
}

// deref follows a local "#/$defs/name" reference.
func (v *validator) deref(s map[string]any) map[string]any {
	for {
		ref, ok := s["$ref"].(string)
		if !ok {
			return s
		}
		s = v.def(strings.TrimPrefix(ref, "#/$defs/"))
	}
}

// bodyKeys collects the property names a directive body allows, through
// $ref, oneOf, anyOf and allOf, but not into selectors: those are the
// selector's keys, checked separately.
func (v *validator) bodyKeys(s map[string]any) []string {
	seen := map[string]bool{}
	var walk func(map[string]any)
	walk = func(s map[string]any) {
		if ref, ok := s["$ref"].(string); ok {
			if ref == "#/$defs/selector" || ref == "#/$defs/looseSelector" || ref == "#/$defs/selectorMap" {
				return
			}
			walk(v.deref(s))
		}
		for k := range asMap(s).props() {
			seen[k] = true
		}
		for _, kw := range []string{"oneOf", "anyOf", "allOf"} {
			for _, alt := range asList(s[kw]) {
				walk(alt.(map[string]any))
			}
		}
	}
	walk(s)
	return slices.Sorted(func(yield func(string) bool) {
		for k := range seen {
			if !yield(k) {
				return
			}
		}
	})
}

func asList(v any) []any {
	l, _ := v.([]any)
	return l
}

// asMap reads a schema object's properties, which may be absent.
type asMap map[string]any

func (s asMap) props() map[string]any {
	p, _ := s["properties"].(map[string]any)
	return p
}

// validate returns the problems of x against schema s at the JSON path at.
func (v *validator) validate(s map[string]any, x any, at string) []string {
	var errs []string
	fail := func(format string, a ...any) { errs = append(errs, at+": "+fmt.Sprintf(format, a...)) }
	for kw, arg := range s {
		switch kw {
		case "$ref":
			errs = append(errs, v.validate(v.deref(map[string]any{"$ref": arg}), x, at)...)
		case "type":
			types := asList(arg)
			if str, ok := arg.(string); ok {
				types = []any{str}
			}
			if !slices.ContainsFunc(types, func(t any) bool { return hasType(x, t.(string)) }) {
				fail("got %T, want type %v", x, arg)
			}
		case "enum":
			if !slices.ContainsFunc(asList(arg), func(e any) bool { return equalJSON(e, x) }) {
				fail("got %v, want one of %v", x, arg)
			}
		case "const":
			if !equalJSON(arg, x) {
				fail("got %v, want %v", x, arg)
			}
		case "properties":
			if m, ok := x.(map[string]any); ok {
				for k, ps := range arg.(map[string]any) {
					if val, ok := m[k]; ok {
						errs = append(errs, v.validate(ps.(map[string]any), val, at+"."+k)...)
					}
				}
			}
		case "additionalProperties":
			if m, ok := x.(map[string]any); ok && arg == false {
				for k := range m {
					if _, ok := asMap(s).props()[k]; !ok {
						fail("unknown property %q", k)
					}
				}
			}
		case "required":
			if m, ok := x.(map[string]any); ok {
				for _, k := range asList(arg) {
					if _, ok := m[k.(string)]; !ok {
						fail("missing %q", k)
					}
				}
			}
		case "propertyNames":
			if m, ok := x.(map[string]any); ok {
				for k := range m {
					errs = append(errs, v.validate(arg.(map[string]any), k, at+"."+k+" (name)")...)
				}
			}
		case "minProperties":
			if m, ok := x.(map[string]any); ok && float64(len(m)) < arg.(float64) {
				fail("got %d properties, want at least %v", len(m), arg)
			}
		case "items":
			for i, item := range asList(x) {
				errs = append(errs, v.validate(arg.(map[string]any), item, fmt.Sprintf("%s[%d]", at, i))...)
			}
		case "minItems":
			if l, ok := x.([]any); ok && float64(len(l)) < arg.(float64) {
				fail("got %d items, want at least %v", len(l), arg)
			}
		case "minLength":
			if str, ok := x.(string); ok && float64(len([]rune(str))) < arg.(float64) {
				fail("got %q, want at least %v characters", str, arg)
			}
		case "maxLength":
			if str, ok := x.(string); ok && float64(len([]rune(str))) > arg.(float64) {
				fail("got %d characters, want at most %v", len([]rune(str)), arg)
			}
		case "maxItems":
			if l, ok := x.([]any); ok && float64(len(l)) > arg.(float64) {
				fail("got %d items, want at most %v", len(l), arg)
			}
		case "pattern":
			if str, ok := x.(string); ok && !regexp.MustCompile(arg.(string)).MatchString(str) {
				fail("got %q, want a match for %s", str, arg)
			}
		case "minimum", "maximum", "exclusiveMinimum":
			n, ok := x.(float64)
			lim := arg.(float64)
			if ok && (kw == "minimum" && n < lim || kw == "maximum" && n > lim || kw == "exclusiveMinimum" && n <= lim) {
				fail("got %v, want %s %v", n, kw, lim)
			}
		case "oneOf", "anyOf":
			n := 0
			for _, alt := range asList(arg) {
				if len(v.validate(alt.(map[string]any), x, at)) == 0 {
					n++
				}
			}
			if kw == "oneOf" && n != 1 || kw == "anyOf" && n == 0 {
				fail("%d alternatives of %s match", n, kw)
			}
		case "allOf":
			for _, alt := range asList(arg) {
				errs = append(errs, v.validate(alt.(map[string]any), x, at)...)
			}
		case "not":
			if len(v.validate(arg.(map[string]any), x, at)) == 0 {
				fail("matches a schema under not")
			}
		case "if":
			if len(v.validate(arg.(map[string]any), x, at)) == 0 {
				if then, ok := s["then"].(map[string]any); ok {
					errs = append(errs, v.validate(then, x, at)...)
				}
			}
		case "else":
			if len(v.validate(s["if"].(map[string]any), x, at)) > 0 {
				errs = append(errs, v.validate(arg.(map[string]any), x, at)...)
			}
		case "then":
			// Applied with "if".
		default:
			if !ignoredKeywords[kw] && !slices.Contains(v.unknown, kw) {
				v.unknown = append(v.unknown, kw)
			}
		}
	}
	return errs
}

func hasType(x any, t string) bool {
	switch t {
	case "object":
		_, ok := x.(map[string]any)
		return ok
	case "array":
		_, ok := x.([]any)
		return ok
	case "string":
		_, ok := x.(string)
		return ok
	case "number":
		_, ok := x.(float64)
		return ok
	case "integer":
		n, ok := x.(float64)
		return ok && n == math.Trunc(n)
	case "boolean":
		_, ok := x.(bool)
		return ok
	case "null":
		return x == nil
	}
	return false
}

func equalJSON(a, b any) bool {
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	return string(ja) == string(jb)
}
