package report_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolserver/toolserver/report"
)

// TestApproveInto: the flag wins; else the recorded project when it is
// on this machine; else the current directory, with why.
func TestApproveInto(t *testing.T) {
	project := t.TempDir()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	rel, err := filepath.Abs("x")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name     string
		flag     string
		runs     []report.Run
		want     string
		wantFrom string
	}{
		{name: "flag", flag: "x", runs: []report.Run{{Project: project}}, want: rel, wantFrom: ""},
		{name: "recorded", runs: []report.Run{{Project: project}, {Project: project}}, want: project, wantFrom: "the project the run ran in"},
		{name: "none recorded", runs: []report.Run{{}}, want: wd, wantFrom: "the current directory: the report records no project"},
		{name: "two", runs: []report.Run{{Project: project}, {Project: wd}}, want: wd, wantFrom: "the current directory: the report's runs ran in 2 projects"},
		{name: "elsewhere", runs: []report.Run{{Project: filepath.Join(project, "gone")}}, want: wd, wantFrom: "the current directory: the run's project "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, from, err := (&report.Report{Runs: tc.runs}).ApproveInto(tc.flag)
			if err != nil || got != tc.want || !strings.HasPrefix(from, tc.wantFrom) || (tc.wantFrom == "") != (from == "") {
				t.Errorf("got %q, %q, %v; want %q, %q", got, from, err, tc.want, tc.wantFrom)
			}
		})
	}
}
