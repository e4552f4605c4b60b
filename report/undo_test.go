package report_test

import (
	"bytes"
	"errors"
	"image/color"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/toolserver/toolserver/report"
)

// TestUndo: undo puts back the baseline approve replaced and removes the
// one it created; a baseline changed since the approve is refused and
// stays on record, so a later undo restores it once it is back; with
// nothing on record there is nothing to undo.
func TestUndo(t *testing.T) {
	t.Parallel()
	t.Run("restores and removes", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, "checkout", "chromium-1280x800")
		if _, err := report.Undo(f.dir, f.project); !errors.Is(err, report.ErrNothingToUndo) {
			t.Fatalf("before any approve: got %v, want nothing to undo", err)
		}
		if res, err := report.Approve(f.dir, f.project, f.rep, report.Selection{All: true}, false); err != nil || len(res) != 2 || !res[0].Written {
			t.Fatalf("approve: %+v %v", res, err)
		}
		if p, err := report.LastApproveProject(f.dir); err != nil || p != f.project {
			t.Fatalf("the approve's project: %q %v, want %q", p, err, f.project)
		}
		res, err := report.Undo(f.dir, f.project)
		if err != nil || len(res) != 2 || res[0].Action != report.UndoRestored || res[1].Action != report.UndoRemoved {
			t.Fatalf("undo: got %+v %v, want restored then removed", res, err)
		}
		if b, _ := os.ReadFile(f.base); !bytes.Equal(b, pngOf(t, red)) {
			t.Error("the replaced baseline is not back")
		}
		if _, err := os.Stat(f.missing); !os.IsNotExist(err) {
			t.Errorf("the baseline approve created is still there: %v", err)
		}
		if _, err := report.Undo(f.dir, f.project); !errors.Is(err, report.ErrNothingToUndo) {
			t.Fatalf("a second undo: got %v, want nothing to undo", err)
		}
		if ents, _ := os.ReadDir(filepath.Join(f.dir, report.ApprovedDir)); len(ents) != 0 {
			t.Errorf("kept files left after a full undo: %v", ents)
		}
	})
	t.Run("refuses a baseline changed since", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, "checkout", "chromium-1280x800")
		if _, err := report.Approve(f.dir, f.project, f.rep, report.Selection{All: true}, false); err != nil {
			t.Fatal(err)
		}
		mine := pngOf(t, color.RGBA{1, 2, 3, 255})
		write(t, f.base, mine)
		res, err := report.Undo(f.dir, f.project)
		if err != nil || len(res) != 2 || res[0].Action != "" || !strings.Contains(res[0].Message, "changed since the approve") || res[0].Baseline != ".argent/flows/__baselines__/checkout/home__chromium-1280x800.png" || res[1].Action != report.UndoRemoved {
			t.Fatalf("undo: got %+v %v, want the changed one refused by its path and the other removed", res, err)
		}
		if b, _ := os.ReadFile(f.base); !bytes.Equal(b, mine) {
			t.Error("undo overwrote a baseline changed since the approve")
		}
		// Once it has the approved bytes again, a later undo restores it.
		write(t, f.base, pngOf(t, green))
		res, err = report.Undo(f.dir, f.project)
		if err != nil || len(res) != 1 || res[0].Action != report.UndoRestored {
			t.Fatalf("the second undo: got %+v %v, want the one left restored", res, err)
		}
		if b, _ := os.ReadFile(f.base); !bytes.Equal(b, pngOf(t, red)) {
			t.Error("the replaced baseline is not back")
		}
	})
	t.Run("a crafted manifest writes nothing outside the baselines", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, "checkout", "chromium-1280x800")
		if _, err := report.Approve(f.dir, f.project, f.rep, report.Selection{All: true}, false); err != nil {
			t.Fatal(err)
		}
		evil := filepath.Join(f.project, "evil.png")
		write(t, evil, pngOf(t, green))
		manifest := filepath.Join(f.dir, report.ApprovedDir, "manifest.json")
		b, err := os.ReadFile(manifest)
		if err != nil {
			t.Fatal(err)
		}
		write(t, manifest, bytes.ReplaceAll(b, []byte(".argent/flows/__baselines__/checkout/menu__chromium-1280x800.png"), []byte("evil.png")))
		res, err := report.Undo(f.dir, f.project)
		if err != nil || len(res) != 2 || !strings.Contains(res[1].Message, "not a baseline path") {
			t.Fatalf("got %+v %v, want the crafted path refused", res, err)
		}
		if _, err := os.Stat(evil); err != nil {
			t.Errorf("undo removed a file outside the baselines: %v", err)
		}
	})
	t.Run("a new report in the directory drops the record", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, "checkout", "chromium-1280x800")
		if _, err := report.Approve(f.dir, f.project, f.rep, report.Selection{All: true}, false); err != nil {
			t.Fatal(err)
		}
		if _, err := report.Create(f.dir, report.Run{Project: f.project, StartedAt: time.Now()}, report.Version{Version: "test"}, func(s string) { t.Error(s) }); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(filepath.Join(f.dir, report.ApprovedDir)); !os.IsNotExist(err) {
			t.Errorf("the earlier report's approve record is left: %v", err)
		}
	})
}
