// Package junit writes a run's flow reports as JUnit XML, the format CI
// systems (Jenkins, GitLab, GitHub's test reporters) read: a suite per
// flow, a case per step. It sits beside report/summary, the run in
// Markdown.
package junit

import (
	"encoding/xml"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/toolserver/toolserver/flow"
	"github.com/toolserver/toolserver/internal/atomicfile"
)

type document struct {
	XMLName xml.Name `xml:"testsuites"`
	Suites  []suite  `xml:"testsuite"`
}

type suite struct {
	Name     string     `xml:"name,attr"`
	Tests    int        `xml:"tests,attr"`
	Failures int        `xml:"failures,attr"`
	Errors   int        `xml:"errors,attr"`
	Skipped  int        `xml:"skipped,attr"`
	Time     string     `xml:"time,attr"`
	Cases    []testCase `xml:"testcase"`
}

type testCase struct {
	Name      string   `xml:"name,attr"`
	Classname string   `xml:"classname,attr"`
	Time      string   `xml:"time,attr"`
	Failure   *problem `xml:"failure,omitempty"`
	Error     *problem `xml:"error,omitempty"`
	Skipped   *problem `xml:"skipped,omitempty"`
	// SystemOut carries a failed snapshot's images as
	// [[ATTACHMENT|path]] lines, which Jenkins and GitLab show.
	SystemOut string `xml:"system-out,omitempty"`
}

type problem struct {
	Message string `xml:"message,attr,omitempty"`
	Text    string `xml:",chardata"`
}

// Write writes the reports to path as JUnit XML (Marshal), atomically,
// making path's directory if need be.
func Write(path string, reps []*flow.Report) error {
	data, err := Marshal(reps)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return atomicfile.WriteFile(path, data)
}

// Marshal is the reports as a JUnit XML document: a suite per flow, a
// case per step (echo lines aside) and one per warning of the flow, a
// failed snapshot's images as [[ATTACHMENT|path]] lines.
func Marshal(reps []*flow.Report) ([]byte, error) {
	var doc document
	for _, rep := range reps {
		s := suite{Name: rep.Flow, Failures: rep.Failed, Errors: rep.Errored, Skipped: rep.Skipped, Time: fmt.Sprintf("%.3f", rep.DurationMs/1000)}
		for _, w := range rep.Warnings {
			s.Cases = append(s.Cases, testCase{Name: "flow", Classname: rep.Flow, Time: "0", Error: &problem{Message: firstLine(w), Text: w}})
		}
		n := 0
		for _, st := range rep.Steps {
			if st.Kind == string(flow.KindEcho) {
				continue
			}
			n++
			name := fmt.Sprintf("%d %s", n, st.Kind)
			if st.Target != "" {
				name += " " + st.Target
			}
			c := testCase{Name: strings.TrimSpace(name), Classname: rep.Flow + "." + st.Flow, Time: fmt.Sprintf("%.3f", st.DurationMs/1000)}
			p := &problem{Message: st.Reason, Text: st.Reason}
			switch st.Status {
			case flow.StatusFail:
				c.Failure = p
			case flow.StatusError:
				c.Error = p
			case flow.StatusSkip:
				c.Skipped = p
			}
			c.SystemOut = attachments(st)
			s.Cases = append(s.Cases, c)
		}
		s.Tests = len(s.Cases)
		doc.Suites = append(doc.Suites, s)
	}
	b, err := xml.MarshalIndent(doc, "", "  ")
	if err != nil {
		return nil, err
	}
	return append([]byte(xml.Header), append(b, '\n')...), nil
}

// firstLine is s up to its first newline.
func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return s
}

// attachments are the [[ATTACHMENT|path]] lines of a step's images on
// disk (a failed snapshot's baseline, current and diff), in that order.
func attachments(st flow.StepReport) string {
	var b strings.Builder
	for _, role := range []string{"baseline", "current", "diff"} {
		if a, ok := st.Artifacts[role]; ok && a.Path != "" {
			fmt.Fprintf(&b, "[[ATTACHMENT|%s]]\n", a.Path)
		}
	}
	return b.String()
}
