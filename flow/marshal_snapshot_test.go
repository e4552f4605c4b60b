package flow

import (
	"reflect"
	"testing"
)

// snapshotView is a Snapshot with its selectors as their specs, which
// carry no YAML position, for comparing two parses of the same step.
type snapshotView struct {
	Snapshot
	CropOn             map[string]any
	Mask, Hide, Ignore []map[string]any
}

func viewOf(s *Snapshot) snapshotView {
	v := snapshotView{Snapshot: *s, CropOn: s.CropOn.Spec()}
	v.Snapshot.CropOn, v.Snapshot.Mask, v.Snapshot.Hide, v.Snapshot.Ignore = nil, nil, nil, nil
	for _, m := range s.Mask {
		v.Mask = append(v.Mask, m.Spec())
	}
	for _, h := range s.Hide {
		v.Hide = append(v.Hide, h.Spec())
	}
	for _, g := range s.Ignore {
		v.Ignore = append(v.Ignore, g.Spec())
	}
	return v
}

func snapshotsOf(f *Flow) []snapshotView {
	var out []snapshotView
	for s := range f.All() {
		if d, ok := s.Directive.(*Snapshot); ok {
			out = append(out, viewOf(d))
		}
	}
	return out
}

// TestMarshalSnapshotOptionsRoundTrip: every option of every snapshot
// survives Parse → Marshal → Parse, maxMismatch spelled out at its default
// value included (it wins over a project's defaults).
func TestMarshalSnapshotOptionsRoundTrip(t *testing.T) {
	f := mustParse(t, "testdata/valid/snapshot-options.yaml")
	out, err := Marshal(f)
	if err != nil {
		t.Fatal(err)
	}
	g, err := Parse("again.yaml", out)
	if err != nil {
		t.Fatalf("Parse(Marshal): %v\n%s", err, out)
	}
	got, want := snapshotsOf(g), snapshotsOf(f)
	if len(want) != 4 {
		t.Fatalf("snapshots: got %d in the testdata, want 4", len(want))
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("after the round trip:\ngot  %+v\nwant %+v\n%s", got, want, out)
	}
}

// TestMarshalSnapshotHandBuilt: what the recorder writes for a snapshot
// built in Go, each option only when set, and a hand-built snapshot the
// parser would refuse fails where it was built.
func TestMarshalSnapshotHandBuilt(t *testing.T) {
	px, th := 250, 0.05
	steps := []*Step{
		{Directive: &Snapshot{Name: "plain", MaxMismatch: DefaultMaxMismatch}},
		{Directive: &Snapshot{Name: "set", MaxMismatch: DefaultMaxMismatch, MaxMismatchSet: true}},
		{Directive: &Snapshot{Name: "all", MaxMismatch: 1, MaxMismatchSet: true, MaxDiffPixels: &px, Threshold: &th, FullPage: true,
			Mask: []*Selector{{ID: "clock"}, {Text: "Ad", Loose: true}}, MaskColor: "#000000",
			Hide: []*Selector{{Role: "banner"}}, Style: "* { caret-color: transparent }\n", StylePath: "../css/capture.css"}},
	}
	out, err := Marshal(&Flow{Steps: steps})
	if err != nil {
		t.Fatal(err)
	}
	want := `steps:
  - snapshot: plain
  - snapshot: {name: set, maxMismatch: 0.5}
  - snapshot: {name: all, maxMismatch: 1, maxDiffPixels: 250, threshold: 0.05, fullPage: true, mask: [{id: clock}, Ad], maskColor: '#000000', hide: [{role: banner}], style: "* { caret-color: transparent }\n", stylePath: ../css/capture.css}
`
	if string(out) != want {
		t.Errorf("Marshal:\ngot\n%s\nwant\n%s", out, want)
	}
	f, err := Parse("recorded.yaml", out)
	if err != nil {
		t.Fatal(err)
	}
	if got := viewOf(directive[*Snapshot](t, f.Steps[2])); !reflect.DeepEqual(got, viewOf(steps[2].Directive.(*Snapshot))) {
		t.Errorf("after the round trip: got %+v", got)
	}

	bad := []*Snapshot{
		{Name: "a", MaskColor: "#000000"},
		{Name: "a", FullPage: true, CropOn: &Selector{ID: "b"}},
		{Name: "a", StylePath: "/abs.css"},
		{Name: "a", Mask: []*Selector{{}}},
	}
	for _, s := range bad {
		if _, err := Marshal(&Flow{Steps: []*Step{{Directive: s}}}); err == nil {
			t.Errorf("Marshal(%+v): got no error, want one", s)
		}
	}
}
