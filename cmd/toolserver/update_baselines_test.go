package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// updateProject is a project whose flow "page" has baselines for "same"
// and "moved" adopted by a bare --update-baselines (still "all"), then
// changed so that "moved" differs and "fresh" has none. It returns the
// project, the three baselines' paths and the bytes "moved" had.
func updateProject(t *testing.T, dev string) (root, same, moved, fresh string, oldMoved []byte) {
	t.Helper()
	root = writeProject(t, map[string]string{
		"page.yaml": "steps:\n  - launch: \"{{URL}}/app.html\"\n  - snapshot: same\n  - snapshot: moved\n",
	})
	if code, out, errOut := runCLI(t, "flow", "run", "page", "--project", root, dev, "--update-baselines"); code != exitOK {
		t.Fatalf("a bare --update-baselines: exit %d\n%s\n%s", code, out, errOut)
	}
	size := strings.TrimPrefix(dev, "--device=chromium-cdp-")
	dir := filepath.Join(root, ".argent", "flows", "__baselines__", "page")
	same, moved, fresh = filepath.Join(dir, "same__chromium-"+size+".png"), filepath.Join(dir, "moved__chromium-"+size+".png"), filepath.Join(dir, "fresh__chromium-"+size+".png")
	past := time.Now().Add(-time.Hour).Truncate(time.Second)
	if err := os.Chtimes(same, past, past); err != nil {
		t.Fatalf("a bare --update-baselines wrote no baseline: %v", err)
	}
	oldMoved, err := os.ReadFile(moved)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(root, ".argent", "flows", "page.yaml")
	if err := os.WriteFile(p, []byte(strings.Replace(string(mustRead(t, p)), "  - snapshot: moved\n",
		"  - snapshot: fresh\n  - tap: Go now\n  - tap: Go now\n  - snapshot: { name: moved, maxMismatch: 0.01 }\n", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	return root, same, moved, fresh, oldMoved
}

func mustRead(t *testing.T, p string) []byte {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// checkUpdates runs, with the environment e, --update-baselines=missing, =changed --dry-run and
// =changed on the project of updateProject with the extra flags, and
// checks what each wrote: missing only fresh (and moved still fails),
// the dry run nothing but both listed, changed moved and fresh; none
// touches same, which still matches.
func checkUpdates(t *testing.T, e env, root, same, moved, fresh string, oldMoved []byte, extra ...string) {
	t.Helper()
	run := func(want int, args ...string) string {
		t.Helper()
		code, out, errOut := runCLIEnv(t, e, append(append([]string{"flow", "run", "page", "--project", root}, extra...), args...)...)
		if code != want {
			t.Fatalf("%v: exit %d, want %d\n%s\n%s", args, code, want, out, errOut)
		}
		return out
	}
	sameTime := func() time.Time {
		st, err := os.Stat(same)
		if err != nil {
			t.Fatal(err)
		}
		return st.ModTime()
	}
	was := sameTime()

	run(exitFailed, "--update-baselines=missing")
	if _, err := os.Stat(fresh); err != nil {
		t.Errorf("missing: the new baseline: %v", err)
	}
	if !bytes.Equal(mustRead(t, moved), oldMoved) {
		t.Error("missing rewrote the baseline that failed")
	}

	os.Remove(fresh)
	out := run(exitOK, "--update-baselines=changed", "--dry-run")
	for _, want := range []string{"Dry run: 2 baselines would be written; nothing was written:", "  new    ", fresh, "  update ", moved} {
		if !strings.Contains(out, want) {
			t.Errorf("changed, dry run: got\n%s\nwant it to contain %q", out, want)
		}
	}
	if _, err := os.Stat(fresh); !os.IsNotExist(err) || !bytes.Equal(mustRead(t, moved), oldMoved) {
		t.Errorf("changed, dry run: wrote a baseline (%v)", err)
	}

	out = run(exitOK, "--update-baselines=changed")
	if !strings.Contains(out, "it had failed: diff ") {
		t.Errorf("changed: got\n%s\nwant the failure the update replaced", out)
	}
	if _, err := os.Stat(fresh); err != nil {
		t.Errorf("changed: the new baseline: %v", err)
	}
	if bytes.Equal(mustRead(t, moved), oldMoved) {
		t.Error("changed left the baseline that failed")
	}
	if !sameTime().Equal(was) {
		t.Error("an update rewrote the baseline that matched")
	}
	run(exitOK)
}

// TestUpdateBaselinesModes: --update-baselines=missing and =changed on
// this machine (a bare flag still means all); a mode that is none of the
// three is a usage error.
func TestUpdateBaselinesModes(t *testing.T) {
	t.Parallel()
	dev := "--device=" + sharedDevice(t, "chromium-cdp-705x505")
	root, same, moved, fresh, oldMoved := updateProject(t, dev)
	checkUpdates(t, nil, root, same, moved, fresh, oldMoved, dev)

	code, _, errOut := runCLI(t, "flow", "run", "page", "--project", root, dev, "--update-baselines=some")
	if code != exitUsage || !strings.Contains(errOut, `"some" is not all, changed or missing`) {
		t.Errorf("--update-baselines=some: exit %d\n%s\nwant 2 naming the value", code, errOut)
	}
}

// TestUpdateBaselinesModesLinked: the same over --link to `toolserver
// serve`: the client sends updateOnly and the baselines the run compares,
// and writes what the result returns.
func TestUpdateBaselinesModesLinked(t *testing.T) {
	t.Parallel()
	dev := "--device=" + sharedDevice(t, "chromium-cdp-707x507")
	root, same, moved, fresh, oldMoved := updateProject(t, dev)
	e := env{envAuthToken: "update-token"}
	u := startServe(t, e, false)
	checkUpdates(t, e, root, same, moved, fresh, oldMoved, dev, "--link", u)
}
