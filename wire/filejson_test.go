package wire_test

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/toolserver/toolserver/wire"
)

// TestUnmarshalFileInputAsEncodingJSON: the file-input decoder accepts
// and refuses what encoding/json does and decodes the same values,
// leniencies included.
func TestUnmarshalFileInputAsEncodingJSON(t *testing.T) {
	t.Parallel()
	type member struct {
		Role    string  `json:"role"`
		Key     string  `json:"key"`
		Content *string `json:"content,omitempty"`
	}
	type input struct {
		Marker  bool            `json:"__argentFileInput"`
		Path    string          `json:"path"`
		Size    *int64          `json:"size,omitempty"`
		MtimeMs *float64        `json:"mtimeMs,omitempty"`
		Content *string         `json:"content,omitempty"`
		Members []member        `json:"members"`
		Probe   json.RawMessage `json:"probe"`
	}
	for _, in := range []string{
		`{"__argentFileInput":true,"path":"/p/a.png","size":3,"mtimeMs":1.5,"content":"AAAA"}`,
		`{"__ARGENTFILEINPUT":true,"Path":"/p/a.png","CONTENT":"AA=="}`,
		`{"argentFileInput":true,"path":"x"}`,
		`{"__argent-FileInput":true,"path":"x"}`,
		`{"__argentFileInput":true,"path":"x","path":"y","content":"AA","content":null}`,
		"{\"__argentFileInput\":true,\"path\":\"/p/\xff.png\"}",
		`{"__argentFileInput":true,"path":"\ud800\u00e9"}`,
		`{"__argentFileInput":true,"path":"x","members":[{"role":"flow","key":"k","content":"AA"}],"probe":{"a":[1,2]}}`,
		`{"__argentFileInput":true,"members":[],"probe":null}`,
		`{"__argentFileInput":true,"size":1.5}`,
		`{"__argentFileInput":true,"size":"3"}`,
		`{"__argentFileInput":true,"size":1e3}`,
		`{"__argentFileInput":"yes"}`,
		`{"__argentFileInput":true,"unknown":{"x":[true]}}`,
		`{"__argentFileInput":true} trailing`,
		`{"__argentFileInput":true,}`,
		`{"__argentFileInput":true`,
		` {"__argentFileInput":true} `,
		`null`,
		`[]`,
	} {
		var want, got input
		werr := json.Unmarshal([]byte(in), &want)
		gerr := wire.UnmarshalFileInput([]byte(in), &got)
		if (werr == nil) != (gerr == nil) {
			t.Errorf("%q: encoding/json says %v, UnmarshalFileInput %v", in, werr, gerr)
			continue
		}
		if werr == nil && !reflect.DeepEqual(got, want) {
			t.Errorf("%q: got %+v, encoding/json decodes %+v", in, got, want)
		}
	}
}

// TestUnmarshalFileFieldsSkipsCollected: the registry's decoder reads the
// file fields of an object and skips its members and spelling as text,
// malformed ones too, as it did when its type had no such fields.
func TestUnmarshalFileFieldsSkipsCollected(t *testing.T) {
	t.Parallel()
	for _, in := range []string{
		`{"__argentFileInput":true,"path":"/p/a.yaml","content":"AA==","spelling":{"state":"listed"},"members":[{"role":"flow","key":"k"}]}`,
		`{"__argentFileInput":true,"path":"/p/a.yaml","content":"AA==","spelling":5,"members":{"not":"a list"}}`,
	} {
		var got wire.FileInputObject
		if err := wire.UnmarshalFileFields([]byte(in), &got); err != nil {
			t.Errorf("%s: %v", in, err)
			continue
		}
		if !got.ArgentFileInput || got.Path != "/p/a.yaml" || got.Content == nil || *got.Content != "AA==" || got.Spelling != nil || got.Members != nil {
			t.Errorf("%s: got %+v, want the file fields and no members or spelling", in, got)
		}
	}
}
