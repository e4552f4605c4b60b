package client_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolserver/toolserver/fault"
	"github.com/toolserver/toolserver/link/client"
	"github.com/toolserver/toolserver/link/linktest"
	"github.com/toolserver/toolserver/wire"
)

// directive is a client-file directive as a result carries it.
func directive(p, content, encoding string) map[string]any {
	d := map[string]any{"__argentClientFile": true, "path": p, "content": content}
	if encoding != "" {
		d["encoding"] = encoding
	}
	return d
}

// answerResult makes the stub stream result as the call's result.
func answerResult(t *testing.T, s *linktest.Server, result any) {
	t.Helper()
	line, err := json.Marshal(map[string]any{"event": "result", "data": result})
	if err != nil {
		t.Fatal(err)
	}
	s.Answer = func(w http.ResponseWriter, body []byte) { linktest.Stream(w, string(line)) }
}

// tempFiles lists what a write may have left behind in dir.
func tempFiles(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		if strings.Contains(e.Name(), ".tmp-") {
			out = append(out, e.Name())
		}
	}
	return out
}

// TestApplyBaselineWrites: the client writes a .png directive without
// "..", directly in the baseline directory of a run of the call that
// updates baselines, through one rename; it refuses a link to nothing, a
// link out of the directory, a .png link to a non-PNG file, a file that
// is not a regular file; each directive becomes the path or {path,
// error}.
func TestApplyBaselineWrites(t *testing.T) {
	f := newFixture(t)
	s := newStub(t)
	f.put("main.yaml", fmt.Sprintf("steps:\n  - snapshot: home\n  - tool: flow-execute\n    args: { name: cmp, project_root: %s, updateBaselines: false }\n", f.proj))
	f.put("cmp.yaml", "steps:\n  - snapshot: c\n")
	D := filepath.Join(f.flows, "__baselines__", "main")
	cmp := filepath.Join(f.flows, "__baselines__", "cmp")
	outside := f.put(filepath.Join(f.root, "outside", "o.png"), "outside bytes")
	f.put(filepath.Join(D, "existing.png"), "old")
	f.put(filepath.Join(D, "existing2.png"), "old2")
	f.put(filepath.Join(D, "notes.txt"), "notes")
	f.link(filepath.Join(D, "alias.png"), "existing2.png")
	f.link(filepath.Join(D, "dangle.png"), "nothing.png")
	f.link(filepath.Join(D, "out.png"), outside)
	f.link(filepath.Join(D, "notpng.png"), "notes.txt")
	f.mkdir(filepath.Join(D, "dirpng.png"))
	f.put(filepath.Join(cmp, "c__chromium-1x1.png"), "c")

	shot := pngBytes(t, 2, 2)
	enc := b64(shot)
	p := func(n string) string { return filepath.Join(D, n) }
	writes := []any{
		directive(p("new.png"), enc, "base64"),
		directive(p("existing.png"), enc, "base64"),
		directive(p("alias.png"), enc, "base64"),
		directive(p("home.txt"), enc, "base64"),
		directive(D+"/../main/x.png", enc, "base64"),
		directive(filepath.Join(cmp, "c__chromium-1x1.png"), enc, "base64"),
		directive(filepath.Join(f.flows, "__baselines__", "other", "x.png"), enc, "base64"),
		directive(p("dangle.png"), enc, "base64"),
		directive(p("out.png"), enc, "base64"),
		directive(p("notpng.png"), enc, "base64"),
		directive(p("dirpng.png"), enc, "base64"),
		directive(p("garbage.png"), b64([]byte("not a png")), "base64"),
		directive(p("sub/x.png"), enc, "base64"),
		directive(p("odd.png"), enc, "rot13"),
	}
	answerResult(t, s, map[string]any{"flow": "main", "baselineWrites": writes})
	var lines []string
	res, err := s.Client("").Call(t.Context(), "flow-execute",
		map[string]any{"flow_path": p("../../main.yaml"), "project_root": f.proj, "updateBaselines": true},
		client.CallOptions{FilesLog: func(l string) { lines = append(lines, l) }})
	if err != nil {
		t.Fatal(err)
	}
	refused := func(path, why string) map[string]any { return map[string]any{"error": why, "path": path} }
	want := map[string]any{"baselineWrites": []any{
		p("new.png"),
		p("existing.png"),
		p("alias.png"),
		refused(p("home.txt"), p("home.txt")+" does not end in .png"),
		refused(D+"/../main/x.png", D+`/../main/x.png is not an absolute path without ".." segments`),
		refused(filepath.Join(cmp, "c__chromium-1x1.png"), filepath.Join(cmp, "c__chromium-1x1.png")+" is not in the baseline directory of a run of this call that updates baselines"),
		refused(filepath.Join(f.flows, "__baselines__", "other", "x.png"), filepath.Join(f.flows, "__baselines__", "other", "x.png")+" is not in the baseline directory of a run of this call that updates baselines"),
		refused(p("dangle.png"), p("dangle.png")+" is a symbolic link to a missing file"),
		refused(p("out.png"), p("out.png")+" links out of its directory (to "+outside+")"),
		refused(p("notpng.png"), p("notpng.png")+" links to a file that is not a PNG file"),
		refused(p("dirpng.png"), p("dirpng.png")+" is not a regular file"),
		refused(p("garbage.png"), "the content of "+p("garbage.png")+" is not a PNG image"),
		refused(p("sub/x.png"), p("sub/x.png")+" is not in the baseline directory of a run of this call that updates baselines"),
		refused(p("odd.png"), `unknown encoding "rot13"`),
	}, "flow": "main"}
	assertJSON(t, "result", res, want)

	for _, n := range []string{"new.png", "existing.png", "existing2.png"} {
		if got := f.read(p(n)); got != string(shot) {
			t.Errorf("%s: got %q, want the PNG of the result", n, got)
		}
	}
	if fi, err := os.Lstat(p("alias.png")); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("alias.png: got %v, %v; want the link kept and its file written", fi, err)
	}
	if got := f.read(outside); got != "outside bytes" {
		t.Errorf("outside file: got %q, want it untouched", got)
	}
	if got := f.read(p("notes.txt")); got != "notes" {
		t.Errorf("notes.txt: got %q, want it untouched", got)
	}
	for _, n := range []string{"x.png", "nothing.png", "garbage.png", "home.txt", "odd.png", "sub"} {
		if _, err := os.Lstat(p(n)); !os.IsNotExist(err) {
			t.Errorf("%s: got %v, want nothing written", n, err)
		}
	}
	if _, err := os.Stat(filepath.Join(f.flows, "__baselines__", "other")); !os.IsNotExist(err) {
		t.Errorf("other: got %v, want no directory made", err)
	}
	if got := f.read(filepath.Join(cmp, "c__chromium-1x1.png")); got != "c" {
		t.Errorf("compared baseline: got %q, want it untouched", got)
	}
	if tmp := tempFiles(t, D); len(tmp) != 0 {
		t.Errorf("temp files: got %v, want none", tmp)
	}
	wantLines := []string{"[flow-files] baseline " + p("new.png") + ": written", "[flow-files] baseline " + p("existing.png") + ": written", "[flow-files] baseline " + p("alias.png") + ": written"}
	var written []string
	for _, l := range lines {
		if strings.HasSuffix(l, ": written") {
			written = append(written, l)
		}
	}
	if strings.Join(written, "\n") != strings.Join(wantLines, "\n") {
		t.Errorf("written lines: got %q, want %q", written, wantLines)
	}
}

// TestApplyNewBaselineDirectory: the first update of a flow makes its
// baseline directory.
func TestApplyNewBaselineDirectory(t *testing.T) {
	f := newFixture(t)
	s := newStub(t)
	f.put("fresh.yaml", "steps:\n  - snapshot: s\n")
	dst := filepath.Join(f.flows, "__baselines__", "fresh", "s__chromium-1x1.png")
	shot := pngBytes(t, 1, 1)
	answerResult(t, s, map[string]any{"baselineWrites": []any{directive(dst, b64(shot), "base64")}})
	res, err := s.Client("").Call(t.Context(), "flow-execute", map[string]any{"name": "fresh", "project_root": f.proj, "updateBaselines": true}, client.CallOptions{})
	if err != nil {
		t.Fatal(err)
	}
	assertJSON(t, "result", res, map[string]any{"baselineWrites": []any{dst}})
	if got := f.read(dst); got != string(shot) {
		t.Errorf("baseline: got %d bytes, want the PNG of the result", len(got))
	}
}

// TestApplyOutsideRoots: a baseline directory whose real location is
// outside the roots sends nothing and takes no write.
func TestApplyOutsideRoots(t *testing.T) {
	f := newFixture(t)
	s := newStub(t)
	f.put("ext.yaml", "steps:\n  - snapshot: e\n")
	ext := f.put(filepath.Join(f.root, "outside", "ext", "e__chromium-1x1.png"), "outside")
	f.link(filepath.Join(f.flows, "__baselines__"), filepath.Join(f.root, "outside"))
	dst := filepath.Join(f.flows, "__baselines__", "ext", "e__chromium-1x1.png")
	answerResult(t, s, map[string]any{"baselineWrites": []any{directive(dst, b64(pngBytes(t, 1, 1)), "base64")}})
	res, err := s.Client("").Call(t.Context(), "flow-execute", map[string]any{"name": "ext", "project_root": f.proj, "updateBaselines": true}, client.CallOptions{})
	if err != nil {
		t.Fatal(err)
	}
	assertJSON(t, "members", input(t, s, "flow_file")["members"], []wire.Member{})
	assertJSON(t, "result", res, map[string]any{"baselineWrites": []any{
		map[string]any{"error": dst + " is not in the baseline directory of a run of this call that updates baselines", "path": dst}}})
	if got := f.read(ext); got != "outside" {
		t.Errorf("outside baseline: got %q, want it untouched", got)
	}
}

// TestApplySavedTo: a recorder tool's savedTo directive for the recording the
// call names is written; one that docs/argent-client.md, §5.3 refuses, or whose
// write fails, becomes null.
func TestApplySavedTo(t *testing.T) {
	f := newFixture(t)
	s := newStub(t)
	rec := filepath.Join(f.flows, "demo.yaml")
	answerResult(t, s, map[string]any{"savedTo": []any{directive(rec, "steps:\n  - echo: hi\n", "")}})
	res, err := s.Client("").Call(t.Context(), "flow-add-echo", map[string]any{"name": "demo", "project_root": f.proj, "message": "hi"}, client.CallOptions{})
	if err != nil {
		t.Fatal(err)
	}
	assertJSON(t, "result", res, map[string]any{"savedTo": []any{rec}})
	if got := f.read(rec); got != "steps:\n  - echo: hi\n" {
		t.Errorf("recording: got %q, want the directive's content", got)
	}

	// A recording file that is a link out of its directory is not written
	// through.
	target := f.put(filepath.Join(f.root, "outside", "x.yaml"), "keep")
	f.link("demo2.yaml", target)
	answerResult(t, s, map[string]any{"savedTo": directive(filepath.Join(f.flows, "demo2.yaml"), "steps: []\n", "utf8")})
	res, err = s.Client("").Call(t.Context(), "flow-add-echo", map[string]any{"name": "demo2", "project_root": f.proj, "message": "hi"}, client.CallOptions{})
	if err != nil {
		t.Fatal(err)
	}
	assertJSON(t, "result", res, map[string]any{"savedTo": nil})
	if got := f.read(target); got != "keep" {
		t.Errorf("link target: got %q, want it untouched", got)
	}
}

// TestApplyRefusesOtherRecordings: a recorder call takes a directive for
// its own recording only. One for any other file (another flow of the
// project, a file outside .argent/flows, a relative path, the recording's
// directory by ".."), or any recording's directive in a call that names
// no recording, refuses the whole result: not even the directive for the
// call's own recording beside it is written.
func TestApplyRefusesOtherRecordings(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	s := newStub(t)
	rec := filepath.Join(f.flows, "demo.yaml")
	call := map[string]any{"name": "demo", "project_root": f.proj, "message": "hi"}
	for _, tc := range []struct {
		target string
		args   map[string]any
		why    string
	}{
		{filepath.Join(f.flows, "other.yaml"), call, " is not the recording of this call (" + rec + ")"},
		{filepath.Join(f.root, "evil.txt"), call, " is not the recording of this call (" + rec + ")"},
		{f.flows + "/../evil.yaml", call, " is not the recording of this call (" + rec + ")"},
		{"relative/.argent/flows/demo.yaml", call, " is not the recording of this call (" + rec + ")"},
		{rec, map[string]any{"name": "demo", "project_root": "relative", "message": "hi"}, " is not the recording of this call: the call names none (no valid name and absolute project_root)"},
	} {
		answerResult(t, s, map[string]any{"savedTo": []any{directive(rec, "steps: []\n", ""), directive(tc.target, "x", "")}})
		res, err := s.Client("").Call(t.Context(), "flow-add-echo", tc.args, client.CallOptions{})
		var de *client.DirectiveError
		if !errors.As(err, &de) || !errors.Is(err, fault.ErrInfrastructure) || de.Path != tc.target || de.Reason != tc.target+tc.why {
			t.Errorf("%s: got %s, %v; want a DirectiveError %q", tc.target, res, err, tc.target+tc.why)
		}
		for _, p := range []string{rec, filepath.Join(f.root, "evil.txt"), filepath.Join(f.proj, ".argent", "evil.yaml"), filepath.Join(f.flows, "other.yaml")} {
			if _, err := os.Stat(p); !os.IsNotExist(err) {
				t.Errorf("%s: %s: got %v, want nothing written", tc.target, p, err)
			}
		}
	}
}

// TestProgressIsNotApplied: directives in progress lines are never
// applied.
func TestProgressIsNotApplied(t *testing.T) {
	f := newFixture(t)
	s := newStub(t)
	rec := filepath.Join(f.flows, "demo.yaml")
	d, _ := json.Marshal(directive(rec, "steps: []\n", ""))
	s.Answer = func(w http.ResponseWriter, body []byte) {
		linktest.Stream(w, `{"event":"progress","data":`+string(d)+`}`, `{"event":"result","data":null}`)
	}
	var got json.RawMessage
	_, err := s.Client("").Call(t.Context(), "flow-add-echo", map[string]any{"name": "demo", "project_root": f.proj}, client.CallOptions{Progress: func(m json.RawMessage) { got = m }})
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(d) {
		t.Errorf("progress: got %s, want the line's data as sent", got)
	}
	if _, err := os.Stat(rec); !os.IsNotExist(err) {
		t.Errorf("recording: got %v, want nothing written from a progress line", err)
	}
}

// TestApplyRefusesForeignRecordingDirectives: a malicious tool-server
// answers a flow-execute with a recording's directive (utf8, savedTo's
// shape) for the flow file being run, or for a flow file of another
// project, which no recording of this call names. The client refuses the
// result: nothing of it is written (not the baseline it also carries),
// no directory is made, and the call fails as the tool-server's fault,
// naming the path.
func TestApplyRefusesForeignRecordingDirectives(t *testing.T) {
	t.Parallel()
	const flowText = "steps:\n  - snapshot: home\n"
	for _, tc := range []struct {
		name   string
		target func(f *fixture) string
	}{
		{"the flow being run", func(f *fixture) string { return filepath.Join(f.flows, "main.yaml") }},
		{"another project's flows", func(f *fixture) string { return filepath.Join(f.root, "elsewhere", ".argent", "flows", "pwn.yaml") }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t)
			s := newStub(t)
			main := f.put("main.yaml", flowText)
			target := tc.target(f)
			baseline := filepath.Join(f.flows, "__baselines__", "main", "home__chromium-1x1.png")
			answerResult(t, s, map[string]any{"flow": "main", "ok": true,
				"steps":          []any{map[string]any{"index": 0, "result": map[string]any{"savedTo": directive(target, "steps:\n  - echo: pwned\n", "")}}},
				"baselineWrites": []any{directive(baseline, b64(pngBytes(t, 1, 1)), "base64")}})
			res, err := s.Client("").Call(t.Context(), "flow-execute",
				map[string]any{"flow_path": main, "project_root": f.proj, "updateBaselines": true}, client.CallOptions{})
			want := target + " is not the recording of this call: flow-execute records no flow"
			if err == nil || !errors.Is(err, fault.ErrInfrastructure) || !strings.Contains(err.Error(), want) {
				t.Fatalf("got %s, %v; want an infrastructure error saying %q", res, err, want)
			}
			if got := f.read(main); got != flowText {
				t.Errorf("the flow file: got %q, want it unchanged", got)
			}
			if _, err := os.Stat(filepath.Join(f.root, "elsewhere")); !os.IsNotExist(err) {
				t.Errorf("elsewhere: got %v, want no directory made", err)
			}
			if _, err := os.Stat(filepath.Dir(baseline)); !os.IsNotExist(err) {
				t.Errorf("the result's baseline: got %v, want nothing of a refused result written", err)
			}
		})
	}
}
