package flow

import (
	"context"
	"fmt"
	"sort"
	"strings"
)

// maxSimilar bounds the similar elements a not-found reason lists.
const maxSimilar = 3

// notFound is the reason of a selector that matched nothing in time: what
// was looked for and what similar elements the page has, so a renamed
// button or a changed label is obvious from the report.
func (r *Runner) notFound(ctx context.Context, dev Device, sel *Selector) outcome {
	msg := fmt.Sprintf("no visible element matched selector %s", sel)
	if sim := similar(ctx, dev, sel); len(sim) > 0 {
		msg += "; similar elements on the page: " + strings.Join(sim, ", ")
	} else {
		msg += " — if it is off-screen, add a scroll-to step before this one"
	}
	return fail("%s", msg)
}

// similar lists the page's elements whose id or text shares a word with
// what sel looks for, best first.
func similar(ctx context.Context, dev Device, sel *Selector) []string {
	if dev == nil || sel == nil {
		return nil
	}
	want := words(sel.ID + " " + sel.Text + " " + sel.Role)
	if len(want) == 0 {
		return nil
	}
	els, err := dev.Describe(ctx)
	if err != nil {
		return nil
	}
	type scored struct {
		label string
		score int
	}
	var found []scored
	seen := map[string]bool{}
	for _, e := range els {
		have := words(strings.Join(e.IDs, " ") + " " + e.Text + " " + e.Role)
		score := 0
		for w := range want {
			for h := range have {
				switch {
				case w == h:
					score += 3
				case len(w) >= 3 && len(h) >= 3 && (strings.Contains(h, w) || strings.Contains(w, h)):
					score++
				}
			}
		}
		if score == 0 {
			continue
		}
		label := describeElement(e)
		if seen[label] {
			continue
		}
		seen[label] = true
		found = append(found, scored{label, score})
	}
	sort.SliceStable(found, func(i, j int) bool { return found[i].score > found[j].score })
	var out []string
	for i := 0; i < len(found) && i < maxSimilar; i++ {
		out = append(out, found[i].label)
	}
	return out
}

func describeElement(e Element) string {
	var parts []string
	if len(e.IDs) > 0 {
		parts = append(parts, fmt.Sprintf("id=%q", e.IDs[0]))
	}
	if e.Role != "" {
		parts = append(parts, fmt.Sprintf("role=%q", e.Role))
	}
	if t := e.Text; t != "" {
		if len(t) > 40 {
			t = t[:40] + "…"
		}
		parts = append(parts, fmt.Sprintf("text=%q", t))
	}
	if !e.Visible {
		parts = append(parts, "(not visible)")
	}
	return strings.Join(parts, " ")
}

// words splits s into lower-case words for a loose comparison.
func words(s string) map[string]bool {
	out := map[string]bool{}
	for _, w := range strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r > 127)
	}) {
		out[w] = true
	}
	return out
}
