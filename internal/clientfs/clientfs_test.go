package clientfs

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// tree lays out a real directory: root/proj/flows/a.yaml, a link
// proj/sub -> root/other/deep, a loop, and a file used as a directory.
func tree(t *testing.T) string {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"proj/flows", "other/deep"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{"proj/flows/a.yaml", "proj/a.yaml", "other/a.yaml"} {
		if err := os.WriteFile(filepath.Join(root, f), []byte("steps: []\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for link, to := range map[string]string{"proj/sub": filepath.Join(root, "other", "deep"), "proj/loop": "loop"} {
		if err := os.Symlink(to, filepath.Join(root, link)); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func TestLand(t *testing.T) {
	root := tree(t)
	for _, tc := range []struct {
		p, canonical, errText string
	}{
		{"proj/flows/a.yaml", "proj/flows/a.yaml", ""},
		// Missing: the nearest existing directory, by its real path.
		{"proj/flows/none/b.yaml", "proj/flows/none/b.yaml", ""},
		{"proj/sub/none/b.yaml", "other/deep/none/b.yaml", ""},
		// Clean first: sub/.. is proj, not other, as Node's path.resolve
		// and the runner's filepath.Join both have it.
		{"proj/sub/../a.yaml", "proj/a.yaml", ""},
		{"proj/sub/../none.yaml", "proj/none.yaml", ""},
		{"proj/loop", "proj/loop", "ELOOP: too many symbolic links encountered, realpath '$/proj/loop'"},
		{"proj/a.yaml/x.yaml", "proj/a.yaml/x.yaml", "ENOTDIR: not a directory, realpath '$/proj/a.yaml/x.yaml'"},
	} {
		canonical, errText := Land(filepath.Join(root, tc.p))
		if want := filepath.Join(root, tc.canonical); canonical != want {
			t.Errorf("Land(%s) canonical: got %s, want %s", tc.p, canonical, want)
		}
		if want := strings.ReplaceAll(tc.errText, "$", root); errText != want {
			t.Errorf("Land(%s) error: got %q, want %q", tc.p, errText, want)
		}
		if got := RealPath(filepath.Join(root, tc.p)); got != canonical {
			t.Errorf("RealPath(%s): got %s, want %s", tc.p, got, canonical)
		}
	}
}

func TestErrorText(t *testing.T) {
	err := &os.PathError{Op: "open", Path: "/x", Err: syscall.EACCES}
	if got, want := ErrorText(err, "open", "/x"), "EACCES: permission denied, open '/x'"; got != want {
		t.Errorf("ErrorText: got %q, want %q", got, want)
	}
	if got, want := NotFoundText("/p/a.yaml"), "ENOENT: no such file or directory, open '/p/a.yaml'"; got != want {
		t.Errorf("NotFoundText: got %q, want %q", got, want)
	}
	if code, ok := ErrnoCode(err); code != "EACCES" || !ok {
		t.Errorf("ErrnoCode: got %q %v, want EACCES true", code, ok)
	}
	if code, ok := ErrnoCode(os.ErrClosed); ok {
		t.Errorf("ErrnoCode(no errno): got %q, want none", code)
	}
}

func TestReadRegular(t *testing.T) {
	root := tree(t)
	fifo := filepath.Join(root, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(root, "proj", "a.yaml")
	if data, _, why := ReadRegular(p, 0); why != "" || string(data) != "steps: []\n" {
		t.Errorf("ReadRegular(a.yaml): got %q %q, want the bytes", data, why)
	}
	for _, tc := range []struct {
		p   string
		max int64
		why string
	}{
		{p, 4, p + " is larger than the 32 MiB cap on a file sent to the tool-server"},
		{filepath.Join(root, "proj"), 0, EISDIRRead},
		{fifo, 0, fifo + " is not a regular file"}, // and it does not block
		{filepath.Join(root, "none"), 0, "ENOENT: no such file or directory, stat '" + filepath.Join(root, "none") + "'"},
	} {
		if _, _, why := ReadRegular(tc.p, tc.max); why != tc.why {
			t.Errorf("ReadRegular(%s, %d): got %q, want %q", tc.p, tc.max, why, tc.why)
		}
	}
}

func TestClientRoots(t *testing.T) {
	root := tree(t)
	flow := filepath.Join(root, "proj", "flows", "a.yaml")
	pol := ClientRoots(flow, flow, filepath.Join(root, "proj"))
	if want := []string{filepath.Join(root, "proj")}; strings.Join(pol.Roots, ",") != strings.Join(want, ",") {
		t.Fatalf("roots: got %v, want %v (inner roots add nothing)", pol.Roots, want)
	}
	for p, want := range map[string]bool{
		filepath.Join(root, "proj"):               true,
		filepath.Join(root, "proj", "x", "y"):     true,
		filepath.Join(root, "project2", "a"):      false,
		filepath.Join(root, "other", "deep", "a"): false,
	} {
		if got := pol.Serves(p); got != want {
			t.Errorf("Serves(%s): got %v, want %v", p, got, want)
		}
	}
	if got, want := pol.Outside("x.yaml"), "x.yaml is outside every root this client serves ("+filepath.Join(root, "proj")+")"; got != want {
		t.Errorf("Outside: got %q, want %q", got, want)
	}
	var none *Policy
	if !none.Serves("/anything") {
		t.Error("a nil policy: got a refusal, want every path served")
	}
}
