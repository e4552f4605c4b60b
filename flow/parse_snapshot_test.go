package flow

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
)

// checkSnapshotOptions is TestParseValidFiles' check of
// testdata/valid/snapshot-options.yaml.
func checkSnapshotOptions(t *testing.T, f *Flow) {
	if got, want := len(f.Steps), 4; got != want {
		t.Fatalf("steps: got %d, want %d", got, want)
	}
	home := directive[*Snapshot](t, f.Steps[0])
	if home.MaxMismatch != DefaultMaxMismatch || !home.MaxMismatchSet {
		t.Errorf("home: got maxMismatch %v set %v, want 0.5 set (spelled out at the default value)", home.MaxMismatch, home.MaxMismatchSet)
	}
	d := directive[*Snapshot](t, f.Steps[1])
	if d.MaxMismatchSet || d.MaxMismatch != DefaultMaxMismatch {
		t.Errorf("dashboard: got maxMismatch %v set %v, want the default, not set", d.MaxMismatch, d.MaxMismatchSet)
	}
	if d.MaxDiffPixels == nil || *d.MaxDiffPixels != 100 {
		t.Errorf("maxDiffPixels: got %v, want 100", d.MaxDiffPixels)
	}
	if d.Threshold == nil || *d.Threshold != 0.2 {
		t.Errorf("threshold: got %v, want 0.2", d.Threshold)
	}
	if d.Metric != "oklab" || d.WindowSize == nil || *d.WindowSize != 16 {
		t.Errorf("metric %q, windowSize %v: want oklab and 16", d.Metric, d.WindowSize)
	}
	if !d.FullPage || d.CropOn != nil {
		t.Errorf("fullPage: got %v cropOn %v, want true and none", d.FullPage, d.CropOn)
	}
	if len(d.Mask) != 2 || d.Mask[0].ID != "clock" || d.Mask[1].Role != "img" || d.Mask[1].Within.ID != "avatar" {
		t.Errorf("mask: got %v, want clock and img within avatar", d.Mask)
	}
	if d.MaskColor != "#00ff00" {
		t.Errorf("maskColor: got %q, want #00ff00 as written", d.MaskColor)
	}
	if len(d.Hide) != 1 || !d.Hide[0].Loose || d.Hide[0].Text != "Ad banner" {
		t.Errorf("hide: got %v, want the one loose selector \"Ad banner\"", d.Hide)
	}
	if len(d.Ignore) != 2 || d.Ignore[0].ID != "ticker" || d.Ignore[1].Text != "Live count" {
		t.Errorf("ignore: got %v, want ticker and \"Live count\"", d.Ignore)
	}
	if want := []Rect{{0, 0, 1280, 40}, {10, 700, 5, 1}}; !slices.Equal(d.IgnoreRegions, want) {
		t.Errorf("ignoreRegions: got %v, want %v", d.IgnoreRegions, want)
	}
	if want := ".caret { display: none }\ntime { visibility: hidden }\n"; d.Style != want {
		t.Errorf("style: got %q, want %q", d.Style, want)
	}
	if d.StylePath != "styles/capture.css" {
		t.Errorf("stylePath: got %q, want styles/capture.css", d.StylePath)
	}
	if d.StopOnFailure == nil || !*d.StopOnFailure || home.StopOnFailure != nil {
		t.Errorf("stopOnFailure: got %v on dashboard and %v on home, want true and unset", d.StopOnFailure, home.StopOnFailure)
	}
	card := directive[*Snapshot](t, f.Steps[2])
	if card.StopOnFailure == nil || *card.StopOnFailure {
		t.Errorf("card: stopOnFailure %v, want false as written", card.StopOnFailure)
	}
	if card.FullPage || card.CropOn.ID != "card" || *card.Threshold != 0 || *card.MaxDiffPixels != 0 {
		t.Errorf("card: got %+v, want cropOn card, fullPage false, zero threshold and pixels", card)
	}
	if card.Mask != nil || card.Hide != nil || card.MaskColor != "" || card.Style != "" || card.StylePath != "" {
		t.Errorf("card: got %+v, want no mask, hide or style", card)
	}
	promo := directive[*Snapshot](t, directive[*When](t, f.Steps[3]).Steps[0])
	if promo.StylePath != "../shared/capture.css" || len(promo.Mask) != 1 || promo.Mask[0].Text != "Promo" {
		t.Errorf("promo: got %+v, want the ../ stylePath and one mask", promo)
	}
	if got, want := f.StylePaths(), []string{"styles/capture.css", "../shared/capture.css"}; !slices.Equal(got, want) {
		t.Errorf("StylePaths: got %v, want %v", got, want)
	}
}

// TestParseSnapshotOptionErrors: one rule per case on a one-step flow
// "steps:\n  - <step>", with the file, step, line, directive and problem
// that the existing snapshot errors carry.
func TestParseSnapshotOptionErrors(t *testing.T) {
	chain := func(n int) string {
		s := "z"
		for i := range n {
			s = "{ text: t" + string(rune('a'+i)) + ", within: " + s + " }"
		}
		return s
	}
	many := strings.TrimSuffix(strings.Repeat("a, ", MaxSnapshotSelectors+1), ", ")
	big := strings.Repeat("a", MaxStyleBytes+1)
	cases := []stepErrorCase{
		{"maxDiffPixels negative", `snapshot: { name: a, maxDiffPixels: -1 }`, wantErr{"1", 2, KindSnapshot, ProblemValue, "maxDiffPixels must be a whole number of pixels from 0 to 2147483647, got the number -1"}},
		{"maxDiffPixels fraction", `snapshot: { name: a, maxDiffPixels: 1.5 }`, wantErr{"1", 2, KindSnapshot, ProblemValue, "maxDiffPixels must be a whole number"}},
		{"maxDiffPixels string", `snapshot: { name: a, maxDiffPixels: "10" }`, wantErr{"1", 2, KindSnapshot, ProblemValue, `got "10"`}},
		{"maxDiffPixels huge", `snapshot: { name: a, maxDiffPixels: 3000000000 }`, wantErr{"1", 2, KindSnapshot, ProblemValue, "from 0 to 2147483647"}},
		{"threshold over one", `snapshot: { name: a, threshold: 1.5 }`, wantErr{"1", 2, KindSnapshot, ProblemValue, "threshold must be a number from 0 to 1 (pixelmatch's colour threshold: 0 counts every colour change, the default is 0.1), got the number 1.5"}},
		{"threshold negative", `snapshot: { name: a, threshold: -0.1 }`, wantErr{"1", 2, KindSnapshot, ProblemValue, "threshold must be a number from 0 to 1"}},
		{"threshold infinite", `snapshot: { name: a, threshold: .inf }`, wantErr{"1", 2, KindSnapshot, ProblemValue, "threshold must be a number from 0 to 1"}},
		{"fullPage yes", `snapshot: { name: a, fullPage: yes }`, wantErr{"1", 2, KindSnapshot, ProblemShape, `fullPage must be true or false, got "yes"`}},
		{"fullPage with cropOn", `snapshot: { name: a, cropOn: b, fullPage: true }`, wantErr{"1", 2, KindSnapshot, ProblemShape, "fullPage: true captures the whole scrollable page and cropOn compares one element's frame; give one of them"}},
		{"mask empty", `snapshot: { name: a, mask: [] }`, wantErr{"1", 2, KindSnapshot, ProblemShape, "mask is an empty list"}},
		{"mask null", `snapshot: { name: a, mask: }`, wantErr{"1", 2, KindSnapshot, ProblemSelector, "mask: missing selector"}},
		{"mask number", `snapshot: { name: a, mask: 5 }`, wantErr{"1", 2, KindSnapshot, ProblemSelector, `mask: a selector must be a string or a map, got the number 5; quote it ("5")`}},
		{"mask too many", `snapshot: { name: a, mask: [` + many + `] }`, wantErr{"1", 2, KindSnapshot, ProblemValue, "mask lists 33 selectors; a snapshot takes at most 32"}},
		{"mask item key", `snapshot: { name: a, mask: [b, { idd: c }] }`, wantErr{"1", 2, KindSnapshot, ProblemUnknownKey, `mask[2]: unknown selector key "idd" (did you mean "id"?)`}},
		{"mask nested key", `snapshot: { name: a, mask: [{ id: c, within: { rol: d } }] }`, wantErr{"1", 2, KindSnapshot, ProblemUnknownKey, `mask[1].within: unknown selector key "rol"`}},
		{"mask item scopes", `snapshot: { name: a, mask: [b, ` + chain(MaxSelectorScopes+1) + `] }`, wantErr{"1", 2, KindSnapshot, ProblemSelector, "mask[2].within.within.within.within.within.within: a selector carries more than 6 scopes"}},
		{"mask list in list", `snapshot: { name: a, mask: [[b]] }`, wantErr{"1", 2, KindSnapshot, ProblemSelector, "mask[1]: a selector must be a string or a map, got a list"}},
		{"hide empty selector", `snapshot: { name: a, hide: [{}] }`, wantErr{"1", 2, KindSnapshot, ProblemSelector, "hide[1]: a selector needs at least one of id, text or role"}},
		{"hide empty", `snapshot: { name: a, hide: [] }`, wantErr{"1", 2, KindSnapshot, ProblemShape, "hide is an empty list; list the elements to hide"}},
		{"maskColor unquoted", "snapshot:\n      name: a\n      mask: b\n      maskColor: #FF00FF", wantErr{"1", 5, KindSnapshot, ProblemValue, `maskColor must be a colour written "#RRGGBB" (six hex digits, e.g. "#FF00FF"), got null; quote it (maskColor: "#FF00FF"): an unquoted # starts a YAML comment`}},
		{"maskColor name", `snapshot: { name: a, mask: b, maskColor: red }`, wantErr{"1", 2, KindSnapshot, ProblemValue, `maskColor must be a colour written "#RRGGBB" (six hex digits, e.g. "#FF00FF"), got "red"`}},
		{"maskColor short", `snapshot: { name: a, mask: b, maskColor: "#FFF" }`, wantErr{"1", 2, KindSnapshot, ProblemValue, `got "#FFF"`}},
		{"maskColor alpha", `snapshot: { name: a, mask: b, maskColor: "#FF00FF80" }`, wantErr{"1", 2, KindSnapshot, ProblemValue, `got "#FF00FF80"`}},
		{"maskColor without mask", `snapshot: { name: a, maskColor: "#000000" }`, wantErr{"1", 2, KindSnapshot, ProblemShape, "maskColor is the colour of the mask: boxes, and this snapshot has no mask:"}},
		{"style number", `snapshot: { name: a, style: 5 }`, wantErr{"1", 2, KindSnapshot, ProblemShape, "style must be CSS text (style: | and the rules on the lines below), got the number 5"}},
		{"style empty", `snapshot: { name: a, style: "  " }`, wantErr{"1", 2, KindSnapshot, ProblemValue, "style is empty"}},
		{"style too big", `snapshot: { name: a, style: "` + big + `" }`, wantErr{"1", 2, KindSnapshot, ProblemValue, "style is 65537 bytes; the CSS of a capture is at most 65536 bytes (64 KiB)"}},
		{"stylePath absolute", `snapshot: { name: a, stylePath: /etc/x.css }`, wantErr{"1", 2, KindSnapshot, ProblemValue, `a stylePath must be relative to the flow file that names it, got "/etc/x.css"`}},
		{"stylePath drive", `snapshot: { name: a, stylePath: "C:x.css" }`, wantErr{"1", 2, KindSnapshot, ProblemValue, "must be relative"}},
		{"stylePath backslash", `snapshot: { name: a, stylePath: 'styles\x.css' }`, wantErr{"1", 2, KindSnapshot, ProblemValue, "a stylePath uses forward slashes"}},
		{"stylePath upper", `snapshot: { name: a, stylePath: x.CSS }`, wantErr{"1", 2, KindSnapshot, ProblemValue, "lowercase .css"}},
		{"stylePath other", `snapshot: { name: a, stylePath: x.scss }`, wantErr{"1", 2, KindSnapshot, ProblemValue, `a stylePath must end in .css, got "x.scss"`}},
		{"stylePath no name", `snapshot: { name: a, stylePath: styles/.css }`, wantErr{"1", 2, KindSnapshot, ProblemValue, "must name a file before .css"}},
		{"stylePath empty", `snapshot: { name: a, stylePath: "" }`, wantErr{"1", 2, KindSnapshot, ProblemShape, "stylePath needs a .css file relative to this flow file"}},
		{"stylePath list", `snapshot: { name: a, stylePath: [a.css] }`, wantErr{"1", 2, KindSnapshot, ProblemShape, "got a list"}},
		{"metric unknown", `snapshot: { name: a, metric: lab }`, wantErr{"1", 2, KindSnapshot, ProblemValue, `metric must be one of yiq, oklab (pixelmatch 7's YIQ distance, the default, or pixelmatch 8's OKLab), got "lab"`}},
		{"windowSize zero", `snapshot: { name: a, windowSize: 0 }`, wantErr{"1", 2, KindSnapshot, ProblemValue, "windowSize must be a whole number of pixels from 1 to 4096"}},
		{"windowSize fraction", `snapshot: { name: a, windowSize: 2.5 }`, wantErr{"1", 2, KindSnapshot, ProblemValue, "windowSize must be a whole number"}},
		{"ignore empty", `snapshot: { name: a, ignore: [] }`, wantErr{"1", 2, KindSnapshot, ProblemShape, "ignore is an empty list; list the elements to leave out of the comparison"}},
		{"ignore item key", `snapshot: { name: a, ignore: [b, { idd: c }] }`, wantErr{"1", 2, KindSnapshot, ProblemUnknownKey, `ignore[2]: unknown selector key "idd"`}},
		{"ignoreRegions map", `snapshot: { name: a, ignoreRegions: { x: 0 } }`, wantErr{"1", 2, KindSnapshot, ProblemShape, "ignoreRegions is a list of rectangles of the capture in pixels"}},
		{"ignoreRegions empty", `snapshot: { name: a, ignoreRegions: [] }`, wantErr{"1", 2, KindSnapshot, ProblemShape, "ignoreRegions is an empty list"}},
		{"ignoreRegions item", `snapshot: { name: a, ignoreRegions: [5] }`, wantErr{"1", 2, KindSnapshot, ProblemShape, "ignoreRegions[1] must be a map { x, y, width, height }, got the number 5"}},
		{"ignoreRegions missing", `snapshot: { name: a, ignoreRegions: [{ x: 0, y: 0, width: 3 }] }`, wantErr{"1", 2, KindSnapshot, ProblemShape, "ignoreRegions[1] has no height"}},
		{"ignoreRegions key", `snapshot: { name: a, ignoreRegions: [{ x: 0, y: 0, width: 3, heigth: 2 }] }`, wantErr{"1", 2, KindSnapshot, ProblemUnknownKey, `ignoreRegions[1]: unknown option "heigth" (did you mean "height"?)`}},
		{"ignoreRegions negative", `snapshot: { name: a, ignoreRegions: [{ x: -1, y: 0, width: 3, height: 2 }] }`, wantErr{"1", 2, KindSnapshot, ProblemValue, "ignoreRegions[1].x must be a whole number of pixels from 0 to 67108864, got the number -1"}},
		{"ignoreRegions zero width", `snapshot: { name: a, ignoreRegions: [{ x: 0, y: 0, width: 0, height: 2 }] }`, wantErr{"1", 2, KindSnapshot, ProblemValue, "ignoreRegions[1].width must be a whole number of pixels from 1 to"}},
		{"ignoreRegions too many", `snapshot: { name: a, ignoreRegions: [` + strings.TrimSuffix(strings.Repeat("{ x: 0, y: 0, width: 1, height: 1 }, ", MaxIgnoreRegions+1), ", ") + `] }`, wantErr{"1", 2, KindSnapshot, ProblemValue, "ignoreRegions lists 33 rectangles; a snapshot takes at most 32"}},
		{"option typo", `snapshot: { name: a, maskColour: "#000000" }`, wantErr{"1", 2, KindSnapshot, ProblemUnknownKey, `unknown option "maskColour" (did you mean "maskColor"?) (allowed: name, maxMismatch, cropOn, maxDiffPixels, threshold, metric, windowSize, fullPage, mask, maskColor, hide, ignore, ignoreRegions, style, stylePath, stopOnFailure)`}},
		{"stopOnFailure string", `snapshot: { name: a, stopOnFailure: "no" }`, wantErr{"1", 2, KindSnapshot, ProblemShape, `stopOnFailure must be true or false, got "no"`}},
		{"maxMismatch still checked", `snapshot: { name: a, maxMismatch: 101, threshold: 0.2 }`, wantErr{"1", 2, KindSnapshot, ProblemValue, "maxMismatch must be a percent from 0 to 100"}},
	}
	checkStepErrors(t, cases)
}

// TestSnapshotSelectorBudgets: each selector of mask:, hide: and cropOn
// has the scope budget of a selector slot of its own, as tap: on: has.
func TestSnapshotSelectorBudgets(t *testing.T) {
	chain := func(n int) string {
		s := "z"
		for i := range n {
			s = "{ text: t" + string(rune('a'+i)) + ", within: " + s + " }"
		}
		return s
	}
	full := chain(MaxSelectorScopes)
	f := mustParseString(t, fmt.Sprintf("steps:\n  - snapshot: { name: a, cropOn: %s, mask: [%s, %s], hide: [%s, %s] }\n", full, full, full, full, full))
	d := directive[*Snapshot](t, f.Steps[0])
	if len(d.Mask) != 2 || len(d.Hide) != 2 {
		t.Errorf("got %d masks and %d hides, want 2 and 2", len(d.Mask), len(d.Hide))
	}
	_, err := Parse("hide.yaml", []byte("steps:\n  - snapshot: { name: a, hide: "+chain(MaxSelectorScopes+1)+" }\n"))
	checkErrors(t, "hide.yaml", err, []wantErr{{"1", 2, KindSnapshot, ProblemSelector, "hide.within.within.within.within.within.within: a selector carries more than 6 scopes"}})
	max := strings.TrimSuffix(strings.Repeat("a, ", MaxSnapshotSelectors), ", ")
	if f := mustParseString(t, "steps:\n  - snapshot: { name: a, mask: ["+max+"] }\n"); len(directive[*Snapshot](t, f.Steps[0]).Mask) != MaxSnapshotSelectors {
		t.Errorf("mask: got fewer than %d selectors", MaxSnapshotSelectors)
	}
}

// TestParseSnapshotErrorsPerStep: a file with several broken snapshots
// reports each at its own step and line, as other directives do.
func TestParseSnapshotErrorsPerStep(t *testing.T) {
	src := "steps:\n" +
		"  - snapshot: { name: a, threshold: 2 }\n" +
		"  - echo: fine\n" +
		"  - when: { visible: b }\n" +
		"    steps:\n" +
		"      - snapshot:\n" +
		"          name: c\n" +
		"          fullPage: true\n" +
		"          cropOn: { id: d }\n"
	_, err := Parse("several.yaml", []byte(src))
	checkErrors(t, "several.yaml", err, []wantErr{
		{"1", 2, KindSnapshot, ProblemValue, "threshold must be a number from 0 to 1"},
		{"3.1", 8, KindSnapshot, ProblemShape, "fullPage: true captures the whole scrollable page"},
	})
	if got := Errors(err)[1].Error(); !strings.HasPrefix(got, "several.yaml: step 3.1 (line 8): snapshot: fullPage: true") {
		t.Errorf("Error(): got %q, want file, step, line and directive first", got)
	}
}

func TestSnapshotFromArgs(t *testing.T) {
	s, err := SnapshotFromArgs(map[string]any{
		"name": "home", "maxMismatch": 0.5, "maxDiffPixels": float64(10), "threshold": 0.3,
		"mask": []any{"Clock", map[string]any{"id": "avatar"}}, "maskColor": "#123456",
		"hide": map[string]any{"role": "banner"}, "fullPage": true, "style": "a { color: red }", "stylePath": "c.css",
	})
	if err != nil {
		t.Fatal(err)
	}
	if !s.MaxMismatchSet || *s.MaxDiffPixels != 10 || *s.Threshold != 0.3 || len(s.Mask) != 2 || s.Mask[1].ID != "avatar" ||
		s.MaskColor != "#123456" || s.Hide[0].Role != "banner" || !s.FullPage || s.Style != "a { color: red }" || s.StylePath != "c.css" {
		t.Errorf("SnapshotFromArgs: got %+v, want every option", s)
	}
	// A string that reads as a number stays a string, as from JSON.
	if _, err := SnapshotFromArgs(map[string]any{"name": "a", "threshold": "0.5"}); err == nil {
		t.Errorf(`threshold "0.5": got no error, want one`)
	}
	_, err = SnapshotFromArgs(map[string]any{"name": "a", "mask": []any{}, "cropOn": "x"})
	var e *Error
	if !errors.As(err, &e) || e.Problem != ProblemShape || e.Line != 0 || e.Directive != KindSnapshot || !strings.Contains(e.Msg, "mask is an empty list") {
		t.Errorf("empty mask: got %#v, want a shape error without a line", err)
	}
	if _, err := SnapshotFromArgs(map[string]any{"maxMismatch": 1}); !errors.Is(err, ErrInvalid) {
		t.Errorf("no name: got %v, want ErrInvalid", err)
	}
}
