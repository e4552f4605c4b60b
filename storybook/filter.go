package storybook

import (
	"fmt"
	"path"
	"slices"
)

// Filter is the selection of --include, --exclude and --tag: globs on a
// story's id or title/name, and tags a story must all have.
type Filter struct {
	Include, Exclude, Tags []string
}

// Check tells a bad glob.
func (f Filter) Check() error {
	for _, g := range append(slices.Clone(f.Include), f.Exclude...) {
		if _, err := path.Match(g, ""); err != nil {
			return fmt.Errorf("the glob %q: %v", g, err)
		}
	}
	return nil
}

// matches tells whether glob g matches the story's id or its title/name.
func matches(g string, s Story) bool {
	a, _ := path.Match(g, s.ID)
	b, _ := path.Match(g, s.Label())
	return a || b
}

// Skip says why the filter or the test-runner's rule leaves s out, ""
// when it runs. resolved tells an index whose tags Storybook resolved
// (8.1 and later: every story gets "dev" and "test" unless it removes
// them; Index.TagsResolved), where a story without "test" is one the
// test-runner skips; before 8.1 a "!test" tag says so.
func (f Filter) Skip(s Story, resolved bool) string {
	switch {
	case slices.Contains(s.Tags, "!test"):
		return "tagged !test"
	case resolved && !slices.Contains(s.Tags, "test"):
		return "tagged !test: its tags have no test"
	}
	for _, t := range f.Tags {
		if !slices.Contains(s.Tags, t) {
			return fmt.Sprintf("not tagged %s", t)
		}
	}
	if len(f.Include) > 0 && !slices.ContainsFunc(f.Include, func(g string) bool { return matches(g, s) }) {
		return "not in --include"
	}
	if i := slices.IndexFunc(f.Exclude, func(g string) bool { return matches(g, s) }); i >= 0 {
		return fmt.Sprintf("--exclude %s", f.Exclude[i])
	}
	return ""
}

// Select is the stories of ix that f and the test-runner's rule leave in,
// in id order, and each one left out as "<id> (<why>)".
func (f Filter) Select(ix *Index) (run []Story, skipped []string) {
	resolved := ix.TagsResolved()
	for _, s := range ix.Stories {
		if why := f.Skip(s, resolved); why != "" {
			skipped = append(skipped, s.ID+" ("+why+")")
			continue
		}
		run = append(run, s)
	}
	return run, skipped
}
