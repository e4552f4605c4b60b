package report

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/toolserver/toolserver/flow"
	"github.com/toolserver/toolserver/internal/atomicfile"
)

// Merge writes into out one report of the reports in dirs (CI shards,
// several devices): every run and every flow of each, in the order given,
// their images copied under images/r<n>/. Two entries for the same flow
// and device stay two, each with its run, never one dropped for the other.
func Merge(out string, dirs []string, writer Version, now time.Time) (*Report, error) {
	if len(dirs) == 0 {
		return nil, errors.New("no report to merge")
	}
	absOut, err := filepath.Abs(out)
	if err != nil {
		return nil, err
	}
	srcs := make([]*Report, len(dirs))
	for i, d := range dirs {
		abs, err := filepath.Abs(d)
		if err != nil {
			return nil, err
		}
		if rel, err := filepath.Rel(absOut, abs); err == nil && filepath.IsLocal(rel) {
			return nil, fmt.Errorf("%s is inside the output %s, which the merge replaces; write the merged report elsewhere", d, out)
		}
		if srcs[i], err = Read(d); err != nil {
			return nil, err
		}
	}
	if err := prepare(out); err != nil {
		return nil, err
	}
	merged := &Report{Format: Format, Toolserver: writer, CreatedAt: now.UTC(), Runs: []Run{}, Flows: []Flow{}}
	for i, src := range srcs {
		prefix := ImagesDir + "/r" + strconv.Itoa(i+1) + "/"
		m := merger{from: dirs[i], to: out, prefix: prefix, done: map[string]string{}}
		ids := map[string]string{}
		for _, run := range src.Runs {
			id := strconv.Itoa(len(merged.Runs) + 1)
			ids[run.ID] = id
			run.ID = id
			if run.Label == "" {
				run.Label = filepath.Base(filepath.Clean(dirs[i]))
			}
			merged.Runs = append(merged.Runs, run)
		}
		for _, fl := range src.Flows {
			fl.Run = ids[fl.Run]
			if err := m.flow(&fl); err != nil {
				m.close()
				return nil, err
			}
			merged.Flows = append(merged.Flows, fl)
		}
		m.close()
	}
	if err := Write(out, merged); err != nil {
		return nil, err
	}
	return merged, nil
}

// merger copies the images of one report into the merged one.
type merger struct {
	from, to, prefix string
	root             *os.Root
	// done maps the source's image paths already copied to their copies.
	done map[string]string
}

func (m *merger) close() {
	if m.root != nil {
		m.root.Close()
	}
}

// flow moves a flow's image paths under the merger's prefix, copying
// each image.
func (m *merger) flow(fl *Flow) error {
	for i := range fl.Snapshots {
		im := &fl.Snapshots[i].Images
		for _, p := range []*string{&im.Baseline, &im.Current, &im.Diff} {
			if err := m.move(p); err != nil {
				return err
			}
		}
	}
	for i := range fl.Report.Steps {
		st := &fl.Report.Steps[i]
		for role, a := range st.Artifacts {
			if a.Path == "" {
				continue
			}
			if err := m.move(&a.Path); err != nil {
				return err
			}
			st.Artifacts[role] = flow.Artifact{Path: a.Path}
		}
	}
	return nil
}

// move copies the image at *p (a path of the source report) and points
// *p at the copy; a path outside the report's images is dropped.
func (m *merger) move(p *string) error {
	if *p == "" {
		return nil
	}
	if moved, ok := m.done[*p]; ok {
		*p = moved // the step's artifact and the snapshot share an image
		return nil
	}
	src := *p
	rest, ok := strings.CutPrefix(*p, ImagesDir+"/")
	if !ok || !filepath.IsLocal(filepath.FromSlash(rest)) {
		*p = ""
		return nil
	}
	if m.root == nil {
		r, err := os.OpenRoot(m.from)
		if err != nil {
			return err
		}
		m.root = r
	}
	dst := filepath.Join(m.to, filepath.FromSlash(m.prefix+rest))
	data, err := readImageFile(m.root, *p)
	if err != nil {
		return fmt.Errorf("%s: %w", m.from, err)
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	if err := atomicfile.WriteFile(dst, data); err != nil {
		return err
	}
	*p = m.prefix + rest
	m.done[src] = *p
	return nil
}
