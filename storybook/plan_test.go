package storybook

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestSelect: the stories left in, in order, and each left out with why.
func TestSelect(t *testing.T) {
	ix := &Index{Stories: []Story{
		{ID: "a--one", Title: "A", Name: "One", Tags: []string{"dev", "test"}},
		{ID: "a--two", Title: "A", Name: "Two", Tags: []string{"dev"}},
		{ID: "b--one", Title: "B", Name: "One", Tags: []string{"dev", "test"}},
	}}
	run, skipped := Filter{Exclude: []string{"b--*"}}.Select(ix)
	if len(run) != 1 || run[0].ID != "a--one" {
		t.Errorf("run: got %+v", run)
	}
	if want := []string{"a--two (tagged !test: its tags have no test)", "b--one (--exclude b--*)"}; !slices.Equal(skipped, want) {
		t.Errorf("skipped: got %q, want %q", skipped, want)
	}
}

// TestPlan: each story on each device, or its own devices; a story its
// parameters skip is left out; one whose parameters are invalid is
// planned once with its error.
func TestPlan(t *testing.T) {
	device := func(id string) error {
		if !strings.HasPrefix(id, "chromium-cdp-") {
			return errors.New("not a device id")
		}
		return nil
	}
	p := Planner{Base: "http://h/", Devices: []string{"chromium-cdp-1x1", "chromium-cdp-2x2"}, Timeout: time.Second, Device: device}
	stories := []Story{{ID: "a"}, {ID: "b"}, {ID: "c"}, {ID: "d"}}
	extracted := map[string]Extracted{
		"b": {Toolserver: json.RawMessage(`{"skip": true}`)},
		"c": {Toolserver: json.RawMessage(`{"devices": ["chromium-cdp-3x3"]}`)},
		"d": {Toolserver: json.RawMessage(`{"delay": -1}`)},
	}
	var skipped []string
	got := p.Plan(stories, extracted, func(id string) { skipped = append(skipped, id) })
	var runs []string
	for _, r := range got {
		runs = append(runs, r.ID+"@"+r.Device)
		if (r.Err != nil) != (r.ID == "d") || (r.Flow == nil) != (r.ID == "d") {
			t.Errorf("%s: got flow %q, err %v", r.ID, r.Flow, r.Err)
		}
	}
	if want := []string{"a@chromium-cdp-1x1", "a@chromium-cdp-2x2", "c@chromium-cdp-3x3", "d@chromium-cdp-1x1"}; !slices.Equal(runs, want) {
		t.Errorf("runs: got %v, want %v", runs, want)
	}
	if !slices.Equal(skipped, []string{"b"}) {
		t.Errorf("skipped: got %v", skipped)
	}
	if !strings.Contains(string(got[0].Flow), "launch: http://h/iframe.html?id=a&viewMode=story") {
		t.Errorf("a's flow: got\n%s", got[0].Flow)
	}
}
