package compat

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
)

// A golden records an answer as it is, but for what legitimately varies
// from one run to the next. The list is short on purpose: each entry
// names a value the machine, the clock or the load decides, and none
// touches an error text, a code, a field name, the order of fields or an
// exit status, which are what a restructuring could change. The temp
// directory (first of all, before these) becomes $TMP; then, in order:
var replacements = []struct {
	re   *regexp.Regexp
	with string
	why  string
}{
	{regexp.MustCompile(`\b127\.0\.0\.1:(3[2-9]|[45]\d|60)\d{3}\b`), "127.0.0.1:<port>",
		"a port the kernel chose (:0), from Linux's ephemeral range 32768-60999: the ports of the help texts (3000, 8080) and the refused :1 the tests dial stay"},
	{regexp.MustCompile(`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)`), "<time>",
		"an RFC 3339 time: recorded_at, first_recorded_at, the log's time="},
	{regexp.MustCompile(`\d{4}-\d\d-\d\d \d\d:\d\d(:\d\d)?`), "<time>",
		"a time as the text tables print it"},
	{regexp.MustCompile(`(\\?"(?:durationMs|elapsed|elapsedMs)\\?":\s*)\d+(\.\d+)?(e[+-]?\d+)?`), `$1<ms>`,
		"a duration in milliseconds, in JSON (compact or indented, or quoted in a JSON string as MCP's text content is)"},
	{regexp.MustCompile(`(\\?"startedAt\\?":\s*)[1-9]\d*`), `$1<ms>`,
		"a start time in Unix milliseconds; 0, a flow that never started, stays"},
	{regexp.MustCompile(`\b(durationMs|elapsed|elapsedMs): \d+(\.\d+)?`), `$1: <ms>`,
		"a duration in YAML"},
	{regexp.MustCompile(`\b(startedAt): [1-9]\d*`), `$1: <ms>`,
		"a start time in YAML"},
	{regexp.MustCompile(`(\\?"captures\\?":\s*)\d+`), `$1<n>`,
		"how many captures a snapshot took before the page held still, which the machine's load decides"},
	{regexp.MustCompile(`\((\d+m)?\d+\.\d+s\)`), "(<s>)",
		"a step's or a flow's duration in the text output, (0.3s)"},
	{regexp.MustCompile(`\btime="\d+\.\d+"`), `time="<s>"`,
		"a JUnit duration in seconds; a flow that never ran has time=\"0\", which stays"},
	{regexp.MustCompile(`\b[0-9a-f]{64}\b`), "<sha256>",
		"the SHA-256 of a baseline's PNG, which Chromium's rendering decides (its version, the fonts), not our code"},
	{regexp.MustCompile(`\b(ms|bytes)=\d+`), "$1=<n>",
		"a request's time in the log, and its size (a body holds durations, whose digits vary)"},
	{regexp.MustCompile(`\b(request_id=|X-Request-Id: )[0-9a-f]{16}\b`), "$1<request-id>",
		"the random id of a request"},
	{regexp.MustCompile(`(?i)\b(Mcp-Session-Id: )[0-9A-Z]{26}\b`), "$1<session-id>",
		"the random id of an MCP session"},
	{regexp.MustCompile(`\btunnel=[0-9a-f]+\b`), "tunnel=<id>",
		"the random id of a tunnel, in the log"},
	{regexp.MustCompile(`(?m)^: keep-alive\n\n`), "",
		"the comment an idle event stream sends every 15 s: a run that takes longer on a loaded machine has one more"},
	{regexp.MustCompile(`(?m)^\d{4}/\d\d/\d\d \d\d:\d\d:\d\d ERROR: executor for "[0-9A-F]+" doesn't exist\n`), "",
		"chromedp's complaint, on its own logger, about an event of a target that Chromium's teardown closed first: whether it comes is a race in the browser's exit"},
	{regexp.MustCompile(`\bgo1\.\d+(\.\d+)?\b`), "go<version>",
		"the Go toolchain the binary was built with"},
	{regexp.MustCompile(`\(commit [^,)]+`), "(commit <commit>",
		"the commit of the build (version's line), which differs between the old tree and the new"},
	{regexp.MustCompile(`"commit":(\s*)"[^"]*"`), `"commit":$1"<commit>"`,
		"the same in JSON"},
}

// uuid is a run id. The tests give the runs they start ids of their own,
// 00000000-0000-4000-8000-…, which stay; an id the server chose becomes
// <uuid-N>, numbered in the order of first appearance in one exchange, so
// that the record still says which answers name the same run.
var uuid = regexp.MustCompile(`\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b`)

// fixedIDPrefix starts the run ids the tests choose.
const fixedIDPrefix = "00000000-0000-4000-8000-"

// normalize applies the replacements to one exchange's record.
func normalize(s string) string {
	s = strings.ReplaceAll(s, tmp, "$TMP")
	for _, r := range replacements {
		s = r.re.ReplaceAllString(s, r.with)
	}
	seen := map[string]string{}
	return uuid.ReplaceAllStringFunc(s, func(id string) string {
		if strings.HasPrefix(id, fixedIDPrefix) {
			return id
		}
		if n, ok := seen[id]; ok {
			return n
		}
		n := fmt.Sprintf("<uuid-%d>", len(seen)+1)
		seen[id] = n
		return n
	})
}

// TestNormalize holds the replacements to what they are for: what varies
// goes, and the words around it stay.
func TestNormalize(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"listening on http://127.0.0.1:38279 (no token)", "listening on http://127.0.0.1:<port> (no token)"},
		{"dial tcp 127.0.0.1:1: connect: connection refused", "dial tcp 127.0.0.1:1: connect: connection refused"},
		{"(localhost:5173, 127.0.0.1:8080, or localhost", "(localhost:5173, 127.0.0.1:8080, or localhost"},
		{`"startedAt": 0,`, `"startedAt": 0,`},
		{`"startedAt":1796684922308,`, `"startedAt":<ms>,`},
		{`"recorded_at":"2026-12-07T23:09:32.014Z"`, `"recorded_at":"<time>"`},
		{`"durationMs": 328.359,`, `"durationMs": <ms>,`},
		{`"durationMs":0.007}`, `"durationMs":<ms>}`},
		{`"captures":1,`, `"captures":<n>,`},
		{"✓  1 launch ../../site/index.html (0.1s)", "✓  1 launch ../../site/index.html (<s>)"},
		{"time=2026-12-07T23:09:33.153Z level=INFO msg=request request_id=dcedb8df7a2545ff status=200 bytes=7172 ms=1113",
			"time=<time> level=INFO msg=request request_id=<request-id> status=200 bytes=<n> ms=<n>"},
		{"toolserver dev (commit 1234567890ab-dirty, go1.26.8)", "toolserver dev (commit <commit>, go<version>)"},
		{"run 4b0f6c53-1a47-4d7f-9a3c-0c4b1bde2a11 and 4b0f6c53-1a47-4d7f-9a3c-0c4b1bde2a11, 00000000-0000-4000-8000-000000000001",
			"run <uuid-1> and <uuid-1>, 00000000-0000-4000-8000-000000000001"},
		{`\"durationMs\":1153.935}`, `\"durationMs\":<ms>}`},
		{"id: 3\ndata: {}\n\n: keep-alive\n\nid: 4\n", "id: 3\ndata: {}\n\nid: 4\n"},
		{`msg="tunnel open" tunnel=81ba19ee expose=localhost`, `msg="tunnel open" tunnel=<id> expose=localhost`},
		{"a\n2026/12/07 23:21:52 ERROR: executor for \"FA9666F259244D85F9752D000F19F537\" doesn't exist\nb\n", "a\nb\n"},
		{"step 2 (line 3): unknown directive", "step 2 (line 3): unknown directive"},
	} {
		if got := normalize(c.in); got != c.want {
			t.Errorf("normalize(%q):\ngot  %q\nwant %q", c.in, got, c.want)
		}
	}
}
