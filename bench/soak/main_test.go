package main

import "testing"

// A snapshot that failed, one that passed with differing pixels and one
// that did not settle are each counted; a clean pass is not.
func TestTallyCountsEveryOddSnapshot(t *testing.T) {
	reports, err := decode([]byte(`[{"flow":"a","steps":[
	  {"kind":"snapshot","flow":"a","status":"pass","snapshotKey":"clean"},
	  {"kind":"snapshot","flow":"a","status":"fail","snapshotKey":"failed","reason":"diff 1% > 0%"},
	  {"kind":"snapshot","flow":"a","status":"pass","snapshotKey":"within","mismatch":{"pixels":3}},
	  {"kind":"snapshot","flow":"a","status":"pass","snapshotKey":"moving","warning":"the screen kept changing: no two of 5 consecutive captures were identical"},
	  {"kind":"tap","flow":"a","status":"error","target":"\"Pay\"","reason":"no match"}]}]`))
	if err != nil {
		t.Fatal(err)
	}
	var s summary
	if off := tally(&s, 7, reports); !off {
		t.Error("tally said the run was clean")
	}
	if s.Snapshots != 4 || len(s.FalseDiffs) != 2 || len(s.Unsettled) != 1 || len(s.Failures) != 1 {
		t.Fatalf("got %d snapshots, %d false diffs, %d unsettled, %d failures; want 4, 2, 1, 1", s.Snapshots, len(s.FalseDiffs), len(s.Unsettled), len(s.Failures))
	}
	if f := s.FalseDiffs[1]; f.Key != "within" || f.Pixels != 3 || f.Run != 7 {
		t.Errorf("second false diff = %+v", f)
	}
}

// One report (a single flow) decodes as well as a list.
func TestDecodeOneReport(t *testing.T) {
	rs, err := decode([]byte(`{"flow":"solo","ok":true,"steps":[]}`))
	if err != nil || len(rs) != 1 || rs[0].Flow != "solo" {
		t.Fatalf("decode = %+v, %v", rs, err)
	}
}
