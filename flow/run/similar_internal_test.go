package run

import (
	"strings"
	"testing"
)

// TestDescribeElementClipsText: an element's text is quoted up to 40
// characters, a longer one cut there with an ellipsis after them.
func TestDescribeElementClipsText(t *testing.T) {
	forty := strings.Repeat("é", 40)
	for _, tc := range []struct{ text, want string }{
		{"Sign in", `text="Sign in"`},
		{forty, `text="` + forty + `"`},
		{forty + "x", `text="` + forty + `…"`},
		{strings.Repeat("a", 39) + "😀😀", `text="` + strings.Repeat("a", 39) + `😀…"`},
	} {
		if got := describeElement(Element{Text: tc.text, Visible: true}); got != tc.want {
			t.Errorf("text %q: got %s, want %s", tc.text, got, tc.want)
		}
	}
}
