package run_test

import (
	"bytes"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/toolserver/toolserver/device/cdp/cdptest"
	"github.com/toolserver/toolserver/flow"
	"github.com/toolserver/toolserver/flow/run"
)

// A live clock, masked, passes twice in a row a minute apart; unmasked,
// the same page fails a minute later.
func TestSnapshotMaskLiveClock(t *testing.T) {
	t.Parallel()
	c := cdptest.NewClock(t, time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC))
	p := newProject(t)
	dev := device(t, "chromium-cdp-640x405")
	page := "{{URL}}/" + c.Page
	write := func(shows string) {
		p.write(".argent/flows/masked.yaml", `steps:
  - launch: "`+page+`"
  - await: { visible: { text: "`+shows+`" } }
  - snapshot: { name: home, mask: [{ id: clock }], maxDiffPixels: 0 }
`)
		p.write(".argent/flows/bare.yaml", `steps:
  - launch: "`+page+`"
  - await: { visible: { text: "`+shows+`" } }
  - snapshot: { name: home, maxDiffPixels: 0 }
`)
	}
	write(c.Advance(0))
	for _, name := range []string{"masked", "bare"} {
		if rep := p.run(t, dev, name, true); !rep.OK {
			t.Fatalf("update %s: %s", name, dump(rep))
		}
	}
	for i := range 2 {
		write(c.Advance(time.Minute))
		if rep := p.run(t, dev, "masked", false); !rep.OK {
			t.Fatalf("masked, run %d a minute later: %s", i+1, dump(rep))
		}
	}
	rep := p.run(t, dev, "bare", false)
	if s := rep.Steps[2]; s.Status != flow.StatusFail || s.Mismatch == nil || s.Mismatch.Exceeded != "maxDiffPixels" {
		t.Fatalf("unmasked, a minute later: %s %q", s.Status, s.Reason)
	}
}

// hide, style and threshold change what is compared; maxDiffPixels in the
// step wins over the defaults.
func TestSnapshotHideStyleThreshold(t *testing.T) {
	t.Parallel()
	p := newProject(t)
	dev := device(t, "chromium-cdp-640x406")
	p.write(".argent/flows/base.yaml", "steps:\n  - launch: \"{{URL}}/app.html\"\n  - snapshot: { name: home, hide: [{ id: out }] }\n  - snapshot: { name: plain, style: \"#out { color: transparent !important }\" }\n")
	if rep := p.run(t, dev, "base", true); !rep.OK {
		t.Fatalf("update: %s", dump(rep))
	}
	// The only change is the text of #out: hidden, or made transparent
	// by the style, it is not compared; the step's maxDiffPixels: 0 wins
	// over a lenient default.
	p.write(".argent/flows/base.yaml", `steps:
  - launch: "{{URL}}/app.html"
  - tap: Go now
  - snapshot: { name: home, hide: [{ id: out }], maxDiffPixels: 0 }
  - snapshot: { name: plain, style: "#out { color: transparent !important }", maxDiffPixels: 0 }
  - snapshot: { name: home, maxDiffPixels: 0, threshold: 1 }
  - snapshot: { name: home, maxDiffPixels: 0 }
`)
	rep := p.runOpts(t, dev, "base", run.Options{Snapshot: flow.SnapshotDefaults{MaxDiffPixels: ptr(100000)}})
	st := rep.Steps
	if st[2].Status != flow.StatusPass || st[3].Status != flow.StatusPass {
		t.Fatalf("hide/style: %s", dump(rep))
	}
	if st[4].Status != flow.StatusPass || !strings.Contains(st[4].Reason, "0 ≤ maxDiffPixels 0") {
		t.Fatalf("threshold 1 tolerates the change: %s %q", st[4].Status, st[4].Reason)
	}
	if st[5].Status != flow.StatusFail || st[5].Mismatch.Limits.MaxDiffPixelsFrom != "the step" {
		t.Fatalf("without hide the change shows, and the step's maxDiffPixels wins: %s %q", st[5].Status, st[5].Reason)
	}
	// The styles are gone from the page: the text shows again.
	p.write(".argent/flows/after.yaml", `steps:
  - launch: "{{URL}}/app.html"
  - tap: Go now
  - snapshot: { name: home, hide: [{ id: out }] }
  - assert: { visible: { text: clicked 1 } }
`)
	if rep := p.run(t, dev, "after", true); rep.Steps[3].Status != flow.StatusPass {
		t.Fatalf("the hidden element stayed hidden: %s", dump(rep))
	}
}

// A full-page snapshot of a page three viewports tall is the whole page,
// under a key of its own beside the viewport baseline of the same name.
func TestSnapshotFullPage(t *testing.T) {
	t.Parallel()
	p := newProject(t)
	dev := device(t, "chromium-cdp-640x360")
	p.write(".argent/flows/tall.yaml", `steps:
  - launch: "{{URL}}/tall.html"
  - snapshot: { name: page, fullPage: true }
  - snapshot: page
`)
	rep := p.run(t, dev, "tall", true)
	if !rep.OK || rep.Steps[1].SnapshotKey != "page__chromium-640x360-full.png" || rep.Steps[2].SnapshotKey != "page__chromium-640x360.png" {
		t.Fatalf("keys: %s", dump(rep))
	}
	dir := filepath.Join(p.flows(), "__baselines__", "tall")
	for key, h := range map[string]int{"page__chromium-640x360-full.png": 3 * 360, "page__chromium-640x360.png": 360} {
		b, err := os.ReadFile(filepath.Join(dir, key))
		if err != nil {
			t.Fatal(err)
		}
		cfg, err := png.DecodeConfig(bytes.NewReader(b))
		if err != nil || cfg.Width != 640 || cfg.Height != h {
			t.Fatalf("%s is %dx%d (%v), want 640x%d", key, cfg.Width, cfg.Height, err, h)
		}
	}
	if rep := p.run(t, dev, "tall", false); !rep.OK {
		t.Fatalf("compare: %s", dump(rep))
	}
}

// A tap whose element is covered at its centre (a toast over a button)
// passes as Argent's does but warns where it landed; --strict fails it
// without tapping. A layer clicks pass through covers nothing.
func TestTapCoveredWarns(t *testing.T) {
	t.Parallel()
	p := newProject(t)
	dev := device(t, "chromium-cdp-640x407")
	p.write(".argent/flows/covered.yaml", `steps:
  - launch: "{{URL}}/covered.html"
  - tap: { id: through }
  - assert: { text: { in: { id: out }, equals: through } }
  - tap: { id: free }
  - tap: { id: save }
  - assert: { text: { in: { id: out }, equals: free } }
`)
	rep := p.run(t, dev, "covered", false)
	if !rep.OK || rep.Steps[1].Warning != "" || rep.Steps[3].Warning != "" {
		t.Fatalf("uncovered taps: %s", dump(rep))
	}
	if w := rep.Steps[4].Warning; !strings.Contains(w, `where id="toast" text="Saved 3 items"`) || !strings.Contains(w, "the tap landed on that element") {
		t.Fatalf("covered tap: warning %q", w)
	}
	rep = p.runOpts(t, dev, "covered", run.Options{Strict: true})
	if s := rep.Steps[4]; s.Status != flow.StatusFail || !strings.Contains(s.Reason, "covers its centre") {
		t.Fatalf("strict: %s %q", s.Status, s.Reason)
	}
}
