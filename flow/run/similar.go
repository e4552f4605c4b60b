package run

import (
	"context"
	"fmt"
	"math"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/toolserver/toolserver/fault"
	"github.com/toolserver/toolserver/flow"
	"github.com/toolserver/toolserver/internal/editdistance"
)

// maxSimilar bounds the similar elements a not-found reason lists.
const maxSimilar = 3

// notFound is the reason of a selector that matched nothing in time: what
// was looked for and what similar elements the page has, so a renamed
// button or a changed label is obvious from the report.
func (r *Runner) notFound(ctx context.Context, dev Device, sel *flow.Selector) outcome {
	msg := fmt.Sprintf("no visible element matched selector %s", sel)
	if sim := similar(ctx, dev, sel); len(sim) > 0 {
		msg += "; similar elements on the page: " + strings.Join(sim, ", ")
	} else {
		msg += " — if it is off-screen, add a scroll-to step before this one"
	}
	return fail("%s", msg)
}

// similar lists the page's elements that look like what sel asks for,
// most alike first: by the edit distance (case-insensitive) between what
// sel's own criteria ask (its text, its id, its role) and the element's
// own text, ids and role, interactive elements (buttons, links, fields)
// first among equals, then in reading order. An element is listed when
// it is within half its length of what sel asks, or shares a word with
// it, so a renamed label shows as well as a typo.
func similar(ctx context.Context, dev Device, sel *flow.Selector) []string {
	if dev == nil || sel == nil {
		return nil
	}
	want := words(sel.ID + " " + sel.Text + " " + sel.Role + " " + sel.Matches)
	if len(want) == 0 {
		return nil
	}
	els, err := dev.Describe(ctx)
	if err != nil {
		return nil
	}
	type scored struct {
		label       string
		dist        int
		interactive bool
	}
	var found []scored
	seen := map[string]bool{}
	for _, e := range els {
		dist, close := likeness(sel, e)
		if !close && !sharesWord(want, words(strings.Join(e.IDs, " ")+" "+e.Text+" "+e.Role)) {
			continue
		}
		label := describeElement(e)
		if seen[label] {
			continue
		}
		seen[label] = true
		found = append(found, scored{label, dist, interactiveRoles[strings.ToLower(e.Role)]})
	}
	// Stable: equals keep the reading order Describe gives.
	sort.SliceStable(found, func(i, j int) bool {
		if found[i].dist != found[j].dist {
			return found[i].dist < found[j].dist
		}
		return found[i].interactive && !found[j].interactive
	})
	var out []string
	for i := 0; i < len(found) && i < maxSimilar; i++ {
		out = append(out, found[i].label)
	}
	return out
}

// interactiveRoles are the roles of elements a person acts on: what a
// tap, a type or a press most likely meant.
var interactiveRoles = map[string]bool{
	"button": true, "link": true, "textbox": true, "searchbox": true, "checkbox": true,
	"radio": true, "combobox": true, "listbox": true, "option": true, "menuitem": true,
	"menuitemcheckbox": true, "menuitemradio": true, "slider": true, "spinbutton": true,
	"switch": true, "tab": true, "treeitem": true,
}

// likeness returns the smallest edit distance, case-insensitive, between
// what sel's own criteria ask and the element: its text for a text (or a
// bare string), its ids for an id (or a bare string), its role for a
// role alone; and whether that distance is at most half the longer of
// the two strings. A regex selector has no text to measure; it gets the
// largest distance and counts only by shared words.
func likeness(sel *flow.Selector, e Element) (int, bool) {
	best, close := math.MaxInt, false
	try := func(want, have string) {
		if want == "" || have == "" {
			return
		}
		w, h := strings.ToLower(want), strings.ToLower(have)
		d := editdistance.OSA(w, h)
		if d < best {
			best = d
		}
		if 2*d <= max(utf8.RuneCountInString(w), utf8.RuneCountInString(h)) {
			close = true
		}
	}
	if sel.Text != "" {
		try(sel.Text, e.Text)
	}
	if sel.ID != "" || sel.Loose {
		want := sel.ID
		if sel.Loose {
			want = sel.Text
		}
		for _, id := range e.IDs {
			try(want, id)
		}
	}
	if sel.Role != "" && sel.Text == "" && sel.ID == "" && sel.Matches == "" {
		try(sel.Role, e.Role)
	}
	return best, close
}

// sharesWord tells whether two word sets have a word in common, or a word
// of three letters or more inside another.
func sharesWord(want, have map[string]bool) bool {
	for w := range want {
		for h := range have {
			if w == h || len(w) >= 3 && len(h) >= 3 && (strings.Contains(h, w) || strings.Contains(w, h)) {
				return true
			}
		}
	}
	return false
}

func describeElement(e Element) string {
	var parts []string
	if len(e.IDs) > 0 {
		parts = append(parts, fmt.Sprintf("id=%q", e.IDs[0]))
	}
	if e.Role != "" {
		parts = append(parts, fmt.Sprintf("role=%q", e.Role))
	}
	if e.Text != "" {
		parts = append(parts, fmt.Sprintf("text=%q", fault.Clip(e.Text, 40, fault.Runes, fault.Beyond)))
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
