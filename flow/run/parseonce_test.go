package run

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/toolserver/toolserver/flow"
)

// TestRunParsesEachFileOnce counts the parses of a run as flow run and
// flow-execute make it (Prepare, then Run): the flow's own file is parsed
// once, and a fragment reached by the fan-out count and run twice is
// parsed once too.
func TestRunParsesEachFileOnce(t *testing.T) {
	dir := t.TempDir()
	write := func(name, data string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	main := write("main.yaml", "steps:\n  - echo: one\n  - run: frag\n  - run: frag\n  - echo: two\n")
	write("frag.yaml", "steps:\n  - echo: inside\n")

	parses := map[string]int{}
	parseFlow = func(name string, data []byte) (*flow.Flow, error) {
		parses[filepath.Base(name)]++
		return flow.Parse(name, data)
	}
	t.Cleanup(func() { parseFlow = flow.Parse })

	f, err := Disk{}.OpenFile(main)
	if err != nil || f.Err != nil {
		t.Fatalf("open: %v %v", err, f.Err)
	}
	p, err := Prepare(Entry{File: f, Name: "main", StemFallback: "main"})
	if err != nil {
		t.Fatal(err)
	}
	rep, _, err := Run(t.Context(), Options{Source: Disk{}}, p)
	if err != nil {
		t.Fatal(err)
	}
	if !rep.OK {
		t.Fatalf("the run failed: %+v", rep.Steps)
	}
	if got, want := len(rep.Steps), 6; got != want {
		t.Errorf("report: got %d lines, want %d (the fragment run twice)", got, want)
	}
	for name, want := range map[string]int{"main.yaml": 1, "frag.yaml": 1} {
		if got := parses[name]; got != want {
			t.Errorf("%s: parsed %d times, want %d", name, got, want)
		}
	}
}
