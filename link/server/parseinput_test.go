package server_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/toolserver/toolserver/link/server"
	"github.com/toolserver/toolserver/wire"
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
		_, with, ok := server.ParseInput([]byte(in))
		if !ok || with != want {
			t.Errorf("%s: got ok %v, members %v; want ok, members %v", in, ok, with, want)
		}
	}
	if _, _, ok := server.ParseInput([]byte(`{"members":[]}`)); ok {
		t.Error(`{"members":[]} without the marker: got a file input`)
	}
}

// BenchmarkParseInput50Members: a linked flow input as the tool-server
// receives it, with 50 inline baselines of 200 KiB (13.7 MB of JSON).
func BenchmarkParseInput50Members(b *testing.B) {
	content := base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{0x89, 'P', 'N', 'G', 7}, 200<<10/5))
	in := wire.FileInputObject{ArgentFileInput: true, Path: "/p/.argent/flows/main.yaml", Content: new("steps: []\n")}
	for i := range 50 {
		p := fmt.Sprintf("/p/.argent/flows/__baselines__/main/s%02d__chromium-1280x800.png", i)
		in.Members = append(in.Members, wire.Member{Role: wire.RoleBaseline, Key: p, Path: p, Content: &content})
	}
	raw, err := json.Marshal(in)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(raw)))
	for b.Loop() {
		if got, with, ok := server.ParseInput(raw); !ok || !with || len(got.Members) != 50 {
			b.Fatal("not decoded")
		}
	}
}
