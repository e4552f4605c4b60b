package client

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"image"
	"image/png"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolserver/toolserver/internal/clientfs"
)

// FuzzApplyBaselineWrites feeds the client's applier whatever result a
// tool-server could send, over a project laid out with the traps
// docs/link-protocol.md names (a link out of the baseline directory, a link to
// nothing, a .png name that links to another kind of file, a directory named
// .png, a baseline directory that is a link out of the roots), and lists the
// whole tree after each input: nothing changes outside the baseline directory
// of the run that updates, except the one recording the call names. "$ROOT" in
// an input stands for the fixture's directory, so the seeds can name real
// paths.
func FuzzApplyBaselineWrites(f *testing.F) {
	pngB64 := base64.StdEncoding.EncodeToString(fuzzPNG(f))
	dir := "$ROOT/proj/.argent/flows/__baselines__/main/"
	write := func(p, content, enc string) string {
		b, err := json.Marshal(map[string]any{"__argentClientFile": true, "path": p, "content": content, "encoding": enc})
		if err != nil {
			f.Fatal(err)
		}
		return string(b)
	}
	result := func(directives ...string) []byte {
		return []byte(`{"flow":"main","ok":true,"baselineWrites":[` + strings.Join(directives, ",") + `]}`)
	}
	for _, seed := range [][]byte{
		result(write(dir+"home__chromium-2x2.png", pngB64, "base64")),
		result(write(dir+"new__chromium-2x2.png", pngB64, "base64")),
		result(write(dir+"same-dir-link.png", pngB64, "base64")),
		result(write(dir+"link-out.png", pngB64, "base64")),
		result(write(dir+"to-missing.png", pngB64, "base64")),
		result(write(dir+"to-text.png", pngB64, "base64")),
		result(write(dir+"dir.png", pngB64, "base64")),
		result(write(dir+"../escape.png", pngB64, "base64")),
		result(write("$ROOT/proj/.argent/flows/__baselines__/linked/home__chromium-2x2.png", pngB64, "base64")),
		result(write("$ROOT/outside/x.png", pngB64, "base64")),
		result(write("relative/home.png", pngB64, "base64")),
		result(write(dir+"home.txt", pngB64, "base64")),
		result(write(dir+"home.png", "not base64!", "base64")),
		result(write(dir+"home.png", base64.StdEncoding.EncodeToString([]byte("GIF89a")), "base64")),
		result(write(dir+"home.png", pngB64, "gzip")),
		[]byte(`{"savedTo":` + write("$ROOT/proj/.argent/flows/rec.yaml", "steps: []\n", "") + `}`),
		[]byte(`{"savedTo":` + write("$ROOT/proj/.argent/flows/other.yaml", "steps: []\n", "utf8") + `}`),
		[]byte(`{"savedTo":[` + write("$ROOT/outside/.argent/flows/rec.yaml", "x", "") + `]}`),
		[]byte(`[[{"deep":` + write(dir+"deep.png", pngB64, "base64") + `}]]`),
		[]byte(`{"__argentClientFile":true,"path":1,"content":"x"}`),
		[]byte(`null`),
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		root, err := filepath.EvalSymlinks(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		st, baselineDir, recording := applyFixture(t, root)
		before := listTree(t, root)
		st.apply(bytes.ReplaceAll(data, []byte("$ROOT"), []byte(root)))
		after := listTree(t, root)
		for p, was := range before {
			if now, ok := after[p]; !ok || now != was {
				allowedChange(t, p, baselineDir, recording, "changed or removed")
			}
		}
		for p := range after {
			if _, ok := before[p]; !ok {
				allowedChange(t, p, baselineDir, recording, "created")
				if filepath.Dir(p) == baselineDir && !strings.HasSuffix(p, ".png") {
					t.Errorf("%s: got a file left in the baseline directory, want only .png files", p)
				}
			}
		}
	})
}

// allowedChange fails unless p lies directly in the baseline directory or
// is the recording.
func allowedChange(t *testing.T, p, baselineDir, recording, what string) {
	t.Helper()
	if filepath.Dir(p) != baselineDir && p != recording {
		t.Errorf("%s: got it %s, want no change outside %s (and the recording %s)", p, what, baselineDir, recording)
	}
}

// applyFixture lays out root and returns the state of a recorder call
// whose run updates the baselines of main, with the recording rec.yaml.
func applyFixture(t *testing.T, root string) (st *callState, baselineDir, recording string) {
	t.Helper()
	flows := filepath.Join(root, "proj", ".argent", "flows")
	baselineDir = filepath.Join(flows, "__baselines__", "main")
	outside := filepath.Join(root, "outside")
	for _, d := range []string{baselineDir, filepath.Join(baselineDir, "dir.png"), filepath.Join(outside, "baselines")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	files := map[string]string{
		filepath.Join(flows, "main.yaml"):                             "steps:\n  - snapshot: home\n",
		filepath.Join(baselineDir, "home__chromium-2x2.png"):          "old",
		filepath.Join(baselineDir, "notes.txt"):                       "notes",
		filepath.Join(outside, "x.png"):                               "outside",
		filepath.Join(outside, "baselines", "home__chromium-2x2.png"): "outside",
	}
	for p, data := range files {
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	links := map[string]string{
		filepath.Join(baselineDir, "same-dir-link.png"): "home__chromium-2x2.png",
		filepath.Join(baselineDir, "link-out.png"):      filepath.Join(outside, "x.png"),
		filepath.Join(baselineDir, "to-missing.png"):    "nothing.png",
		filepath.Join(baselineDir, "to-text.png"):       "notes.txt",
		filepath.Join(flows, "__baselines__", "linked"): filepath.Join(outside, "baselines"),
	}
	for p, to := range links {
		if err := os.Symlink(to, p); err != nil {
			t.Fatal(err)
		}
	}
	main := filepath.Join(flows, "main.yaml")
	policy := clientfs.ClientRoots(main, main, filepath.Join(root, "proj"))
	linked := filepath.Join(flows, "__baselines__", "linked")
	// A recorded flow-execute step that updates baselines: the one kind
	// of call whose result may hold both baselines and the recording.
	st = &callState{name: "flow-add-step", recording: filepath.Join(flows, "rec.yaml"),
		writable: map[string]*clientfs.Policy{baselineDir: policy, linked: policy}}
	return st, baselineDir, st.recording
}

// listTree maps every path under root to its type, size, content digest
// or link target.
func listTree(t *testing.T, root string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		desc := fi.Mode().String()
		switch {
		case fi.Mode()&fs.ModeSymlink != 0:
			to, err := os.Readlink(p)
			if err != nil {
				return err
			}
			desc += " -> " + to
		case fi.Mode().IsRegular():
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			desc += fmt.Sprintf(" %d %x", len(b), sha256.Sum256(b))
		}
		out[p] = desc
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// fuzzPNG is a valid 2×2 PNG.
func fuzzPNG(f *testing.F) []byte {
	var buf bytes.Buffer
	if err := png.Encode(&buf, image.NewRGBA(image.Rect(0, 0, 2, 2))); err != nil {
		f.Fatal(err)
	}
	return buf.Bytes()
}
