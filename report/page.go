package report

import (
	"bytes"
	"crypto/sha256"
	_ "embed"
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"sync"

	"github.com/toolserver/toolserver/internal/atomicfile"
)

// pageSource is index.html as written, with the viewer's marks.
//
//go:embed page/index.html
var pageSource []byte

// page is index.html with the viewer inlined and dataMark where the
// report's data goes. The page is one file with its style and script
// inline: a browser opens it from file:// with no server and no network,
// and reads the data from the page itself (a fetch of report.json or
// viewer.js beside it is what file:// refuses). The viewer goes in
// first, so the data (which may hold any text) is never searched for a
// mark. Made on first use: every command starts the binary, few write a
// report (docs/performance.md, "Start-up").
var page = sync.OnceValue(func() []byte { return Inline(pageSource) })

// dataMark is the text of page that Write replaces by the data.
var dataMark = []byte("__REPORT_DATA__")

// Write writes the report's data and page into dir (which holds its
// images), each through a temp file and a rename.
func Write(dir string, r *Report) error {
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if err := atomicfile.WriteFile(filepath.Join(dir, DataFile), append(data, '\n')); err != nil {
		return err
	}
	return atomicfile.WriteFile(filepath.Join(dir, PageFile), Page(data))
}

// Page is index.html with the data in it. json.Marshal escapes <, > and
// & in strings, so no text of a report can end the script element that
// holds it.
func Page(data []byte) []byte {
	var compact bytes.Buffer
	if err := json.Compact(&compact, data); err != nil {
		compact.Reset()
		compact.WriteString("null")
	}
	return bytes.Replace(page(), dataMark, compact.Bytes(), 1)
}

// ScriptHash is the Content-Security-Policy source ('sha256-…') of the
// text of p's first <script> element without attributes: the page's own
// code (the report's data is in a script element of type
// application/json, which no browser runs).
func ScriptHash(p []byte) string {
	_, rest, _ := bytes.Cut(p, []byte("<script>"))
	body, _, _ := bytes.Cut(rest, []byte("</script>"))
	sum := sha256.Sum256(body)
	return "sha256-" + base64.StdEncoding.EncodeToString(sum[:])
}
