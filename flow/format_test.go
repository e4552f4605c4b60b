package flow

import (
	"strings"
	"testing"
)

func TestFormatStep(t *testing.T) {
	cases := []struct {
		step string
		want string
	}{
		{`script: { path: ../../scripts/hello.mjs }`, `script: { path: ../../scripts/hello.mjs }`},
		{`script: { path: s.mjs, timeout: 30000 }`, `script: { path: s.mjs, timeout: 30000 }`},
		{`launch: http://127.0.0.1:8080/a?b=c`, `launch: http://127.0.0.1:8080/a?b=c`},
		{`launch: { chromium: { path: app, args: [--x] } }`, `launch: { chromium: { path: app, args: [ --x ] } }`},
		{`tap: Save`, `tap: Save`},
		{`tap: { identifier: save, text: "Save, now" }`, `tap: { id: save, text: "Save, now" }`},
		{`tap: { on: { x: 0.5, y: 1 }, times: 2 }`, `tap: { on: { x: 0.5, y: 1 }, times: 2 }`},
		{`tap: { on: a, times: 1 }`, `tap: a`},
		{`tap: { role: switch, next: { text: Wi-Fi } }`, `tap: { role: switch, next: { text: Wi-Fi } }`},
		{`tap: { any: true, after: Danger }`, `tap: { any: true, after: Danger }`},
		{`tap: { text: { matches: '^a\d' } }`, `tap: { text: { matches: ^a\d } }`},
		{`long-press: { on: row, duration: 800 }`, `long-press: row`},
		{`type: { into: { id: pw }, text: "{{secret:PW}}", submit: false }`, `type: { into: { id: pw }, text: "{{secret:PW}}", submit: false }`},
		{`scroll-to: { target: row }`, `scroll-to: row`},
		{`scroll-to: { target: { id: r }, direction: up }`, `scroll-to: { target: { id: r }, direction: up }`},
		{`await: { visible: { id: a }, timeout: 7500 }`, `await: { visible: { id: a } }`},
		{`await: { hidden: a, timeout: 100.5 }`, `await: { hidden: a, timeout: 100.5 }`},
		{`await: { idle: true, stableFor: 250, timeout: 9000 }`, `await: { idle: true, timeout: 9000 }`},
		{`assert: { text: { in: total, equals: "3" } }`, `assert: { text: { in: total, equals: "3" } }`},
		{`assert: { text: { in: total, contains: 'yes' } }`, `assert: { text: { in: total, contains: "yes" } }`},
		{`wait: 1500`, `wait: 1500`},
		{`snapshot: { name: home }`, `snapshot: home`},
		// Spelled out, the default still wins over a project's defaults.
		{`snapshot: { name: home, maxMismatch: 0.5 }`, `snapshot: { name: home, maxMismatch: 0.5 }`},
		{"snapshot: { name: d, stylePath: s.css, hide: [a], maskColor: \"#FF00FF\", mask: b, fullPage: true, threshold: 0.2, maxDiffPixels: 9, style: \"a {}\\n\" }",
			`snapshot: { name: d, maxDiffPixels: 9, threshold: 0.2, fullPage: true, mask: [ b ], maskColor: "#FF00FF", hide: [ a ], style: "a {}\n", stylePath: s.css }`},
		{`snapshot: { name: card, cropOn: { id: card }, maxMismatch: 2 }`, `snapshot: { name: card, maxMismatch: 2, cropOn: { id: card } }`},
		{`run: ../shared/login`, `run: ../shared/login`},
		{`echo: "a: b"`, `echo: "a: b"`},
		{`echo: "# not a comment"`, `echo: "# not a comment"`},
		{`echo: "true"`, `echo: "true"`},
		{`echo: "multi\nline"`, `echo: "multi\nline"`},
		{`pinch: { on: map, scale: 2 }`, `pinch: { on: map, scale: 2 }`},
		{`rotate: { by: -90 }`, `rotate: { by: -90 }`},
		{"tool: flow-execute\n    args: { project_root: /work/proj, name: inner }\n    delayMs: 50", `tool: flow-execute, args: { name: inner, project_root: /work/proj }, delayMs: 50`},
		{"tool: describe", `tool: describe`},
		{"when: { platform: chromium }\n    steps: [tap: a, echo: b]", `when: { platform: chromium }, steps: [ { tap: a }, { echo: b } ]`},
	}
	for _, c := range cases {
		f := mustParseString(t, "steps:\n  - "+c.step+"\n")
		if got := FormatStep(f.Steps[0]); got != c.want {
			t.Errorf("FormatStep(%s): got %s, want %s", c.step, got, c.want)
		}
	}
	if got := FormatStep(&Step{Directive: &Tap{}}); !strings.HasPrefix(got, "<invalid step: ") {
		t.Errorf("FormatStep of a tap without target: got %s, want <invalid step: …>", got)
	}
}
