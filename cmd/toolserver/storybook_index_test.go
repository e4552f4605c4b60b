package main

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/toolserver/toolserver/tool/storybooktool"
)

// TestParseIndex: v 5 only, docs entries left out, an id that is not a
// safe file name left out with a note naming it.
func TestParseIndex(t *testing.T) {
	var notes []string
	note := func(s string) { notes = append(notes, s) }
	got, err := parseIndex([]byte(`{"v":5,"entries":{
		"b--one":{"type":"story","id":"b--one","title":"B","name":"One","tags":["dev","test"]},
		"a--docs":{"type":"docs","id":"a--docs","title":"A","name":"Docs"},
		"a--two":{"type":"story","id":"a--two","title":"A","name":"Two"},
		"bad":{"type":"story","id":"../etc/passwd","title":"X","name":"Y"}}}`), note)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].ID != "a--two" || got[1].ID != "b--one" {
		t.Errorf("got %+v, want a--two and b--one", got)
	}
	if len(notes) != 1 || !strings.Contains(notes[0], `"../etc/passwd"`) || !strings.Contains(notes[0], "not a safe file name") {
		t.Errorf("notes: got %q, want one naming the unsafe id", notes)
	}
	for _, c := range []struct{ in, want string }{
		{`{"v":4,"entries":{}}`, "index.json is v 4"},
		{`{"entries":{}}`, "has no v"},
		{`[]`, "index.json:"},
	} {
		if _, err := parseIndex([]byte(c.in), note); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("parseIndex(%s): got %v, want %q", c.in, err, c.want)
		}
	}
}

// TestStorySelection: the test-runner's !test rule (a resolved index's
// story without test, an old index's !test tag), --tag, --include and
// --exclude on the id and on title/name.
func TestStorySelection(t *testing.T) {
	s := func(id, title, name string, tags ...string) story {
		return story{ID: id, Title: title, Name: name, Tags: tags}
	}
	f := storyFilter{include: []string{"Forms/*", "button--*"}, exclude: []string{"*--wide"}, tags: []string{"test"}}
	for _, c := range []struct {
		s        story
		resolved bool
		want     string
	}{
		{s("button--primary", "Button", "Primary", "dev", "test"), true, ""},
		{s("button--wide", "Button", "Wide", "dev", "test"), true, "--exclude *--wide"},
		{s("forms--login", "Forms", "Login", "dev", "test"), true, ""},
		{s("card--plain", "Card", "Plain", "dev", "test"), true, "not in --include"},
		{s("button--hidden", "Button", "Hidden", "dev"), true, "tagged !test: its tags have no test"},
		{s("button--old", "Button", "Old", "!test"), false, "tagged !test"},
		{s("button--untagged", "Button", "Untagged"), false, "not tagged test"},
	} {
		if got := f.skipReason(c.s, c.resolved); got != c.want {
			t.Errorf("%s: got %q, want %q", c.s.ID, got, c.want)
		}
	}
	if err := (storyFilter{include: []string{"["}}).check(); err == nil {
		t.Error("a bad glob: got no error")
	}
}

// TestStoryParams: parameters.toolserver checked, each error naming the
// story and the field; a good one makes a flow that parses.
func TestStoryParams(t *testing.T) {
	of := func(js string) (storyParams, error) {
		return storyParamsOf("a--b", map[string]storybooktool.Story{"a--b": {Toolserver: json.RawMessage(js)}})
	}
	for _, c := range []struct{ in, want string }{
		{`{"delay": 20000}`, "story a--b: parameters.toolserver.delay 20000"},
		{`{"devices": ["phone"]}`, "story a--b: parameters.toolserver.devices"},
		{`{"maks": []}`, `story a--b: parameters.toolserver: json: unknown field "maks"`},
		{`{"skip": "yes"}`, "story a--b: parameters.toolserver:"},
	} {
		if _, err := of(c.in); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want %q", c.in, err, c.want)
		}
	}
	p, err := of(`{"mask": [{"id": "clock"}], "ignore": ["Ad"], "delay": 300, "devices": ["chromium-cdp-375x667"]}`)
	if err != nil {
		t.Fatal(err)
	}
	data, err := storyFlow("http://127.0.0.1:1/iframe.html?id=a--b&viewMode=story", "a--b", p, 15*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"launch: http://127.0.0.1:1/iframe.html?id=a--b&viewMode=story", "tool: storybook-ready", "delayMs: 300", "name: a--b", "id: clock"} {
		if !strings.Contains(string(data), want) {
			t.Errorf("flow: no %q in\n%s", want, data)
		}
	}
	p.Mask = []any{map[string]any{"nope": 1}}
	if _, err := storyFlow("http://127.0.0.1:1/", "a--b", p, time.Second); err == nil || !strings.Contains(err.Error(), "story a--b: parameters.toolserver:") {
		t.Errorf("a bad mask selector: got %v", err)
	}
}
