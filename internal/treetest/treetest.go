// Package treetest records a directory tree and tells what changed in it,
// for the tests that must prove a run wrote nothing (dry runs, refused
// baselines) on both ends of the link.
package treetest

import (
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

// Of records every entry under root: a file's bytes, a link's target,
// "dir" for a directory.
func Of(t testing.TB, root string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			out[p] = "link " + target
			return err
		case d.IsDir():
			out[p] = "dir"
		default:
			b, err := os.ReadFile(p)
			out[p] = string(b)
			return err
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// Same fails the test for each entry added, removed or changed between
// two records of a tree.
func Same(t testing.TB, before, after map[string]string) {
	t.Helper()
	for p, was := range before {
		now, ok := after[p]
		switch {
		case !ok:
			t.Errorf("%s: got it removed, want it untouched", p)
		case now != was:
			t.Errorf("%s: got it changed (%d bytes, was %d), want it untouched", p, len(now), len(was))
		}
	}
	for p := range after {
		if _, ok := before[p]; !ok {
			t.Errorf("%s: got a new entry, want nothing written", p)
		}
	}
}
