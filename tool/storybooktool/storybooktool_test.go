package storybooktool

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/toolserver/toolserver/fault"
	"github.com/toolserver/toolserver/storybook"
)

// TestDecodeStories: the preview's stories as storybook.Stories; a page
// that timed out or failed is a validation error quoting at most
// MaxErrorText characters of the page's text.
func TestDecodeStories(t *testing.T) {
	got, err := decodeStories(args{}, json.RawMessage(`{"state":"ok","stories":{"a--b":{"tags":["test"],"toolserver":{"delay":5}}}}`))
	if err != nil {
		t.Fatal(err)
	}
	s, ok := got.(storybook.Stories)
	if !ok || string(s.Stories["a--b"].Toolserver) != `{"delay":5}` || s.Stories["a--b"].Tags[0] != "test" {
		t.Errorf("got %#v", got)
	}
	long := strings.Repeat("é", MaxErrorText+10)
	_, err = decodeStories(args{}, json.RawMessage(`{"state":"error","message":"`+long+`"}`))
	var fe *fault.Error
	if !errors.As(err, &fe) || fe.Kind != fault.Validation {
		t.Fatalf("got %v, want a validation error", err)
	}
	quoted := strings.TrimPrefix(fe.Message, "storybook-stories: the preview failed: ")
	if utf8.RuneCountInString(quoted) != MaxErrorText+1 || !strings.HasSuffix(quoted, "é…") {
		t.Errorf("the page's text: got %d characters, want %d and the ellipsis", utf8.RuneCountInString(quoted), MaxErrorText)
	}
}

// TestDecodeReady: each state of the story's render, named by its id.
func TestDecodeReady(t *testing.T) {
	a := args{ID: "a--b"}
	if got, err := decodeReady(a, json.RawMessage(`{"state":"rendered","phase":"finished"}`)); err != nil || got.(map[string]any)["phase"] != "finished" {
		t.Errorf("rendered: got %v, %v", got, err)
	}
	for raw, want := range map[string]string{
		`{"state":"missing"}`:                     "story a--b: the preview has no such story",
		`{"state":"error","message":"boom"}`:      "story a--b threw: boom",
		`{"state":"timeout","phase":"rendering"}`: "story a--b did not render within 15s (render phase: rendering)",
	} {
		if _, err := decodeReady(a, json.RawMessage(raw)); err == nil || err.Error() != want {
			t.Errorf("%s: got %v, want %q", raw, err, want)
		}
	}
}
