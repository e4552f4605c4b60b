package tool_test

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/toolserver/toolserver/tool"
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
		gerr := tool.UnmarshalFileInput([]byte(in), &got)
		if (werr == nil) != (gerr == nil) {
			t.Errorf("%q: encoding/json says %v, UnmarshalFileInput %v", in, werr, gerr)
			continue
		}
		if werr == nil && !reflect.DeepEqual(got, want) {
			t.Errorf("%q: got %+v, encoding/json decodes %+v", in, got, want)
		}
	}
}

// BenchmarkParseFile32MiB: a file input at the 32 MiB cap, as a
// tool-server receives it (43 MB of JSON), decoded and its base64 read.
func BenchmarkParseFile32MiB(b *testing.B) {
	raw := bigFileInput(tool.MaxFileBytes)
	b.SetBytes(int64(len(raw)))
	for b.Loop() {
		if f, _, err := tool.ParseFile("file", raw); err != nil || len(f.Content) != tool.MaxFileBytes {
			b.Fatal(err)
		}
	}
}
