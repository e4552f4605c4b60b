package link_test

import (
	"testing"

	"github.com/toolserver/toolserver/link"
)

// TestParseInputMembers: a flow input carries members when its members
// list is there, empty or not; null or none is no list, and the last of
// a repeated name counts.
func TestParseInputMembers(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]bool{
		`{"__argentFileInput":true,"members":[]}`:                    true,
		`{"__argentFileInput":true,"members":[{"role":"flow"}]}`:     true,
		`{"__argentFileInput":true,"members":null}`:                  false,
		`{"__argentFileInput":true}`:                                 false,
		`{"__argentFileInput":true,"members":[],"members":null}`:     false,
		`{"__argentFileInput":true,"members":null,"members":[]}`:     true,
		`{"__argentFileInput":true,"MEMBERS":[]}`:                    true,
		`{"__argentFileInput":true,"path":"/p/f.yaml","content":""}`: false,
	} {
		_, with, ok := link.ParseInput([]byte(in))
		if !ok || with != want {
			t.Errorf("%s: got ok %v, members %v; want ok, members %v", in, ok, with, want)
		}
	}
	if _, _, ok := link.ParseInput([]byte(`{"members":[]}`)); ok {
		t.Error(`{"members":[]} without the marker: got a file input`)
	}
}
