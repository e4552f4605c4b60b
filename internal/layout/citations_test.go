package layout

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

var (
	// docRef is a page of the manual a comment cites, with the section
	// it names when the title follows on the same line.
	docRef = regexp.MustCompile(`docs/([A-Za-z0-9_-]+\.md)(?:,? \(?"([^"\n]+)")?`)
	// outside are the names of documents that are not in the repository:
	// the shared documents the project's own pages in docs/ stand for.
	outside = regexp.MustCompile(`PRODUCT\.md|\blink seed\b|\bthe seed\b|\bseed's\b|\(seed[,:]|wire reference|cdp-measurements\.md|STYLE\.md`)
)

// mayCite reports whether line has a word the citation patterns start
// with.
func mayCite(line string) bool {
	for _, w := range []string{"docs/", "PRODUCT", "seed", "wire reference", "cdp-measurements", "STYLE"} {
		if strings.Contains(line, w) {
			return true
		}
	}
	return false
}

// TestCitations: every page of docs/ that a Go file cites is there, with
// the section it names as one of its headings, and no Go file cites a
// document that is not in the repository.
func TestCitations(t *testing.T) {
	root := filepath.Join("..", "..")
	headings := map[string][]string{}
	pages, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pages {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		var hs []string
		for _, line := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(line, "#") {
				hs = append(hs, strings.ReplaceAll(strings.TrimLeft(line, "# "), "`", ""))
			}
		}
		headings[filepath.Base(p)] = hs
	}
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); p != root && (strings.HasPrefix(name, ".") || name == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		for i, line := range strings.Split(string(b), "\n") {
			// The regular expressions run only on the lines that may
			// match: under the race detector they cost seconds over
			// the whole tree.
			if !strings.Contains(line, "//") || !mayCite(line) {
				continue
			}
			if m := outside.FindString(line); m != "" {
				t.Errorf("%s:%d cites %q, a document outside the repository: cite its page in docs/", rel, i+1, m)
			}
			for _, m := range docRef.FindAllStringSubmatch(line, -1) {
				hs, ok := headings[m[1]]
				if !ok {
					t.Errorf("%s:%d cites docs/%s, which is not in docs/", rel, i+1, m[1])
					continue
				}
				if m[2] == "" {
					continue
				}
				title, found := strings.ReplaceAll(m[2], "`", ""), false
				for _, h := range hs {
					if strings.HasPrefix(h, title) {
						found = true
						break
					}
				}
				if !found {
					t.Errorf("%s:%d cites docs/%s, %q: no such heading", rel, i+1, m[1], m[2])
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
