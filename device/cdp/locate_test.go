package cdp_test

import (
	"testing"
	"time"

	"github.com/toolserver/toolserver/device/cdp"
	"github.com/toolserver/toolserver/device/cdp/cdptest"
)

// TestLocateCountsMatches: Locate tells how many elements matched as
// well as the one it returns: the six buttons a text names, not the
// cards and the grid that hold them; one where a scope picks one.
func TestLocateCountsMatches(t *testing.T) {
	t.Parallel()
	d := cdptest.Device(t, "chromium-cdp-864x600")
	ctx := ctxT(t)
	if err := d.Launch(ctx, cdptest.Pages(t)+"/plants.html"); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name  string
		sel   cdp.Selector
		count int
	}{
		{"six buttons", cdp.Selector{Text: "Add to basket"}, 6},
		{"loose", cdp.Selector{Text: "add to basket", Loose: true}, 6},
		{"next", cdp.Selector{Text: "Add to basket", Next: &cdp.Selector{Text: "Kentia palm"}}, 1},
		{"one name", cdp.Selector{Text: "Monstera"}, 1},
		{"role", cdp.Selector{Role: "button"}, 6},
	} {
		el, err := d.Locate(ctx, c.sel, time.Second)
		if err != nil || el == nil {
			t.Fatalf("%s: locate: %v, %v", c.name, el, err)
		}
		if el.Matches != c.count {
			t.Errorf("%s: Matches: got %d, want %d", c.name, el.Matches, c.count)
		}
	}
	// Fill reports the field where it is once focused, with the count.
	if err := d.Launch(ctx, cdptest.Pages(t)+"/press.html"); err != nil {
		t.Fatal(err)
	}
	el, err := d.Fill(ctx, cdp.Selector{Role: "textbox"}, "x", false, time.Second)
	if err != nil || el == nil || el.Matches != 3 || el.ID != "first" {
		t.Errorf("fill: got %+v, %v; want #first of 3 textboxes", el, err)
	}
}

// TestWaitTextCase: contains and equals ignore case unless MatchCase.
func TestWaitTextCase(t *testing.T) {
	t.Parallel()
	d := device(t, "chromium-cdp-865x600")
	ctx := ctxT(t)
	for _, c := range []struct {
		match, text string
		matchCase   bool
		ok          bool
	}{
		{"equals", "NOT CLICKED", false, true},
		{"contains", "Not Click", false, true},
		{"equals", "NOT CLICKED", true, false},
		{"contains", "Not Click", true, false},
		{"equals", "not clicked", true, true},
		{"contains", "t cl", true, true},
	} {
		res, err := d.Wait(ctx, cdp.Condition{Selector: cdp.Selector{ID: "out"}, State: "text", Text: c.text, Match: c.match, MatchCase: c.matchCase}, 0)
		if err != nil || res.OK != c.ok {
			t.Errorf("%s %q (matchCase %v): got %v, %v; want ok %v", c.match, c.text, c.matchCase, res.OK, err, c.ok)
		}
	}
}
