package run_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/toolserver/toolserver/device/cdp/cdptest"
	"github.com/toolserver/toolserver/flow/run"
	"github.com/toolserver/toolserver/store"
	"github.com/toolserver/toolserver/tool"
	"github.com/toolserver/toolserver/tool/devicetool"
)

// TestEveryDirective runs the directives the other tests do not reach on a
// real page: long-press, scroll-to, tool (through the real device tools),
// script, and pinch and rotate, which Chromium refuses.
func TestEveryDirective(t *testing.T) {
	t.Parallel()
	p := newProject(t)
	dev := device(t, "chromium-cdp-806x600")
	reg := tool.NewRegistry()
	arts, _ := store.NewArtifacts(t.TempDir(), 10, 1<<20)
	(&devicetool.Tools{Pool: cdptest.Pool(t), Artifacts: arts}).Register(reg)
	caller := func(ctx context.Context, name string, args map[string]any) (any, error) {
		b, _ := json.Marshal(args)
		return reg.Invoke(ctx, name, b, tool.Options{})
	}
	p.write(".argent/scripts/mark.mjs", `import { writeFileSync } from "node:fs";
writeFileSync(new URL("./marked.txt", import.meta.url), "ran");
console.log("script says hi");
`)
	p.write(".argent/flows/all.yaml", `steps:
  - launch: "{{URL}}/app.html"
  - long-press: { on: Go now, duration: 300 }
  - assert: { text: { in: { id: out }, equals: clicked 1 } }
  - scroll-to: far below
  - assert: { visible: { text: far below } }
  - tool: keyboard
    args: { text: "x" }
  - script: { path: ../scripts/mark.mjs }
  - pinch: { scale: 2 }
`)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	f, _ := run.Disk{}.Open(p.flows(), "all.yaml")
	rep, err := run.Execute(ctx, run.Options{Device: dev, Source: run.Disk{}, Tools: caller}, run.Entry{File: f, Name: "all", StemFallback: "all"})
	if err != nil {
		t.Fatal(err)
	}
	want := "launch:pass long-press:pass assert:pass scroll-to:pass assert:pass tool:pass script:pass pinch:fail"
	if got := lines(rep); got != want {
		t.Fatalf("got %s, want %s\n%s", got, want, dump(rep))
	}
	if s := rep.Steps[6]; !strings.Contains(s.ScriptLog, "script says hi") {
		t.Fatalf("script log: %q", s.ScriptLog)
	}
	if b, err := os.ReadFile(filepath.Join(p.root, ".argent", "scripts", "marked.txt")); err != nil || string(b) != "ran" {
		t.Fatalf("the script did not run: %v", err)
	}
	if s := rep.Steps[7]; !strings.Contains(s.Reason, "pinch is unsupported on chromium") {
		t.Fatalf("pinch: %q", s.Reason)
	}
	// The tool step got the run's device, and keyboard typed into the
	// focused element: nothing is focused, so the result says what it typed.
	res, _ := json.Marshal(rep.Steps[5].Result)
	if !strings.Contains(string(res), `"typed":"x"`) {
		t.Fatalf("tool result: %s", res)
	}
}
