package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/toolserver/toolserver/flow"
)

// Bounds of what a Storybook hands us: index.json is the build's, its
// strings are the stories' authors'.
const (
	// maxIndexBytes bounds index.json: a Storybook of 10 000 stories
	// writes about 4 MiB.
	maxIndexBytes = 32 << 20
	// maxStoryIDLen bounds a story id: it is a file name (the baseline's).
	maxStoryIDLen = 200
	// maxStoryText bounds a title, a name and a tag.
	maxStoryText = 1000
	// maxStoryTags bounds a story's tags.
	maxStoryTags = 100
	// indexVersion is index.json's v of Storybook 8 to 10.
	indexVersion = 5
)

// storybookSource is the Storybook a run snapshots: the base URL its
// iframe.html and index.json are under, and, for a static build given as
// a directory, the server that serves it on 127.0.0.1 for the run.
type storybookSource struct {
	base string // ends in /
	dir  string // the static build, when the argument named one
	srv  *http.Server
	port int
}

// openStorybook resolves the argument: a directory holding a static
// build (index.json and iframe.html), served here on 127.0.0.1:0 for
// the length of the run, or the http(s) URL of a running Storybook.
func openStorybook(arg string) (*storybookSource, error) {
	if strings.HasPrefix(arg, "http://") || strings.HasPrefix(arg, "https://") {
		u, err := url.Parse(arg)
		if err != nil || u.Host == "" {
			return nil, usageError("storybook: %q is not a URL", arg)
		}
		// The Storybook's root: a URL of its iframe.html or index.html
		// names the same one.
		u.RawQuery, u.Fragment = "", ""
		if b := path.Base(u.Path); b == "iframe.html" || b == "index.html" || b == "index.json" {
			u.Path = path.Dir(u.Path)
		}
		if !strings.HasSuffix(u.Path, "/") {
			u.Path += "/"
		}
		return &storybookSource{base: u.String()}, nil
	}
	st, err := os.Stat(arg)
	if err != nil || !st.IsDir() {
		return nil, usageError("storybook: %q is neither a URL (http:// or https://) nor a directory", arg)
	}
	for _, f := range []string{"index.json", "iframe.html"} {
		if _, err := os.Stat(filepath.Join(arg, f)); err != nil {
			return nil, usageError("storybook: %q has no %s: give the output directory of storybook build (storybook-static)", arg, f)
		}
	}
	abs, err := filepath.Abs(arg)
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("storybook: serve %s: %w", arg, err)
	}
	srv := &http.Server{Handler: staticHandler(http.Dir(abs)), ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(ln)
	port := ln.Addr().(*net.TCPAddr).Port
	return &storybookSource{base: fmt.Sprintf("http://127.0.0.1:%d/", port), dir: abs, srv: srv, port: port}, nil
}

// staticHandler serves a static build read-only: GET and HEAD only.
func staticHandler(root http.FileSystem) http.Handler {
	files := http.FileServer(root)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			http.Error(w, "read-only", http.StatusMethodNotAllowed)
			return
		}
		files.ServeHTTP(w, r)
	})
}

// close stops the static build's server, if this run started one.
func (s *storybookSource) close() {
	if s.srv != nil {
		s.srv.Close()
	}
}

// storyURL is the preview page of story id alone.
func (s *storybookSource) storyURL(id string) string {
	return s.base + "iframe.html?id=" + url.QueryEscape(id) + "&viewMode=story"
}

// readIndex reads the Storybook's index.json: from the build's directory,
// else over HTTP.
func (s *storybookSource) readIndex(ctx context.Context) ([]byte, error) {
	if s.dir != "" {
		f, err := os.Open(filepath.Join(s.dir, "index.json"))
		if err != nil {
			return nil, err
		}
		defer f.Close()
		return readIndexCapped(f, "index.json")
	}
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.base+"index.json", nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %sindex.json: %s (Storybook 8 to 10 serve index.json beside iframe.html)", s.base, resp.Status)
	}
	return readIndexCapped(resp.Body, s.base+"index.json")
}

func readIndexCapped(r io.Reader, name string) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, maxIndexBytes+1))
	if err != nil {
		return nil, err
	}
	if len(data) > maxIndexBytes {
		return nil, fmt.Errorf("%s is over the cap of %d MiB", name, maxIndexBytes>>20)
	}
	return data, nil
}

// story is one story of index.json.
type story struct {
	ID, Title, Name string
	Tags            []string
}

// label is the story as people name it: title/name.
func (s story) label() string { return s.Title + "/" + s.Name }

// parseIndex reads the stories of an index.json (v 5, Storybook 8 to
// 10), in id order, with docs entries left out. An entry whose id could
// not be a file name, or whose strings are over their caps, is left out
// with a note naming it.
func parseIndex(data []byte, note func(string)) ([]story, error) {
	var idx struct {
		V       *int                       `json:"v"`
		Entries map[string]json.RawMessage `json:"entries"`
	}
	if err := json.Unmarshal(data, &idx); err != nil {
		return nil, fmt.Errorf("index.json: %w", err)
	}
	switch {
	case idx.V == nil:
		return nil, errors.New("index.json has no v: not a Storybook index (Storybook 8 to 10 write v 5)")
	case *idx.V != indexVersion:
		return nil, fmt.Errorf("index.json is v %d; toolserver storybook reads v %d, the index of Storybook 8 to 10", *idx.V, indexVersion)
	}
	var out []story
	for key, raw := range idx.Entries {
		var e struct {
			Type  string   `json:"type"`
			ID    string   `json:"id"`
			Title string   `json:"title"`
			Name  string   `json:"name"`
			Tags  []string `json:"tags"`
		}
		if err := json.Unmarshal(raw, &e); err != nil {
			note(fmt.Sprintf("skipping index.json entry %q: %v", capped(key), err))
			continue
		}
		if e.Type != "story" {
			continue
		}
		if e.ID == "" {
			e.ID = key
		}
		if why := checkStory(e.ID, e.Title, e.Name, e.Tags); why != "" {
			note(fmt.Sprintf("skipping story %q: %s", capped(e.ID), why))
			continue
		}
		out = append(out, story{ID: e.ID, Title: e.Title, Name: e.Name, Tags: e.Tags})
	}
	slices.SortFunc(out, func(a, b story) int { return strings.Compare(a.ID, b.ID) })
	return out, nil
}

// checkStory says why a story cannot be run, "" when it can: its id
// names its baseline file, so it must be a flow name (letters, digits, _
// and -: Storybook's ids are lower-case letters, digits and -).
func checkStory(id, title, name string, tags []string) string {
	switch {
	case len(id) > maxStoryIDLen:
		return fmt.Sprintf("its id is over %d bytes", maxStoryIDLen)
	case !flow.ValidName(id):
		return "its id is not a safe file name (want letters, digits, _ and -)"
	case len(title) > maxStoryText || len(name) > maxStoryText:
		return fmt.Sprintf("its title or name is over %d bytes", maxStoryText)
	case !utf8.ValidString(title) || !utf8.ValidString(name):
		return "its title or name is not UTF-8"
	case len(tags) > maxStoryTags:
		return fmt.Sprintf("it has over %d tags", maxStoryTags)
	}
	for _, t := range tags {
		if len(t) > maxStoryText {
			return fmt.Sprintf("a tag is over %d bytes", maxStoryText)
		}
	}
	return ""
}

// capped shortens a string from outside for a message.
func capped(s string) string {
	if len(s) > 120 {
		return strings.ToValidUTF8(s[:120], "") + "…"
	}
	return s
}

// storyFilter is the selection of --include, --exclude and --tag.
type storyFilter struct {
	include, exclude, tags []string
}

// check tells a bad glob.
func (f storyFilter) check() error {
	for _, g := range append(slices.Clone(f.include), f.exclude...) {
		if _, err := path.Match(g, ""); err != nil {
			return usageError("storybook: the glob %q: %v", g, err)
		}
	}
	return nil
}

// matches tells whether glob g matches the story's id or its title/name.
func matches(g string, s story) bool {
	a, _ := path.Match(g, s.ID)
	b, _ := path.Match(g, s.label())
	return a || b
}

// skipReason says why the filter or the test-runner's rule leaves s
// out, "" when it runs. resolved tells an index whose tags Storybook
// resolved (8.1 and later: every story gets "dev" and "test" unless it
// removes them), where a story without "test" is one the test-runner
// skips; before 8.1 a "!test" tag says so.
func (f storyFilter) skipReason(s story, resolved bool) string {
	switch {
	case slices.Contains(s.Tags, "!test"):
		return "tagged !test"
	case resolved && !slices.Contains(s.Tags, "test"):
		return "tagged !test: its tags have no test"
	}
	for _, t := range f.tags {
		if !slices.Contains(s.Tags, t) {
			return fmt.Sprintf("not tagged %s", t)
		}
	}
	if len(f.include) > 0 && !slices.ContainsFunc(f.include, func(g string) bool { return matches(g, s) }) {
		return "not in --include"
	}
	if i := slices.IndexFunc(f.exclude, func(g string) bool { return matches(g, s) }); i >= 0 {
		return fmt.Sprintf("--exclude %s", f.exclude[i])
	}
	return ""
}

// tagsResolved tells an index written by Storybook 8.1 or later, which
// lists each story's resolved tags: some story has the default dev or
// test tag.
func tagsResolved(stories []story) bool {
	return slices.ContainsFunc(stories, func(s story) bool {
		return slices.Contains(s.Tags, "test") || slices.Contains(s.Tags, "dev")
	})
}
