package storybook

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/toolserver/toolserver/fault"
	"github.com/toolserver/toolserver/flow"
)

// Bounds of what a Storybook hands us: index.json is the build's, its
// strings are the stories' authors'.
const (
	// MaxIndexBytes bounds index.json: a Storybook of 10 000 stories
	// writes about 4 MiB.
	MaxIndexBytes = 32 << 20
	// MaxStoryIDLen bounds a story id: it is a file name (the baseline's).
	MaxStoryIDLen = 200
	// MaxStoryText bounds a title, a name and a tag.
	MaxStoryText = 1000
	// MaxStoryTags bounds a story's tags.
	MaxStoryTags = 100
	// IndexVersion is index.json's v of Storybook 8 to 10.
	IndexVersion = 5
	// maxQuoted bounds a story id or an entry's key quoted in a note.
	maxQuoted = 120
)

// Story is one story of index.json.
type Story struct {
	ID, Title, Name string
	Tags            []string
}

// Label is the story as people name it: title/name.
func (s Story) Label() string { return s.Title + "/" + s.Name }

// Index is the stories of an index.json, in id order.
type Index struct {
	Stories []Story
}

// ReadIndex reads index.json from r, refusing one over MaxIndexBytes;
// name is what the error calls it.
func ReadIndex(r io.Reader, name string) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, MaxIndexBytes+1))
	if err != nil {
		return nil, err
	}
	if len(data) > MaxIndexBytes {
		return nil, fmt.Errorf("%s is over the cap of %d MiB", name, MaxIndexBytes>>20)
	}
	return data, nil
}

// Parse reads the stories of an index.json (v 5, Storybook 8 to 10), in
// id order, with docs entries left out. An entry whose id could not be a
// file name, or whose strings are over their caps, is left out with a
// note naming it.
func Parse(data []byte, note func(string)) (*Index, error) {
	var idx struct {
		V       *int                       `json:"v"`
		Entries map[string]json.RawMessage `json:"entries"`
	}
	if err := json.Unmarshal(data, &idx); err != nil {
		return nil, fmt.Errorf("index.json: %w", err)
	}
	switch {
	case idx.V == nil:
		return nil, errors.New("index.json has no v: not a Storybook index (Storybook 8 to 10 write v 5)")
	case *idx.V != IndexVersion:
		return nil, fmt.Errorf("index.json is v %d; toolserver storybook reads v %d, the index of Storybook 8 to 10", *idx.V, IndexVersion)
	}
	var out []Story
	for key, raw := range idx.Entries {
		var e struct {
			Type  string   `json:"type"`
			ID    string   `json:"id"`
			Title string   `json:"title"`
			Name  string   `json:"name"`
			Tags  []string `json:"tags"`
		}
		if err := json.Unmarshal(raw, &e); err != nil {
			note(fmt.Sprintf("skipping index.json entry %q: %v", fault.Clip(key, maxQuoted, fault.Beyond), err))
			continue
		}
		if e.Type != "story" {
			continue
		}
		if e.ID == "" {
			e.ID = key
		}
		if why := checkStory(e.ID, e.Title, e.Name, e.Tags); why != "" {
			note(fmt.Sprintf("skipping story %q: %s", fault.Clip(e.ID, maxQuoted, fault.Beyond), why))
			continue
		}
		out = append(out, Story{ID: e.ID, Title: e.Title, Name: e.Name, Tags: e.Tags})
	}
	slices.SortFunc(out, func(a, b Story) int { return strings.Compare(a.ID, b.ID) })
	return &Index{Stories: out}, nil
}

// checkStory says why a story cannot be run, "" when it can: its id
// names its baseline file, so it must be a flow name (letters, digits, _
// and -: Storybook's ids are lower-case letters, digits and -).
func checkStory(id, title, name string, tags []string) string {
	switch {
	case len(id) > MaxStoryIDLen:
		return fmt.Sprintf("its id is over %d bytes", MaxStoryIDLen)
	case !flow.ValidName(id):
		return "its id is not a safe file name (want letters, digits, _ and -)"
	case len(title) > MaxStoryText || len(name) > MaxStoryText:
		return fmt.Sprintf("its title or name is over %d bytes", MaxStoryText)
	case !utf8.ValidString(title) || !utf8.ValidString(name):
		return "its title or name is not UTF-8"
	case len(tags) > MaxStoryTags:
		return fmt.Sprintf("it has over %d tags", MaxStoryTags)
	}
	for _, t := range tags {
		if len(t) > MaxStoryText {
			return fmt.Sprintf("a tag is over %d bytes", MaxStoryText)
		}
	}
	return ""
}

// TagsResolved tells an index written by Storybook 8.1 or later, which
// lists each story's resolved tags: some story has the default dev or
// test tag.
func (ix *Index) TagsResolved() bool {
	return slices.ContainsFunc(ix.Stories, func(s Story) bool {
		return slices.Contains(s.Tags, "test") || slices.Contains(s.Tags, "dev")
	})
}
