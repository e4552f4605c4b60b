package tool_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolserver/toolserver/fault"
	"github.com/toolserver/toolserver/server"
	"github.com/toolserver/toolserver/tool"
	"github.com/toolserver/toolserver/wire"
)

func TestSchemaValidate(t *testing.T) {
	s := tool.Object(map[string]*tool.Schema{
		"name":  tool.String("a name"),
		"n":     tool.Integer("a count", 1, 10),
		"x":     tool.Number("a fraction", 0, 1),
		"mode":  tool.Enum("a mode", "a", "b"),
		"flag":  tool.Bool("a flag"),
		"inner": tool.Object(map[string]*tool.Schema{"k": tool.String("k")}, "k"),
		"list":  {Type: "array", Items: tool.Integer("item", 0, 5)},
	}, "name")
	for _, tc := range []struct {
		in, field string
	}{
		{`{"name":"a"}`, ""},
		{`{"name":"a","n":3,"x":0.5,"mode":"b","flag":true,"inner":{"k":"v"},"list":[1,2]}`, ""},
		{`{}`, "name"},
		{`{"name":1}`, "name"},
		{`{"name":"a","n":2.5}`, "n"},
		{`{"name":"a","n":11}`, "n"},
		{`{"name":"a","x":-0.1}`, "x"},
		{`{"name":"a","mode":"c"}`, "mode"},
		{`{"name":"a","flag":"yes"}`, "flag"},
		{`{"name":"a","inner":{}}`, "inner.k"},
		{`{"name":"a","list":[1,9]}`, "list[1]"},
		{`{"name":"a","other":1}`, "other"},
	} {
		err := s.Validate([]byte(tc.in))
		var te *fault.Error
		switch {
		case tc.field == "" && err != nil:
			t.Errorf("%s: got %v, want valid", tc.in, err)
		case tc.field != "" && (!errors.As(err, &te) || te.Field != tc.field || server.Status(te.Kind) != 400):
			t.Errorf("%s: got %v, want a 400 about %q", tc.in, err, tc.field)
		case tc.field != "" && !strings.HasPrefix(te.Error(), tc.field):
			t.Errorf("%s: message %q does not start with the field %q", tc.in, te.Error(), tc.field)
		}
	}
}

// TestArgumentsParse: a body that is not JSON and one that is JSON but no
// object are both 400s, each saying which it is; an empty body is no
// arguments.
func TestArgumentsParse(t *testing.T) {
	reg := tool.NewRegistry()
	reg.Add(&tool.Tool{Name: "count", InputSchema: tool.Object(map[string]*tool.Schema{}),
		Run: func(ctx context.Context, call *tool.Call) (any, error) { return len(call.Args), nil }})
	for _, tc := range []struct{ in, want string }{
		{`{"device":`, "arguments are not valid JSON: unexpected end of JSON input"},
		{`{} x`, "arguments are not valid JSON: invalid character 'x' after top-level value"},
		{`[1, 2]`, "arguments must be a JSON object: json: cannot unmarshal array into Go value of type map[string]json.RawMessage"},
		{`"text"`, "arguments must be a JSON object: json: cannot unmarshal string into Go value of type map[string]json.RawMessage"},
		{" \n", ""},
		{"null", ""},
	} {
		res, err := reg.Invoke(context.Background(), "count", json.RawMessage(tc.in), tool.Options{})
		var te *fault.Error
		switch {
		case tc.want == "" && (err != nil || res != 0):
			t.Errorf("%q: got %v, %v; want no arguments", tc.in, res, err)
		case tc.want != "" && (!errors.As(err, &te) || server.Status(te.Kind) != 400 || te.Message != tc.want):
			t.Errorf("%q: got %v, want a 400 %q", tc.in, err, tc.want)
		}
	}
}

// echoFile is a tool that reads the file its "file" argument names.
func echoFile() *tool.Tool {
	return &tool.Tool{
		Name:        "echo-file",
		InputSchema: tool.Object(map[string]*tool.Schema{"file": tool.String("a file")}, "file"),
		FileInputs:  []wire.FileInput{{Target: "file", Path: "${file}", Kind: "file"}},
		Run: func(ctx context.Context, call *tool.Call) (any, error) {
			a, err := tool.Decode[struct{ File string }](call)
			if err != nil {
				return nil, err
			}
			b, err := os.ReadFile(a.File)
			if err != nil {
				return nil, err
			}
			return map[string]any{"path": a.File, "content": string(b)}, nil
		},
	}
}

func TestFileInputUnwrapping(t *testing.T) {
	reg := tool.NewRegistry()
	reg.Add(echoFile())
	tmp := t.TempDir()
	ctx := context.Background()

	// Content sent from another machine: the tool reads a temp copy, which
	// is gone after the call.
	wire, _ := json.Marshal(map[string]any{"file": map[string]any{
		"__argentFileInput": true, "path": "/client/only/a.yaml", "size": 5, "mtimeMs": 1.5,
		"content": base64.StdEncoding.EncodeToString([]byte("hello")),
	}})
	res, err := reg.Invoke(ctx, "echo-file", wire, tool.Options{TempDir: tmp})
	if err != nil {
		t.Fatal(err)
	}
	got := res.(map[string]any)
	if got["content"] != "hello" || !strings.HasPrefix(got["path"].(string), tmp) {
		t.Fatalf("got %v, want the bytes from a temp file under %s", got, tmp)
	}
	if _, err := os.Stat(got["path"].(string)); !os.IsNotExist(err) {
		t.Fatalf("temp copy %s still exists after the call", got["path"])
	}
	if ents, _ := os.ReadDir(tmp); len(ents) != 0 {
		t.Fatalf("temp dir not cleaned: %v", ents)
	}

	// The same file on this machine (size and mtime agree): read in place.
	local := filepath.Join(tmp, "here.yaml")
	os.WriteFile(local, []byte("local"), 0o644)
	st, _ := os.Stat(local)
	wire, _ = json.Marshal(map[string]any{"file": map[string]any{
		"__argentFileInput": true, "path": local, "size": st.Size(), "mtimeMs": float64(st.ModTime().UnixNano()) / 1e6,
		"content": base64.StdEncoding.EncodeToString([]byte("other")),
	}})
	res, err = reg.Invoke(ctx, "echo-file", wire, tool.Options{TempDir: tmp})
	if err != nil || res.(map[string]any)["path"] != local {
		t.Fatalf("got %v, %v; want the host file %s", res, err, local)
	}

	// Bad content: 422 naming the argument.
	for _, bad := range []map[string]any{
		{"__argentFileInput": true, "path": "/x.yaml", "content": "%%% not base64"},
		{"__argentFileInput": true, "path": "/x.yaml", "size": 99, "content": base64.StdEncoding.EncodeToString([]byte("short"))},
		{"__argentFileInput": true, "path": "/x.yaml", "contentOmitted": "size-limit"},
	} {
		wire, _ = json.Marshal(map[string]any{"file": bad})
		_, err = reg.Invoke(ctx, "echo-file", wire, tool.Options{TempDir: tmp})
		var te *fault.Error
		if !errors.As(err, &te) || server.Status(te.Kind) != 422 || te.Field != "file" {
			t.Errorf("%v: got %v, want 422 about file", bad, err)
		}
	}
}

// bigFileInput is the JSON of a file input at /client/big.png holding n
// zero bytes, as base64 ("A" for every six zero bits, then the padding),
// written into one buffer of its size: building it as strings and joining
// them copies 43 MB more, slow under -race.
func bigFileInput(n int) []byte {
	head, tail := `{"__argentFileInput":true,"path":"/client/big.png","content":"`, []string{"", "AA==", "AAA="}[n%3]+`"}`
	raw := make([]byte, len(head)+n/3*4+len(tail))
	copy(raw, head)
	as := raw[len(head) : len(raw)-len(tail)]
	if len(as) > 0 {
		as[0] = 'A'
		for filled := 1; filled < len(as); filled *= 2 {
			copy(as[filled:], as[:filled])
		}
	}
	copy(raw[len(raw)-len(tail):], tail)
	return raw
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

// TestFileInputCapOnDecodedSize: the 32 MiB cap of a plain file input is
// on the bytes, not the base64: 32 MiB + 1 byte encodes to as many
// characters as 32 MiB (both fill their last group of four), and only the
// first is over. (The padding cases are clientfs's Base64Size test; each
// case here is 43 MB of JSON, slow under -race.)
func TestFileInputCapOnDecodedSize(t *testing.T) {
	t.Parallel()
	for _, n := range []int{tool.MaxFileBytes, tool.MaxFileBytes + 1} {
		// Each holds about 200 MB under -race.
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			t.Parallel()
			f, _, err := tool.ParseFile("file", bigFileInput(n))
			if n <= tool.MaxFileBytes {
				if err != nil || len(f.Content) != n {
					t.Fatalf("got %v, want the %d bytes accepted", err, n)
				}
				return
			}
			var te *fault.Error
			want := "file: /client/big.png is larger than the 32 MiB cap on a file sent to the tool-server"
			if !errors.As(err, &te) || server.Status(te.Kind) != 422 || te.Field != "file" || te.Message != want {
				t.Fatalf("got %v, want 422 %q", err, want)
			}
		})
	}
}

// A remote registry (a wildcard bind) reads a file input only from the
// bytes sent: never a path of this machine, even one claimed by size and
// mtime, never a bare path; and a refusal quotes nothing of the file.
func TestFileInputRemoteReadsOnlyBytesSent(t *testing.T) {
	t.Parallel()
	reg := tool.NewRegistry()
	reg.Remote = true
	reg.Add(echoFile())
	tmp := t.TempDir()
	ctx := context.Background()
	secret := filepath.Join(tmp, "secret.yaml")
	os.WriteFile(secret, []byte("server-secret-71c2"), 0o600)
	st, _ := os.Stat(secret)
	mtime := float64(st.ModTime().UnixNano()) / 1e6

	for name, arg := range map[string]any{
		"a bare path":                  secret,
		"a path claimed without bytes": map[string]any{"__argentFileInput": true, "path": secret, "size": st.Size(), "mtimeMs": mtime},
		"a missing file, path only":    map[string]any{"__argentFileInput": true, "path": filepath.Join(tmp, "nope.yaml")},
	} {
		wire, _ := json.Marshal(map[string]any{"file": arg})
		res, err := reg.Invoke(ctx, "echo-file", wire, tool.Options{TempDir: tmp})
		var te *fault.Error
		if !errors.As(err, &te) || server.Status(te.Kind) != 400 || te.Field != "file" || !strings.Contains(te.Error(), "answers other machines") {
			t.Errorf("%s: got %v, %v; want a 400 on file that reads nothing here", name, res, err)
		}
		if err != nil && strings.Contains(err.Error(), "server-secret") {
			t.Errorf("%s: the answer quotes the file: %v", name, err)
		}
	}

	// The same path with the bytes sent: the bytes win, even though the
	// size and mtime match this machine's file.
	wire, _ := json.Marshal(map[string]any{"file": map[string]any{
		"__argentFileInput": true, "path": secret, "size": 6, "mtimeMs": mtime,
		"content": base64.StdEncoding.EncodeToString([]byte("client")),
	}})
	res, err := reg.Invoke(ctx, "echo-file", wire, tool.Options{TempDir: tmp})
	if err != nil || res.(map[string]any)["content"] != "client" {
		t.Fatalf("got %v, %v; want the bytes sent", res, err)
	}
}
