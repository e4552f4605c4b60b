package report

import (
	"bytes"
	_ "embed"
)

// ViewerJS is the snapshot viewer's script (page/viewer.js): one
// implementation of the failed snapshot's views (side by side, slider,
// onion skin, diff only, changed regions, 1:1 pixels) and of the n/p
// keys between failures, for the report and the dashboard. It defines
// one constant, viewer, and shows the image URLs it is given. A page
// inlines it in a script element of its own code.
//
//go:embed page/viewer.js
var ViewerJS []byte

// ViewerCSS is the viewer's style (page/viewer.css). It uses the
// colours --line, --fail and --accent and the class dur of the page it
// is inlined into.
//
//go:embed page/viewer.css
var ViewerCSS []byte

// The marks a page holds where Inline puts the viewer: comments, so the
// page's own source stays valid CSS and JavaScript.
var (
	viewerCSSMark = []byte("/*__VIEWER_CSS__*/")
	viewerJSMark  = []byte("/*__VIEWER_JS__*/")
)

// Inline returns page with the viewer's style and script where its marks
// /*__VIEWER_CSS__*/ and /*__VIEWER_JS__*/ are. The page opens with no
// fetch of another file (the report from file://, the dashboard whose
// every other path needs the bearer token).
func Inline(page []byte) []byte {
	out := bytes.Replace(page, viewerCSSMark, ViewerCSS, 1)
	return bytes.Replace(out, viewerJSMark, ViewerJS, 1)
}
