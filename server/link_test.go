package server_test

import (
	"archive/tar"
	"bufio"
	"bytes"
	"compress/flate"
	"compress/gzip"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"hash/crc32"
	"os"
	"strings"
	"testing"

	"github.com/toolserver/toolserver/device/cdp/cdptest"
)

// The client paths of these tests do not exist on this machine: a linked
// run must never open them.
const (
	proj  = "/client/proj"
	flows = proj + "/.argent/flows"
)

func b64s(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }

func page(s string) string { return strings.ReplaceAll(s, "{{URL}}", cdptest.PagesURL()) }

// flowMember is a role flow member sent inline, keyed by the directory
// naming it and the target as written.
func flowMember(dir, target, body string) map[string]any {
	p := dir + "/" + target
	return map[string]any{"role": "flow", "key": dir + "\x00" + target, "path": p, "canonical": p,
		"spelling": map[string]any{"state": "listed"}, "size": len(page(body)), "mtimeMs": 1.0, "content": b64s(page(body))}
}

func fileMember(role, path string, data []byte) map[string]any {
	return map[string]any{"role": role, "key": path, "path": path, "size": len(data), "mtimeMs": 1.0,
		"content": base64.StdEncoding.EncodeToString(data)}
}

// linkedCall is a flow-execute body for name with the flow inline and the
// members given.
func linkedCall(name, body string, members []map[string]any, extra map[string]any) string {
	if members == nil {
		members = []map[string]any{}
	}
	in := map[string]any{"__argentFileInput": true, "path": flows + "/" + name + ".yaml", "size": len(page(body)), "mtimeMs": 1.0,
		"content": b64s(page(body)), "canonical": flows + "/" + name + ".yaml", "spelling": map[string]any{"state": "listed"}, "members": members}
	args := map[string]any{"name": name, "project_root": proj, "flow_file": in}
	for k, v := range extra {
		args[k] = v
	}
	b, _ := json.Marshal(args)
	return string(b)
}

// stream posts a call as NDJSON and returns the result data, or the error
// line.
func stream(t *testing.T, url, body string) (result map[string]any, errLine map[string]any, status int) {
	t.Helper()
	resp := postNDJSON(t, url+"/tools/flow-execute", body, "x-argent-linked", "1")
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		var e map[string]any
		json.NewDecoder(resp.Body).Decode(&e)
		return nil, e, resp.StatusCode
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		var line map[string]any
		if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
			t.Fatalf("bad line: %v", err)
		}
		switch line["event"] {
		case "result":
			result, _ = line["data"].(map[string]any)
		case "error":
			errLine = line
		}
	}
	return result, errLine, 200
}

func steps(rep map[string]any) string {
	var out []string
	for _, s := range rep["steps"].([]any) {
		m := s.(map[string]any)
		l := fmt.Sprint(m["kind"], ":", m["status"])
		if r, _ := m["reason"].(string); r != "" && m["status"] != "pass" {
			l += "(" + r + ")"
		}
		out = append(out, l)
	}
	return strings.Join(out, " ")
}

func TestLinkedRunChainFromMembers(t *testing.T) {
	t.Parallel()
	r := newRig(t, "")
	t.Cleanup(func() { cdptest.Stop(t, "chromium-cdp-820x600") })
	// main → frag (in flows) → ../shared/deep (its key's directory is the
	// real directory of frag).
	members := []map[string]any{
		flowMember(flows, "frag.yaml", "steps:\n  - tap: Go now\n  - run: ../shared/deep.yaml\n"),
		flowMember(flows, "../shared/deep.yaml", "steps:\n  - assert: { text: { in: { id: out }, equals: clicked 1 } }\n"),
	}
	members[1]["canonical"] = proj + "/.argent/shared/deep.yaml"
	body := linkedCall("main", "steps:\n  - launch: \"{{URL}}/app.html\"\n  - run: frag\n", members, map[string]any{"device": "chromium-cdp-820x600"})
	rep, e, _ := stream(t, r.url, body)
	if rep == nil || rep["ok"] != true {
		t.Fatalf("got %v %v", rep, e)
	}
	if got := steps(rep); got != "launch:pass run:pass tap:pass run:pass assert:pass" {
		t.Fatalf("steps: %s", got)
	}
}

func TestLinkedRunErrors(t *testing.T) {
	t.Parallel()
	r := newRig(t, "")
	const dev = "chromium-cdp-823x600"
	t.Cleanup(func() { cdptest.Stop(t, dev) })
	loop := []map[string]any{
		flowMember(flows, "a.yaml", "steps:\n  - run: b\n"),
		flowMember(flows, "b.yaml", "steps:\n  - run: a\n"),
	}
	folded := flowMember(flows, "frag.yaml", "steps:\n  - echo: hi\n")
	folded["spelling"] = map[string]any{"state": "case_folded", "actual": "Frag.yaml", "addressable": true}
	var deep []map[string]any
	for i := 1; i <= 21; i++ {
		deep = append(deep, flowMember(flows, fmt.Sprintf("l%d.yaml", i), fmt.Sprintf("steps:\n  - run: l%d\n", i+1)))
	}
	for _, tc := range []struct {
		name, flow string
		members    []map[string]any
		want       string
	}{
		{"missing key", "steps:\n  - run: nothere\n", nil, `could not load fragment "nothere.yaml": ENOENT: no such file or directory, open '` + flows + `/nothere.yaml'`},
		{"cycle", "steps:\n  - run: a\n", loop, "cyclic flow reference: main → a → b → a"},
		{"case folded", "steps:\n  - run: frag\n", []map[string]any{folded}, `mis-cased fragment reference "frag.yaml"`},
		{"21 levels", "steps:\n  - run: l1\n", deep, "max run depth exceeded"},
		{"missing nested", "steps:\n  - tool: flow-execute\n    args: { name: other, project_root: " + proj + " }\n", nil, "ENOENT: no such file or directory, open '" + flows + "/other.yaml'"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// A run: step may need a device; naming one keeps the run off
			// the devices of the tests running beside this one.
			rep, e, _ := stream(t, r.url, linkedCall("main", tc.flow, tc.members, map[string]any{"device": dev}))
			if rep == nil {
				t.Fatalf("no report: %v", e)
			}
			got := steps(rep)
			if !strings.Contains(got, tc.want) {
				t.Fatalf("got %s, want a step with %q", got, tc.want)
			}
		})
	}
}

func TestLinkedSnapshots(t *testing.T) {
	t.Parallel()
	r := newRig(t, "")
	const dev = "chromium-cdp-821x600"
	t.Cleanup(func() { cdptest.Stop(t, dev) })
	base := flows + "/__baselines__/snap/home__chromium-821x600.png"
	flowBody := "steps:\n  - launch: \"{{URL}}/app.html\"\n  - snapshot: home\n"
	extra := map[string]any{"device": dev}

	// Compare with no member for the baseline: fails as missing.
	rep, e, _ := stream(t, r.url, linkedCall("snap", flowBody, nil, extra))
	if rep == nil || !strings.Contains(steps(rep), `no baseline for "home"`) {
		t.Fatalf("missing: %v %v", rep, e)
	}
	// Update: the baseline comes back as a client-file directive; a
	// listed member makes "writes" "updates"; a later step of the same
	// call compares with the new bytes.
	updBody := "steps:\n  - launch: \"{{URL}}/app.html\"\n  - snapshot: home\n  - tool: flow-execute\n    args: { name: child, project_root: " + proj + ", updateBaselines: false }\n"
	child := flowMember(flows, "child.yaml", "steps:\n  - launch: \"{{URL}}/app.html\"\n  - snapshot: home\n")
	listed := map[string]any{"role": "baseline", "key": base, "path": base, "state": "listed"}
	childBase := flows + "/__baselines__/child/home__chromium-821x600.png"
	extra["updateBaselines"] = true
	rep, e, _ = stream(t, r.url, linkedCall("snap", updBody, []map[string]any{listed, child}, extra))
	if rep == nil {
		t.Fatalf("update: %v", e)
	}
	// The nested compare run looked for child's own baseline, which no
	// member carries, and wrote nothing there.
	if got := steps(rep); !strings.Contains(got, `snapshot:fail(no baseline for "home"`) || !strings.Contains(got, "expected "+childBase+",") {
		t.Fatalf("the nested compare run has no baseline member for child: got %s, want a missing %s", got, childBase)
	}
	s1 := rep["steps"].([]any)[1].(map[string]any)
	if s1["reason"] != "baseline captured; the client updates it when the run ends ("+base+")" {
		t.Fatalf("update reason: %v", s1["reason"])
	}
	writes, _ := rep["baselineWrites"].([]any)
	if len(writes) != 1 {
		t.Fatalf("baselineWrites: %v", writes)
	}
	w := writes[0].(map[string]any)
	png, _ := base64.StdEncoding.DecodeString(w["content"].(string))
	if w["__argentClientFile"] != true || w["path"] != base || w["encoding"] != "base64" || !bytes.HasPrefix(png, []byte("\x89PNG")) {
		t.Fatalf("directive: %v", w)
	}
	// Compare from member bytes: the same screen passes, a changed one
	// fails.
	delete(extra, "updateBaselines")
	rep, e, _ = stream(t, r.url, linkedCall("snap", flowBody, []map[string]any{fileMember("baseline", base, png)}, extra))
	if rep == nil || rep["ok"] != true {
		t.Fatalf("compare: %v %v", rep, e)
	}
	changed := "steps:\n  - launch: \"{{URL}}/app.html\"\n  - tap: Go now\n  - snapshot: { name: home, maxMismatch: 0 }\n"
	rep, _, _ = stream(t, r.url, linkedCall("snap", changed, []map[string]any{fileMember("baseline", base, png)}, extra))
	if got := steps(rep); !strings.Contains(got, "snapshot:fail(diff ") {
		t.Fatalf("changed: %s", got)
	}
	// A refused baseline: the step errors with the client's reason.
	refused := map[string]any{"role": "baseline", "key": base, "path": base, "state": "refused", "error": "home.png links to a file that is not a PNG file"}
	rep, _, _ = stream(t, r.url, linkedCall("snap", flowBody, []map[string]any{refused}, extra))
	if got := steps(rep); !strings.Contains(got, "snapshot:error(home.png links to a file that is not a PNG file)") {
		t.Fatalf("refused: %s", got)
	}
}

func TestLinkedToolFiles(t *testing.T) {
	t.Parallel()
	r := newRig(t, "")
	body := "steps:\n  - tool: read-file\n    args: { file: " + proj + "/data/in.yaml }\n"
	rep, e, _ := stream(t, r.url, linkedCall("tf", body, []map[string]any{fileMember("tool", proj+"/data/in.yaml", []byte("hello: world\n"))}, nil))
	if rep == nil || rep["ok"] != true {
		t.Fatalf("tool file: %v %v", rep, e)
	}
	res := rep["steps"].([]any)[0].(map[string]any)["result"].(map[string]any)
	if res["text"] != "hello: world\n" {
		t.Fatalf("the tool read %v", res)
	}
	rep, _, _ = stream(t, r.url, linkedCall("tf", body, nil, nil))
	if got := steps(rep); !strings.Contains(got, `tool:error(the client has no file at "`+proj+`/data/in.yaml" (argument file of read-file))`) {
		t.Fatalf("missing tool file: %s", got)
	}
}

func TestLinkedPrevalidation(t *testing.T) {
	t.Parallel()
	r := newRig(t, "")
	inner := flowMember(flows, "inner.yaml", "steps:\n  - echo: a\n  - script: { path: ../../scripts/hello.mjs }\n  - run: deeper\n")
	// Two levels down, in a nested flow's fragment: every kind again.
	deeper := flowMember(flows, "deeper.yaml", "steps:\n  - when: { platform: chromium }\n    steps:\n      - tool: list-dir\n        args: { dir: /tmp }\n  - tool: flow-execute\n    args: { name: nested, project_root: "+proj+" }\n")
	nested := flowMember(flows, "nested.yaml", "steps:\n  - tool: flow-add-echo\n    args: { name: x, project_root: /p, message: hi }\n  - launch: rel/page.html\n  - tool: read-file\n    args: { file: /p/notes.txt }\n")
	refused := map[string]any{"role": "flow", "key": flows + "\x00gone.yaml", "path": flows + "/gone.yaml", "canonical": "/elsewhere/gone.yaml",
		"spelling": map[string]any{"state": "listed"}, "state": "refused", "error": "gone.yaml is outside every root this client serves (/client/proj)"}
	body := `steps:
  - run: inner
  - tool: flow-start-recording
    args: { name: x, project_root: /p }
  - tool: flow-execute
    args: { flow_path: /p/.argent/flows/x.yaml, project_root: /p }
  - tool: list-dir
    args: { dir: /tmp }
  - tool: read-file
    args: { file: relative/in.yaml }
  - launch: ../site/index.html
  - run: gone
`
	_, e, status := stream(t, r.url, linkedCall("main", body, []map[string]any{inner, refused, deeper, nested}, nil))
	msg, _ := e["error"].(string)
	if e["error_code"] != "FLOW_FILE_INVALID" {
		t.Fatalf("got %d %v", status, e)
	}
	for _, want := range []string{
		"step 2 in " + flows + "/inner.yaml: script: { path: ../../scripts/hello.mjs }",
		"step 2 in " + flows + "/main.yaml: tool: flow-start-recording",
		"step 3 in " + flows + "/main.yaml: tool: flow-execute",
		"step 4 in " + flows + "/main.yaml: tool: list-dir",
		"step 5 in " + flows + "/main.yaml: tool: read-file",
		"step 6 in " + flows + "/main.yaml: launch: ../site/index.html",
		"step 7 in " + flows + "/main.yaml: run: gone",
		"step 1.1 in " + flows + "/deeper.yaml: tool: list-dir",
		"step 1 in " + flows + "/nested.yaml: tool: flow-add-echo",
		"step 2 in " + flows + "/nested.yaml: launch: rel/page.html",
		"step 3 in " + flows + "/nested.yaml: tool: read-file",
	} {
		if !strings.Contains(msg, want) {
			t.Errorf("the rejection lacks %q:\n%s", want, msg)
		}
	}
}

func TestOlderClientRefusals(t *testing.T) {
	t.Parallel()
	r := newRig(t, "")
	for _, tc := range []struct{ body, want string }{
		{"steps:\n  - run: frag\n", "This tool-server runs run: steps for a client that sends their fragments with the call. Update the argent CLI or MCP adapter on the client."},
		{"steps:\n  - snapshot: home\n", "This tool-server runs snapshot: steps for a client that sends their baselines with the call. Update the argent CLI or MCP adapter on the client."},
		{"steps:\n  - tool: flow-execute\n    args: { name: x, project_root: /p }\n", "This tool-server runs tool: flow-execute steps that name a flow with name, for a client that sends those flows with the call. Update the argent CLI or MCP adapter on the client."},
		{"steps:\n  - tool: read-file\n    args: { file: /p/a.yaml }\n", "This tool-server runs tool: steps with file arguments for a client that sends them with the call. Update the argent CLI or MCP adapter on the client."},
	} {
		// What Argent 0.25.2 sends: the file input with content, no members.
		args, _ := json.Marshal(map[string]any{"name": "old", "project_root": proj, "flow_file": map[string]any{
			"__argentFileInput": true, "path": flows + "/old.yaml", "size": len(tc.body), "mtimeMs": 1.5, "content": b64s(tc.body)}})
		resp, body := do(t, "POST", r.url+"/tools/flow-execute", string(args), "Content-Type", "application/json")
		if resp.StatusCode != 400 || !strings.Contains(string(body), "FLOW_FILE_INVALID") || !strings.Contains(string(body), tc.want) {
			t.Errorf("got %d %s, want 400 with %q", resp.StatusCode, body, tc.want)
		}
	}
	// A plain flow from such a client runs.
	plain := "steps:\n  - echo: hello\n"
	args, _ := json.Marshal(map[string]any{"name": "old", "project_root": proj, "flow_file": map[string]any{
		"__argentFileInput": true, "path": flows + "/old.yaml", "size": len(plain), "mtimeMs": 1.5, "content": b64s(plain)}})
	resp, body := do(t, "POST", r.url+"/tools/flow-execute", string(args))
	if resp.StatusCode != 200 || !strings.Contains(string(body), `"ok":true`) {
		t.Fatalf("plain flow: %d %s", resp.StatusCode, body)
	}
}

// tarGz builds a gzipped tar of the given entries.
func tarGz(t *testing.T, entries ...tar.Header) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	for _, h := range entries {
		h := h
		body := []byte(h.Linkname)
		if h.Typeflag == tar.TypeReg {
			body = bytes.Repeat([]byte("x"), int(h.Size))
			h.Linkname = ""
		} else {
			h.Size = 0
		}
		if err := tw.WriteHeader(&h); err != nil {
			t.Fatal(err)
		}
		if h.Typeflag == tar.TypeReg {
			tw.Write(body)
		}
	}
	tw.Close()
	zw.Close()
	return buf.Bytes()
}

func postUpload(t *testing.T, url string, data []byte) (id, hash string) {
	t.Helper()
	resp, body := do(t, "POST", url+"/upload", string(data), "Content-Type", "application/gzip")
	var u struct{ UploadID string }
	if resp.StatusCode != 200 || json.Unmarshal(body, &u) != nil {
		t.Fatalf("upload: %d %s", resp.StatusCode, body)
	}
	sum := sha256.Sum256(data)
	return u.UploadID, hex.EncodeToString(sum[:])
}

// repeatTarGz is a gzipped tar of one regular file, name, holding head
// and then n copies of unit. About a MiB of copies is deflated once, by a
// fresh compressor that refers back to nothing before it, and its blocks
// are repeated: deflating tens of MiB takes seconds under -race.
func repeatTarGz(t *testing.T, name, head, unit string, n int) []byte {
	t.Helper()
	size := len(head) + n*len(unit)
	var hdr bytes.Buffer
	if err := tar.NewWriter(&hdr).WriteHeader(&tar.Header{Name: name, Typeflag: tar.TypeReg, Size: int64(size), Mode: 0o644}); err != nil {
		t.Fatal(err)
	}
	// After the file, its padding to a 512-byte block and the two zero
	// blocks that end the archive.
	tail := make([]byte, (size+511)/512*512-size+1024)
	perSeg := max(1, (1<<20)/len(unit))
	seg := []byte(strings.Repeat(unit, min(perSeg, n)))
	deflate := func(last bool, parts ...[]byte) []byte {
		var b bytes.Buffer
		fw, _ := flate.NewWriter(&b, flate.BestSpeed)
		for _, p := range parts {
			fw.Write(p)
		}
		if last {
			fw.Close()
		} else {
			fw.Flush() // byte-aligned, not the final block
		}
		return b.Bytes()
	}
	out := []byte{0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 255} // gzip header, no name or time
	out = append(out, deflate(false, hdr.Bytes(), []byte(head))...)
	crc := crc32.Update(crc32.ChecksumIEEE(hdr.Bytes()), crc32.IEEETable, []byte(head))
	whole := deflate(false, seg)
	for ; n > perSeg; n -= perSeg {
		out = append(out, whole...)
		crc = crc32.Update(crc, crc32.IEEETable, seg)
	}
	rest := seg[:n*len(unit)]
	out = append(out, deflate(true, rest, tail)...)
	crc = crc32.Update(crc32.Update(crc, crc32.IEEETable, rest), crc32.IEEETable, tail)
	total := hdr.Len() + size + len(tail)
	return binary.LittleEndian.AppendUint32(binary.LittleEndian.AppendUint32(out, crc), uint32(total))
}

func TestMembersByUploadAndMaliciousInput(t *testing.T) {
	t.Parallel()
	r := newRig(t, "")
	good := tarGz(t, tar.Header{Name: "frag.yaml", Typeflag: tar.TypeReg, Size: 0, Mode: 0o644})
	// A real fragment, uploaded.
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	frag := []byte("steps:\n  - echo: from upload\n")
	tw.WriteHeader(&tar.Header{Name: "frag.yaml", Typeflag: tar.TypeReg, Size: int64(len(frag)), Mode: 0o644})
	tw.Write(frag)
	tw.Close()
	zw.Close()
	id, hash := postUpload(t, r.url, buf.Bytes())
	member := func(id, hash string, size int) map[string]any {
		return map[string]any{"role": "flow", "key": flows + "\x00frag.yaml", "path": flows + "/frag.yaml", "canonical": flows + "/frag.yaml",
			"spelling": map[string]any{"state": "listed"}, "uploadId": id, "contentHash": hash, "size": size, "mtimeMs": 1.0}
	}
	// A run: step needs a device: one of the test's own.
	const dev = "chromium-cdp-824x600"
	t.Cleanup(func() { cdptest.Stop(t, dev) })
	call := func(m map[string]any) string {
		return linkedCall("main", "steps:\n  - run: frag\n", []map[string]any{m}, map[string]any{"device": dev})
	}
	rep, e, _ := stream(t, r.url, call(member(id, hash, len(frag))))
	if rep == nil || rep["ok"] != true || !strings.Contains(fmt.Sprint(rep["steps"]), "from upload") {
		t.Fatalf("uploaded member: %v %v", rep, e)
	}
	// The upload was used up: a second call with it is a 422.
	_, e, status := stream(t, r.url, call(member(id, hash, len(frag))))
	if status != 422 || !strings.Contains(fmt.Sprint(e["error"]), "unknown upload") {
		t.Fatalf("reused upload: %d %v", status, e)
	}
	// 40 MiB of zeros gzip to about 50 KB.
	bomb := repeatTarGz(t, "frag.yaml", "", "\x00", 40<<20)
	for _, tc := range []struct {
		name string
		data []byte
		want string
	}{
		{"dot-dot", tarGz(t, tar.Header{Name: "../evil.yaml", Typeflag: tar.TypeReg, Size: 3, Mode: 0o644}), "unsafe name"},
		{"absolute", tarGz(t, tar.Header{Name: "/etc/evil.yaml", Typeflag: tar.TypeReg, Size: 3, Mode: 0o644}), "unsafe name"},
		{"symlink", tarGz(t, tar.Header{Name: "frag.yaml", Typeflag: tar.TypeSymlink, Linkname: "/etc/passwd", Mode: 0o777}), "not a regular file"},
		{"two files", tarGz(t, tar.Header{Name: "a.yaml", Typeflag: tar.TypeReg, Size: 1, Mode: 0o644}, tar.Header{Name: "b.yaml", Typeflag: tar.TypeReg, Size: 1, Mode: 0o644}), "more than one file"},
		{"gzip bomb", bomb, "32 MiB cap"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			id, hash := postUpload(t, r.url, tc.data)
			_, e, status := stream(t, r.url, call(member(id, hash, 3)))
			if status != 422 || !strings.Contains(fmt.Sprint(e["error"]), tc.want) {
				t.Fatalf("got %d %v, want 422 with %q", status, e, tc.want)
			}
			if uploadFiles(t, r.uploadsDir(t)) != 0 {
				t.Fatalf("the upload of a failed call was not deleted")
			}
		})
	}
	// The same shape with a safe name and a regular file is accepted: the
	// member decodes (no 422), and the run reports the empty fragment.
	id, hash = postUpload(t, r.url, good)
	rep, e, status = stream(t, r.url, call(member(id, hash, 0)))
	if status != 200 || rep == nil || !strings.Contains(steps(rep), "the flow file is empty") {
		t.Fatalf("a safe upload: got %d %v %v, want 200 and a run reporting the empty fragment", status, rep, e)
	}
	if n := uploadFiles(t, r.uploadsDir(t)); n != 0 {
		t.Fatalf("got %d upload files after the call, want 0", n)
	}
	// Inline checks: bad base64, a size that lies, a wrong contentHash.
	bad64 := flowMember(flows, "frag.yaml", "x")
	bad64["content"] = "!!!not base64!!!"
	liar := flowMember(flows, "frag.yaml", "steps: []\n")
	liar["size"] = 1
	id, _ = postUpload(t, r.url, buf.Bytes())
	for name, m := range map[string]map[string]any{"bad base64": bad64, "size lie": liar, "hash mismatch": member(id, strings.Repeat("0", 64), len(frag))} {
		_, e, status := stream(t, r.url, call(m))
		if status != 422 {
			t.Errorf("%s: got %d %v, want 422", name, status, e)
		}
	}
	// 10,000 members: refused cleanly.
	many := make([]map[string]any, 10000)
	for i := range many {
		many[i] = fileMember("tool", fmt.Sprintf("/client/f%d.png", i), []byte("x"))
	}
	_, e, status = stream(t, r.url, linkedCall("main", "steps: []\n", many, nil))
	if status != 422 || !strings.Contains(fmt.Sprint(e["error"]), "at most") {
		t.Fatalf("10,000 members: %d %v", status, e)
	}
	// Still serving, and nothing was written outside the temp dirs.
	if resp, _ := do(t, "GET", r.url+"/healthz", ""); resp.StatusCode != 200 {
		t.Fatal("the server stopped serving")
	}
	if _, err := os.Stat("/etc/evil.yaml"); err == nil {
		t.Fatal("a tar entry was written to /etc")
	}
}

// TestLinkedUpdateThenCompareInOneCall: a nested run writes a baseline,
// and a later nested run of the same call compares with those new bytes;
// the result carries one directive for the path, first written.
func TestLinkedUpdateThenCompareInOneCall(t *testing.T) {
	t.Parallel()
	r := newRig(t, "")
	const dev = "chromium-cdp-822x600"
	t.Cleanup(func() { cdptest.Stop(t, dev) })
	child := flowMember(flows, "child.yaml", "steps:\n  - launch: \"{{URL}}/app.html\"\n  - snapshot: { name: home, maxMismatch: 0 }\n")
	body := "steps:\n" +
		"  - tool: flow-execute\n    args: { name: child, project_root: " + proj + ", updateBaselines: true }\n" +
		"  - tool: flow-execute\n    args: { name: child, project_root: " + proj + ", updateBaselines: false }\n"
	rep, e, _ := stream(t, r.url, linkedCall("twice", body, []map[string]any{child}, map[string]any{"device": dev}))
	if rep == nil || rep["ok"] != true {
		t.Fatalf("got %v %v", rep, e)
	}
	want := flows + "/__baselines__/child/home__chromium-822x600.png"
	s := rep["steps"].([]any)
	if got := s[2].(map[string]any)["reason"]; got != "baseline captured; the client writes it when the run ends ("+want+")" {
		t.Fatalf("first write: %v", got)
	}
	if got := s[5].(map[string]any)["reason"]; !strings.HasPrefix(fmt.Sprint(got), "diff 0.00% ≤ 0% (home__chromium-822x600.png)") {
		t.Fatalf("the later compare did not read the new baseline: %v", got)
	}
	if w, _ := rep["baselineWrites"].([]any); len(w) != 1 || w[0].(map[string]any)["path"] != want {
		t.Fatalf("baselineWrites: %v", rep["baselineWrites"])
	}
}

// TestLinkedFlowMembersTotalCap: flow members over 32 MiB in total are a
// 422, though each is under the per-file cap; the total counts inline and
// uploaded members alike. (Two members go by upload: a gzipped YAML of
// comments is small on the wire, where 33 MiB inline cost seconds of JSON
// under -race.)
func TestLinkedFlowMembersTotalCap(t *testing.T) {
	t.Parallel()
	r := newRig(t, "")
	const big = 16 << 20 // each under the 32 MiB cap of one file; with the inline MiB, over it in total
	const padding = (big - 10) / 10
	size := 10 + 10*padding
	archive := repeatTarGz(t, "f.yaml", "steps: []\n", "# padding\n", padding)
	members := []map[string]any{flowMember(flows, "inline.yaml", "steps: []\n"+strings.Repeat("# padding\n", 1<<20/10))}
	for i := range 2 {
		id, hash := postUpload(t, r.url, archive)
		name := fmt.Sprintf("f%d.yaml", i)
		members = append(members, map[string]any{"role": "flow", "key": flows + "\x00" + name, "path": flows + "/" + name, "canonical": flows + "/" + name,
			"spelling": map[string]any{"state": "listed"}, "uploadId": id, "contentHash": hash, "size": size, "mtimeMs": 1.0})
	}
	_, e, status := stream(t, r.url, linkedCall("main", "steps: []\n", members, nil))
	if status != 422 || !strings.Contains(fmt.Sprint(e["error"]), "total more than the 32 MiB cap") {
		t.Fatalf("got %d %v, want a 422 about the 32 MiB total", status, e)
	}
	if n := uploadFiles(t, r.uploadsDir(t)); n != 0 {
		t.Fatalf("got %d upload files after the refused call, want 0", n)
	}
}

// TestFileInputPathWithoutFileName: a file sent with its bytes under a
// path that names no file ("/..", "/x/.", "", a trailing separator) is the
// client's mistake: a 400 naming the argument, never a 500, and the answer
// never quotes where the server keeps the bytes it is sent.
func TestFileInputPathWithoutFileName(t *testing.T) {
	t.Parallel()
	r := newRig(t, "")
	serverTemp := strings.TrimSuffix(r.uploadsDir(t), "/uploads")
	for _, tc := range []struct{ tool, target, path string }{
		{"read-file", "file", "/.."},
		{"read-file", "file", "/x/."},
		{"read-file", "file", ""},
		{"read-file", "file", "/x/"},
		{"read-file", "file", `C:\x\..`},
		{"flow-execute", "flow_path", "/client/proj/.argent/flows/.."},
	} {
		in := map[string]any{"__argentFileInput": true, "path": tc.path, "size": 2, "mtimeMs": 1.0, "content": b64s("hi")}
		call := map[string]any{tc.target: in}
		if tc.tool == "flow-execute" {
			call["project_root"] = proj
		}
		args, _ := json.Marshal(call)
		resp, body := do(t, "POST", r.url+"/tools/"+tc.tool, string(args), "Content-Type", "application/json")
		var e struct {
			Error, Field string
			Kind         string `json:"error_kind"`
		}
		json.Unmarshal(body, &e)
		wantMsg := fmt.Sprintf("%s: %q is not the path of a file", tc.target, tc.path)
		if resp.StatusCode != 400 || e.Kind != "validation" || e.Field != tc.target || !strings.HasPrefix(e.Error, wantMsg) {
			t.Errorf("%s %q: got %d %s, want 400 validation on %s starting %q", tc.tool, tc.path, resp.StatusCode, body, tc.target, wantMsg)
		}
		if strings.Contains(string(body), serverTemp) {
			t.Errorf("%s %q: the answer quotes the server's temp directory %s: %s", tc.tool, tc.path, serverTemp, body)
		}
	}
	// Nothing the calls were sent stays on the server.
	ents, err := os.ReadDir(serverTemp)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), "toolserver-input-") {
			t.Errorf("got %s left in the server's temp directory, want it removed", e.Name())
		}
	}
}
