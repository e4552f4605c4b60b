package main

import (
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/toolserver/toolserver/runs"
)

// nobody is the user a root test runs serve as, so that a file it may
// not write is one root could.
const nobody = 65534

// TestServeRefusesARunStoreItCannotWrite: in a state directory serve may
// write, a runs.db it may only read is refused at start (exit 2, the path
// and the reason), not found by the first run. As root the command runs
// as nobody, for whom a file of root's with mode 0644 is read-only.
func TestServeRefusesARunStoreItCannotWrite(t *testing.T) {
	t.Parallel()
	base := t.TempDir()
	state := filepath.Join(base, "state")
	st, err := runs.Open(state, 0)
	if err != nil {
		t.Fatal(err)
	}
	rec, err := st.Start(t.Context(), runs.Begin{Flow: "before", Source: "tools"})
	if err != nil {
		t.Fatal(err)
	}
	rec.End(nil, nil, nil)
	st.Close()
	db := filepath.Join(state, "runs.db")
	if err := os.Chmod(db, 0o444); err != nil {
		t.Fatal(err)
	}
	bin := selfAs(t, base)
	cmd := exec.Command(bin, "serve", "--addr", "127.0.0.1:0", "--state-dir", state)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + base, "TMPDIR=" + base}
	if os.Geteuid() == 0 {
		// The state directory and what is in it but runs.db are nobody's,
		// so that only the database is read-only for it.
		for _, p := range []string{base, state, filepath.Join(state, "files"), filepath.Join(state, "lock")} {
			if err := os.Chown(p, nobody, nobody); err != nil {
				t.Fatal(err)
			}
		}
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: nobody, Gid: nobody}}
	}
	stderr := newLineWatch("listening on")
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	select {
	case <-stderr.seen:
		cmd.Process.Kill()
		<-exited
		t.Fatalf("serve started over a read-only runs.db: %s", stderr)
	case <-exited:
	case <-time.After(time.Minute):
		cmd.Process.Kill()
		<-exited
		t.Fatalf("serve neither started nor exited: %s", stderr)
	}
	out := stderr.String()
	if code := cmd.ProcessState.ExitCode(); code != exitInfra || !strings.Contains(out, db) || !strings.Contains(out, "readonly database") {
		t.Fatalf("exit %d, stderr %q; want exit 2 naming %s and why", code, out, db)
	}
}

// selfAs returns this test binary under the name toolserver (so it is
// the CLI, see TestMain) in dir, where any user may run it.
func selfAs(t *testing.T, dir string) string {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for p := dir; p != filepath.Dir(p) && strings.HasPrefix(p, os.TempDir()) && p != os.TempDir(); p = filepath.Dir(p) {
		if err := os.Chmod(p, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	bin := filepath.Join(dir, "toolserver")
	if err := os.Link(self, bin); err == nil {
		return bin
	}
	in, err := os.Open(self)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.OpenFile(bin, os.O_CREATE|os.O_WRONLY|os.O_EXCL, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
	return bin
}

// TestServeNamesADanglingStateDir: a --state-dir that is a symbolic link
// to nothing is named, with its target, not "mkdir: file exists".
func TestServeNamesADanglingStateDir(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	link := filepath.Join(dir, "state")
	if err := os.Symlink(filepath.Join(dir, "gone"), link); err != nil {
		t.Fatal(err)
	}
	for _, state := range []string{link, filepath.Join(link, "sub")} {
		code, _, stderr := runCLI(t, "serve", "--addr", "127.0.0.1:0", "--state-dir", state)
		want := link + " is a symbolic link to " + filepath.Join(dir, "gone") + ", which does not exist"
		if code != exitInfra || !strings.Contains(stderr, want) || strings.Contains(stderr, "file exists") {
			t.Errorf("--state-dir %s: exit %d, stderr %q; want exit 2 and %q", state, code, stderr, want)
		}
	}
}
