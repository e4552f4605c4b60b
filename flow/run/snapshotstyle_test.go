package run

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolserver/toolserver/flow"
	"github.com/toolserver/toolserver/internal/clientfs"
)

// styleProject is a project on disk for the stylePath tests: its flows
// directory, with the flow file home.yaml and a fragment in sub/.
type styleProject struct {
	root, flows string
}

func newStyleProject(t *testing.T) styleProject {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	p := styleProject{root: root, flows: filepath.Join(root, "proj", ".argent", "flows")}
	p.put(t, "home.yaml", "steps:\n  - snapshot: home\n")
	p.put(t, "sub/frag.yaml", "steps:\n  - snapshot: frag\n")
	return p
}

// put writes data at rel under the flows directory (or at an absolute
// path) and returns the absolute path.
func (p styleProject) put(t *testing.T, rel, data string) string {
	t.Helper()
	abs := rel
	if !filepath.IsAbs(rel) {
		abs = filepath.Join(p.flows, rel)
	}
	if err := os.MkdirAll(filepath.Dir(abs), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(abs, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	return abs
}

// frameOf is the frame of the flow file at rel, as the runner has it.
func (p styleProject) frameOf(t *testing.T, rel string) *frame {
	t.Helper()
	f, err := Disk{}.OpenFile(filepath.Join(p.flows, rel))
	if err != nil || f.Err != nil {
		t.Fatalf("open %s: %v %v", rel, err, f.Err)
	}
	return &frame{file: f}
}

// TestSnapshotCSS: the CSS a capture applies is style:, then the stylePath
// file resolved beside the real file that holds the step; a file that is
// not there, or not one a capture may apply, is an error naming the
// snapshot, the stylePath, the flow file and the file's path.
func TestSnapshotCSS(t *testing.T) {
	p := newStyleProject(t)
	p.put(t, "capture.css", "time { visibility: hidden }\n")
	p.put(t, "sub/local.css", ".ad { display: none }")
	p.put(t, filepath.Join(p.root, "proj", "shared", "up.css"), "body { caret-color: transparent }")
	p.put(t, "big.css", strings.Repeat("a", flow.MaxStyleBytes+1))
	p.put(t, "latin1.css", "p::after { content: \"\xe9\" }")
	if err := os.MkdirAll(filepath.Join(p.flows, "dir.css"), 0o755); err != nil {
		t.Fatal(err)
	}
	r := &Runner{opts: Options{Source: Disk{}}}
	home, frag := p.frameOf(t, "home.yaml"), p.frameOf(t, "sub/frag.yaml")
	cases := []struct {
		name    string
		fr      *frame
		snap    flow.Snapshot
		want    string
		wantErr string
	}{
		{"neither", home, flow.Snapshot{Name: "a"}, "", ""},
		{"style only", home, flow.Snapshot{Name: "a", Style: "a { color: red }"}, "a { color: red }", ""},
		{"stylePath only", home, flow.Snapshot{Name: "a", StylePath: "capture.css"}, "time { visibility: hidden }\n", ""},
		{"style then stylePath", home, flow.Snapshot{Name: "a", Style: "x {}", StylePath: "capture.css"}, "x {}\ntime { visibility: hidden }\n", ""},
		{"beside a fragment", frag, flow.Snapshot{Name: "a", StylePath: "local.css"}, ".ad { display: none }", ""},
		{"dot-dot", home, flow.Snapshot{Name: "a", StylePath: "../../shared/up.css"}, "body { caret-color: transparent }", ""},
		{"missing", home, flow.Snapshot{Name: "home", StylePath: "styles/none.css"}, "",
			`snapshot "home": stylePath "styles/none.css" of ` + filepath.Join(p.flows, "home.yaml") + `: ENOENT: no such file or directory, open '` + filepath.Join(p.flows, "styles", "none.css") + `'`},
		{"not beside the root flow", frag, flow.Snapshot{Name: "frag", StylePath: "capture.css"}, "",
			`snapshot "frag": stylePath "capture.css" of ` + filepath.Join(p.flows, "sub", "frag.yaml") + `: ENOENT: no such file or directory, open '` + filepath.Join(p.flows, "sub", "capture.css") + `'`},
		{"directory", home, flow.Snapshot{Name: "a", StylePath: "dir.css"}, "", "EISDIR: illegal operation on a directory, read"},
		{"over the cap", home, flow.Snapshot{Name: "a", StylePath: "big.css"}, "", filepath.Join(p.flows, "big.css") + " is larger than the 64 KiB cap on a stylePath file"},
		{"not UTF-8", home, flow.Snapshot{Name: "a", StylePath: "latin1.css"}, "", `stylePath "latin1.css" of ` + filepath.Join(p.flows, "home.yaml") + ": the file is not UTF-8 text"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := r.snapshotCSS(c.fr, &c.snap)
			switch {
			case c.wantErr == "" && err != nil:
				t.Fatalf("snapshotCSS: got error %v, want none", err)
			case c.wantErr != "" && (err == nil || !strings.Contains(err.Error(), c.wantErr)):
				t.Fatalf("snapshotCSS: got error %v, want one containing %q", err, c.wantErr)
			}
			if got != c.want {
				t.Errorf("snapshotCSS: got %q, want %q", got, c.want)
			}
		})
	}
	if _, err := r.snapshotCSS(home, &flow.Snapshot{Name: "a", StylePath: "nothing.css"}); !flow.IsMissing(err) {
		t.Errorf("missing file: got %v, want an error that IsMissing", err)
	}
	var refused *flow.RefusedError
	if _, err := r.snapshotCSS(home, &flow.Snapshot{Name: "a", StylePath: "dir.css"}); !errors.As(err, &refused) {
		t.Errorf("directory: got %v, want a *RefusedError", err)
	}
}

// TestReadStyleFilePolicy: under a client policy, as a linked client reads
// the files it sends, a stylePath outside the roots is refused (also when
// missing), and so is a .css name that links to another kind of file;
// without one, as in a local run, both are read.
func TestReadStyleFilePolicy(t *testing.T) {
	p := newStyleProject(t)
	proj := filepath.Join(p.root, "proj")
	secret := p.put(t, filepath.Join(proj, "secret.env"), "TOKEN=1\n")
	if err := os.Symlink(secret, filepath.Join(p.flows, "env.css")); err != nil {
		t.Fatal(err)
	}
	p.put(t, filepath.Join(p.root, "outside.css"), "a {}")
	home := filepath.Join(p.flows, "home.yaml")
	policy := clientfs.ClientRoots(home, home, proj)
	cases := []struct {
		target, refused string
	}{
		{"env.css", "env.css links to a file that is not a CSS file"},
		{"../../../outside.css", "../../../outside.css is outside every root this client serves (" + proj + ")"},
		{"../../../absent.css", "../../../absent.css is outside every root this client serves (" + proj + ")"},
	}
	for _, c := range cases {
		f, mt := Disk{Policy: policy}.ReadStyleFile(p.flows, c.target)
		var refused *flow.RefusedError
		if !errors.As(f.Err, &refused) || refused.Reason != c.refused || f.Data != nil || mt != 0 {
			t.Errorf("%s with the policy: got %v, want refused %q", c.target, f.Err, c.refused)
		}
	}
	if b, err := (Disk{}).ReadStyle(p.flows, "env.css"); err != nil || string(b) != "TOKEN=1\n" {
		t.Errorf("env.css without a policy: got %q, %v, want the file (a local run reads what it names)", b, err)
	}
	f, mt := Disk{Policy: policy}.ReadStyleFile(p.flows, "../home.css")
	if !flow.IsMissing(f.Err) || mt != 0 || f.Canonical != filepath.Join(proj, ".argent", "home.css") || f.Path != p.flows+"/../home.css" {
		t.Errorf("missing inside the roots: got %+v, want missing with the clean canonical", f)
	}
	p.put(t, "ok.css", "b {}")
	if f, mt = (Disk{Policy: policy}).ReadStyleFile(p.flows, "ok.css"); f.Err != nil || string(f.Data) != "b {}" || mt == 0 {
		t.Errorf("ok.css: got %+v (mtime %v), want its bytes and mtime", f, mt)
	}
}
