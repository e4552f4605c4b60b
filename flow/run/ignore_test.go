package run_test

import (
	"bytes"
	"image/color"
	"image/png"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/toolserver/toolserver/flow"
)

// TestSnapshotIgnore: a snapshot's ignore: elements and ignoreRegions are
// left out of its comparison, on real Chromium: a ticker that changed
// passes with either, and fails without; nothing is painted over (the
// baseline keeps the ticker's own colour), and the step report names the
// rectangles left out.
func TestSnapshotIgnore(t *testing.T) {
	t.Parallel()
	p := newProject(t)
	dev := device(t, "chromium-cdp-320x200")
	page := func(text string) string {
		return `data:text/html,<body style='margin:0;background:%23fff'><div id='ticker' style='position:absolute;left:10px;top:20px;width:100px;height:30px;background:%2300f;color:%23fff'>` + text + `</div><p style='position:absolute;top:100px'>Still here</p></body>`
	}
	write := func(text, options string) {
		p.write(".argent/flows/ticker.yaml", "steps:\n  - launch: \""+page(text)+"\"\n  - snapshot: { name: board, maxDiffPixels: 0"+options+" }\n")
	}
	byElement := ", ignore: [{ id: ticker }]"
	byRegion := ", ignoreRegions: [{ x: 10, y: 20, width: 100, height: 30 }]"
	box := []flow.Rect{{X: 10, Y: 20, Width: 100, Height: 30}}

	write("AAA", byElement)
	if rep := p.run(t, dev, "ticker", true); !rep.OK {
		t.Fatalf("update: %s", lines(rep))
	}
	baseline := filepath.Join(p.flows(), "__baselines__", "ticker", "board__chromium-320x200.png")
	data, err := os.ReadFile(baseline)
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	if got := color.RGBAModel.Convert(img.At(100, 45)).(color.RGBA); got != (color.RGBA{0, 0, 255, 255}) {
		t.Errorf("the baseline inside the ignored ticker: got %v, want the ticker's own blue (nothing painted)", got)
	}

	for _, c := range []struct {
		name, options string
		ok            bool
		ignored       []flow.Rect
	}{
		{"ignore: the element", byElement, true, box},
		{"ignoreRegions", byRegion, true, box},
		{"both", byElement + byRegion, true, append(slices.Clone(box), box...)},
		{"neither", "", false, nil},
	} {
		write("BBB", c.options)
		rep := p.run(t, dev, "ticker", false)
		s := rep.Steps[1]
		if rep.OK != c.ok {
			t.Errorf("%s: ok %v (%s %q), want %v", c.name, rep.OK, s.Status, s.Reason, c.ok)
		}
		if !slices.Equal(s.Ignored, c.ignored) {
			t.Errorf("%s: the step report's ignored %v, want %v", c.name, s.Ignored, c.ignored)
		}
		if !c.ok && !strings.Contains(s.Reason, "differ") {
			t.Errorf("%s: reason %q, want the pixels that differ", c.name, s.Reason)
		}
	}
}
