package server_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolserver/toolserver/device/cdp/cdptest"
	"github.com/toolserver/toolserver/server"
	"github.com/toolserver/toolserver/store"
	"github.com/toolserver/toolserver/tool"
	"github.com/toolserver/toolserver/tool/flowtool"
	"github.com/toolserver/toolserver/tool/snapshottool"
)

// snapshotServer serves screenshot-diff and the flow tools; remote is
// what a wildcard bind sets (cmd/toolserver wires it from --addr).
func snapshotServer(t *testing.T, remote bool) string {
	t.Helper()
	dir := t.TempDir()
	arts, err := store.NewArtifacts(dir+"/artifacts", 100, 1<<30)
	if err != nil {
		t.Fatal(err)
	}
	reg := tool.NewRegistry()
	reg.Remote = remote
	(&flowtool.Tools{Pool: cdptest.Pool(t), Artifacts: arts, TempDir: dir}).Register(reg)
	(&snapshottool.Tools{Pool: cdptest.Pool(t), Artifacts: arts}).Register(reg)
	srv := server.New(server.Config{Addr: "0.0.0.0:0", Tools: reg, Artifacts: arts, TempDir: dir})
	ts := httptest.NewServer(srv.Handler())
	t.Cleanup(ts.Close)
	return ts.URL
}

// pngOf is a w×h PNG of one colour with a dot of another at (1, 1).
func pngOf(t *testing.T, w, h int, dot color.RGBA) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for i := range img.Pix {
		img.Pix[i] = 255
	}
	img.SetRGBA(1, 1, dot)
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// sent is a file input with its bytes, as a client sends a file argument.
func sent(path string, data []byte) map[string]any {
	return map[string]any{"__argentFileInput": true, "path": path, "size": len(data), "mtimeMs": 1.0,
		"content": base64.StdEncoding.EncodeToString(data)}
}

func callJSON(t *testing.T, url, name string, args map[string]any) (int, string) {
	t.Helper()
	b, _ := json.Marshal(args)
	resp, body := do(t, "POST", url+"/tools/"+name, string(b))
	return resp.StatusCode, string(body)
}

// TestScreenshotDiffRemoteReadsOnlyCallFiles: on a wildcard bind
// screenshot-diff takes only the bytes sent with the call: a path of the
// server's own (plain, or a file input claiming to be the server's file
// by its size and mtime) is refused naming the argument, outputDir is
// refused and creates nothing, and no answer quotes a file.
func TestScreenshotDiffRemoteReadsOnlyCallFiles(t *testing.T) {
	t.Parallel()
	url := snapshotServer(t, true)
	passwd, err := os.ReadFile("/etc/passwd")
	if err != nil {
		t.Fatal(err)
	}
	st, _ := os.Stat("/etc/passwd")
	base := pngOf(t, 8, 8, color.RGBA{255, 255, 255, 255})
	cur := pngOf(t, 8, 8, color.RGBA{255, 0, 0, 255})
	out := filepath.Join(t.TempDir(), "made", "here")
	hostClaim := map[string]any{"__argentFileInput": true, "path": "/etc/passwd", "size": st.Size(),
		"mtimeMs": float64(st.ModTime().UnixNano()) / 1e6}
	for _, tc := range []struct {
		name  string
		args  map[string]any
		field string
	}{
		{"server path", map[string]any{"baselinePath": "/etc/passwd", "currentPath": sent("/c/cur.png", cur)}, "baselinePath"},
		{"server path as current", map[string]any{"baselinePath": sent("/c/base.png", base), "currentPath": "/etc/passwd"}, "currentPath"},
		{"file input without bytes", map[string]any{"baselinePath": hostClaim, "currentPath": sent("/c/cur.png", cur)}, "baselinePath"},
		{"outputDir", map[string]any{"baselinePath": sent("/c/base.png", base), "currentPath": sent("/c/cur.png", cur), "outputDir": out}, "outputDir"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, body := callJSON(t, url, "screenshot-diff", tc.args)
			var e struct{ Error, Field string }
			_ = json.Unmarshal([]byte(body), &e)
			if status != 400 || e.Field != tc.field || !strings.Contains(e.Error, "answers other machines") {
				t.Fatalf("got %d %s, want a 400 about %s", status, body, tc.field)
			}
			if strings.Contains(body, string(passwd[:8])) {
				t.Fatalf("the answer quotes /etc/passwd: %s", body)
			}
		})
	}
	if _, err := os.Stat(filepath.Dir(out)); !os.IsNotExist(err) {
		t.Fatalf("outputDir's parent: got %v, want it never made", err)
	}
	// The bytes sent with the call are compared; the diff is an artifact.
	status, body := callJSON(t, url, "screenshot-diff", map[string]any{"baselinePath": sent("/c/base.png", base), "currentPath": sent("/c/cur.png", cur)})
	var res struct {
		Data struct {
			MismatchPixels int
			Diff           struct{ ID string }
		}
	}
	if status != 200 || json.Unmarshal([]byte(body), &res) != nil || res.Data.MismatchPixels != 1 || res.Data.Diff.ID == "" {
		t.Fatalf("bytes sent with the call: got %d %s, want 1 pixel differing and a diff artifact", status, body)
	}
}

// TestScreenshotDiffErrorQuotesNoFile: on any bind, a file that is not a
// PNG is named, never quoted.
func TestScreenshotDiffErrorQuotesNoFile(t *testing.T) {
	t.Parallel()
	url := snapshotServer(t, false)
	secret := filepath.Join(t.TempDir(), "secret.txt")
	if err := os.WriteFile(secret, []byte("SECRET-TOKEN-0123456789abcdef\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cur := filepath.Join(t.TempDir(), "cur.png")
	if err := os.WriteFile(cur, pngOf(t, 8, 8, color.RGBA{0, 0, 0, 255}), 0o600); err != nil {
		t.Fatal(err)
	}
	status, body := callJSON(t, url, "screenshot-diff", map[string]any{"baselinePath": secret, "currentPath": cur})
	if status != 422 || !strings.Contains(body, "not a PNG file") || !strings.Contains(body, "secret.txt") {
		t.Fatalf("got %d %s, want a 422 naming the file as not a PNG", status, body)
	}
	if strings.Contains(body, "SECRET") {
		t.Fatalf("the answer quotes the file: %s", body)
	}
}

// TestScreenshotDiffRemoteFlowSteps: a flow's tool: screenshot-diff step
// is held to the same rule: a linked run's file arguments (the client's
// members) are compared, a path of the server's own is refused.
func TestScreenshotDiffRemoteFlowSteps(t *testing.T) {
	t.Parallel()
	url := snapshotServer(t, true)
	base := pngOf(t, 8, 8, color.RGBA{255, 255, 255, 255})
	cur := pngOf(t, 8, 8, color.RGBA{0, 0, 255, 255})
	body := fmt.Sprintf("steps:\n  - tool: screenshot-diff\n    args: { baselinePath: %s/shots/a.png, currentPath: %s/shots/b.png }\n", proj, proj)
	members := []map[string]any{fileMember("tool", proj+"/shots/a.png", base), fileMember("tool", proj+"/shots/b.png", cur)}
	rep, e, _ := stream(t, url, linkedCall("diff", body, members, nil))
	if rep == nil || rep["ok"] != true {
		t.Fatalf("linked run: got %v %v, want it to pass", rep, e)
	}
	res := rep["steps"].([]any)[0].(map[string]any)["result"].(map[string]any)
	if res["mismatchPixels"] != 1.0 {
		t.Fatalf("linked run: the tool answered %v, want 1 pixel differing", res)
	}

	// A linked flow whose step names a path of the server, not sent.
	peek := "steps:\n  - tool: screenshot-diff\n    args: { baselinePath: /etc/passwd, currentPath: /etc/passwd }\n"
	rep, e, status := stream(t, url, linkedCall("peek", peek, nil, nil))
	answer := fmt.Sprint(rep, e)
	if rep["ok"] == true || !strings.Contains(answer, "/etc/passwd") || strings.Contains(answer, "root:") {
		t.Fatalf("a step naming the server's file: got %d %s, want it refused without quoting the file", status, answer)
	}

	// A flow of the server's own disk is not run at all (tool.Registry.Remote).
	root := t.TempDir()
	writeFlow(t, root, "peek", peek)
	status, answer = callJSON(t, url, "flow-execute", map[string]any{"name": "peek", "project_root": root})
	if status != 400 || !strings.Contains(answer, "answers other machines") || strings.Contains(answer, "root:") {
		t.Fatalf("a flow of the server's disk: got %d %s, want it refused without quoting the file", status, answer)
	}
}
