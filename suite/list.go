package suite

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/toolserver/toolserver/flow"
)

// Listed is one flow file of a project's flows directory, as flow list
// prints it.
type Listed struct {
	Name                  string `json:"name"`
	Kind                  string `json:"kind"`
	Steps                 int    `json:"steps"`
	ExecutionPrerequisite string `json:"executionPrerequisite,omitempty"`
	Error                 string `json:"error,omitempty"`
}

// The kinds of a Listed flow file.
const (
	// KindFlow starts with launch: and runs on its own.
	KindFlow = "flow"
	// KindFragment runs only inside the flows that run: it.
	KindFragment = "fragment"
	// KindInvalid does not parse; Error is its first line.
	KindInvalid = "invalid"
)

// List reads and parses the flow files directly in dir, in name order.
func List(dir string) ([]Listed, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var rows []Listed
	for _, e := range ents {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".yaml") {
			continue
		}
		r := Listed{Name: strings.TrimSuffix(e.Name(), ".yaml")}
		p := filepath.Join(dir, e.Name())
		data, err := os.ReadFile(p)
		if err == nil {
			var fl *flow.Flow
			if fl, err = flow.Parse(p, data); err == nil {
				r.Kind, r.Steps, r.ExecutionPrerequisite = KindFragment, len(fl.Steps), fl.ExecutionPrerequisite
				if fl.IsEndToEnd() {
					r.Kind = KindFlow
				}
			}
		}
		if err != nil {
			r.Kind, r.Error = KindInvalid, firstLine(err.Error())
		}
		rows = append(rows, r)
	}
	return rows, nil
}

// firstLine is s up to its first newline.
func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return s
}
