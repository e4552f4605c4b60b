package run_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestRerunsArePixelIdentical: the same steps on the bench suite's shop
// give the same pixels every time, so the strict default passes every
// rerun. Chromium's partial raster repainted only the invalidated part of
// a tile over what it held, and the header's text and rounded badge came
// out a few levels off in 1 to 25 pixels in most reruns of this flow; the
// devices turn it off (device/cdp's flags).
func TestRerunsArePixelIdentical(t *testing.T) {
	t.Parallel()
	site := httptest.NewServer(http.FileServer(http.Dir("../../bench/suite/site")))
	t.Cleanup(site.Close)
	p := newProject(t)
	dev := device(t, "chromium-cdp-1280x801")
	flowText := `steps:
  - launch: {{SITE}}/index.html
  - snapshot: home
  - tap: { text: Add to basket, within: { id: card-boston-fern } }
  - await: { text: { in: { id: basket-count }, equals: "1" } }
  - tap: { text: Add to basket, within: { id: card-snake-plant } }
  - await: { text: { in: { id: basket-count }, equals: "2" } }
  - snapshot: added
`
	p.write(".argent/flows/basket.yaml", strings.ReplaceAll(flowText, "{{SITE}}", site.URL))
	if rep := p.run(t, dev, "basket", true); !rep.OK {
		t.Fatalf("update: %s", lines(rep))
	}
	for i := range 6 {
		if rep := p.run(t, dev, "basket", false); !rep.OK {
			t.Fatalf("rerun %d of the same steps under the strict default:\n%s", i+1, lines(rep))
		}
	}
}
