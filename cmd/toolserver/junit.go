package main

import (
	"encoding/xml"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/toolserver/toolserver/flow"
	"github.com/toolserver/toolserver/internal/atomicfile"
)

type junitSuites struct {
	XMLName xml.Name     `xml:"testsuites"`
	Suites  []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name     string      `xml:"name,attr"`
	Tests    int         `xml:"tests,attr"`
	Failures int         `xml:"failures,attr"`
	Errors   int         `xml:"errors,attr"`
	Skipped  int         `xml:"skipped,attr"`
	Time     string      `xml:"time,attr"`
	Cases    []junitCase `xml:"testcase"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	Classname string        `xml:"classname,attr"`
	Time      string        `xml:"time,attr"`
	Failure   *junitProblem `xml:"failure,omitempty"`
	Error     *junitProblem `xml:"error,omitempty"`
	Skipped   *junitProblem `xml:"skipped,omitempty"`
	// SystemOut carries a failed snapshot's images as
	// [[ATTACHMENT|path]] lines, which Jenkins and GitLab show.
	SystemOut string `xml:"system-out,omitempty"`
}

type junitProblem struct {
	Message string `xml:"message,attr,omitempty"`
	Text    string `xml:",chardata"`
}

// writeJUnit writes the reports as JUnit XML: a suite per flow, a case
// per step (echo lines aside), atomically.
func writeJUnit(path string, reps []*flow.Report) error {
	var doc junitSuites
	for _, rep := range reps {
		s := junitSuite{Name: rep.Flow, Failures: rep.Failed, Errors: rep.Errored, Skipped: rep.Skipped, Time: fmt.Sprintf("%.3f", rep.DurationMs/1000)}
		for _, w := range rep.Warnings {
			s.Cases = append(s.Cases, junitCase{Name: "flow", Classname: rep.Flow, Time: "0", Error: &junitProblem{Message: firstLine(w), Text: w}})
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
			c := junitCase{Name: strings.TrimSpace(name), Classname: rep.Flow + "." + st.Flow, Time: fmt.Sprintf("%.3f", st.DurationMs/1000)}
			p := &junitProblem{Message: st.Reason, Text: st.Reason}
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
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return atomicfile.WriteFile(path, append([]byte(xml.Header), append(b, '\n')...))
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
