package storybook

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestParseIndex: v 5 only, docs entries left out, an id that is not a
// safe file name left out with a note naming it.
func TestParseIndex(t *testing.T) {
	var notes []string
	note := func(s string) { notes = append(notes, s) }
	ix, err := Parse([]byte(`{"v":5,"entries":{
		"b--one":{"type":"story","id":"b--one","title":"B","name":"One","tags":["dev","test"]},
		"a--docs":{"type":"docs","id":"a--docs","title":"A","name":"Docs"},
		"a--two":{"type":"story","id":"a--two","title":"A","name":"Two"},
		"bad":{"type":"story","id":"../etc/passwd","title":"X","name":"Y"}}}`), note)
	if err != nil {
		t.Fatal(err)
	}
	got := ix.Stories
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
		if _, err := Parse([]byte(c.in), note); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Parse(%s): got %v, want %q", c.in, err, c.want)
		}
	}
}

// TestStorySelection: the test-runner's !test rule (a resolved index's
// story without test, an old index's !test tag), --tag, --include and
// --exclude on the id and on title/name.
func TestStorySelection(t *testing.T) {
	s := func(id, title, name string, tags ...string) Story {
		return Story{ID: id, Title: title, Name: name, Tags: tags}
	}
	f := Filter{Include: []string{"Forms/*", "button--*"}, Exclude: []string{"*--wide"}, Tags: []string{"test"}}
	for _, c := range []struct {
		s        Story
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
		if got := f.Skip(c.s, c.resolved); got != c.want {
			t.Errorf("%s: got %q, want %q", c.s.ID, got, c.want)
		}
	}
	if err := (Filter{Include: []string{"["}}).Check(); err == nil {
		t.Error("a bad glob: got no error")
	}
}

// TestStoryParams: parameters.toolserver checked, each error naming the
// story and the field; a good one makes a flow that parses.
func TestStoryParams(t *testing.T) {
	device := func(id string) error {
		if !strings.HasPrefix(id, "chromium-cdp-") {
			return errors.New("not a device id")
		}
		return nil
	}
	of := func(js string) (Params, error) {
		return ParamsOf("a--b", map[string]Extracted{"a--b": {Toolserver: json.RawMessage(js)}}, device)
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
	data, err := Flow("http://127.0.0.1:1/iframe.html?id=a--b&viewMode=story", "a--b", p, 15*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"launch: http://127.0.0.1:1/iframe.html?id=a--b&viewMode=story", "tool: storybook-ready", "delayMs: 300", "name: a--b", "id: clock"} {
		if !strings.Contains(string(data), want) {
			t.Errorf("flow: no %q in\n%s", want, data)
		}
	}
	p.Mask = []any{map[string]any{"nope": 1}}
	if _, err := Flow("http://127.0.0.1:1/", "a--b", p, time.Second); err == nil || !strings.Contains(err.Error(), "story a--b: parameters.toolserver:") {
		t.Errorf("a bad mask selector: got %v", err)
	}
}

// TestIndexNotes: a note quotes at most 120 bytes of an id, then an
// ellipsis; a story over a cap is left out with its reason.
func TestIndexNotes(t *testing.T) {
	long := strings.Repeat("a", 300)
	var notes []string
	ix, err := Parse([]byte(`{"v":5,"entries":{"x":{"type":"story","id":"`+long+`","title":"T","name":"N"},
		"y":{"type":"story","id":"y","title":"T","name":"N","tags":[`+strings.TrimSuffix(strings.Repeat(`"t",`, MaxStoryTags+1), ",")+`]}}}`),
		func(s string) { notes = append(notes, s) })
	if err != nil {
		t.Fatal(err)
	}
	if len(ix.Stories) != 0 {
		t.Errorf("stories: got %+v, want none", ix.Stories)
	}
	slices.Sort(notes)
	want := []string{
		`skipping story "` + long[:120] + `…": its id is over 200 bytes`,
		`skipping story "y": it has over 100 tags`,
	}
	if !slices.Equal(notes, want) {
		t.Errorf("notes: got %q, want %q", notes, want)
	}
	if ix.TagsResolved() {
		t.Error("an index of no stories: got tags resolved")
	}
	if !(&Index{Stories: []Story{{ID: "a", Tags: []string{"dev"}}}}).TagsResolved() {
		t.Error("a story tagged dev: got tags not resolved")
	}
}

// TestReadIndex: index.json over its cap is refused, naming it.
func TestReadIndex(t *testing.T) {
	if _, err := ReadIndex(strings.NewReader(strings.Repeat(" ", MaxIndexBytes+1)), "x/index.json"); err == nil || err.Error() != "x/index.json is over the cap of 32 MiB" {
		t.Errorf("got %v, want the cap", err)
	}
	data, err := ReadIndex(strings.NewReader(`{"v":5}`), "index.json")
	if err != nil || string(data) != `{"v":5}` {
		t.Errorf("got %q, %v", data, err)
	}
}

// TestGeneratedFlows: the story's page and the flow that reads the
// preview's parameters.
func TestGeneratedFlows(t *testing.T) {
	if got, want := StoryURL("http://h/sb/", "a--b c"), "http://h/sb/iframe.html?id=a--b+c&viewMode=story"; got != want {
		t.Errorf("StoryURL: got %q, want %q", got, want)
	}
	data, err := StoriesFlow("http://h/")
	if err != nil {
		t.Fatal(err)
	}
	if want := "steps:\n    - launch: http://h/iframe.html\n    - tool: storybook-stories\n"; string(data) != want {
		t.Errorf("StoriesFlow: got %q, want %q", data, want)
	}
	if err := CheckDevices("--device", nil, nil); err == nil || err.Error() != "--device: want 1 to 16 devices, got 0" {
		t.Errorf("no devices: got %v", err)
	}
}
