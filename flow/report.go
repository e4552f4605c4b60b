package flow

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"

	"github.com/toolserver/toolserver/fault"
	"github.com/toolserver/toolserver/wire"
)

// The statuses of a step.
const (
	StatusPass  = "pass"
	StatusFail  = "fail"
	StatusSkip  = "skip"
	StatusError = "error"
)

// Report is the result of a run, in the shape docs/product.md and the Argent
// clients render.
type Report struct {
	Flow                  string       `json:"flow"`
	Device                string       `json:"device"`
	ExecutionPrerequisite string       `json:"executionPrerequisite"`
	OK                    bool         `json:"ok"`
	Aborted               bool         `json:"aborted,omitempty"`
	Passed                int          `json:"passed"`
	Failed                int          `json:"failed"`
	Skipped               int          `json:"skipped"`
	Errored               int          `json:"errored"`
	StartedAt             int64        `json:"startedAt"`
	DurationMs            float64      `json:"durationMs"`
	Steps                 []StepReport `json:"steps"`
	// BaselineWrites are the client-file directives of the baselines a
	// linked run wrote (docs/link-protocol.md, "Baselines in the result").
	BaselineWrites []BaselineWrite `json:"baselineWrites,omitempty"`
	// Warnings are run-level notices (e.g. a secret in an echo).
	Warnings []string `json:"warnings,omitempty"`
}

// StepReport is one line of a report. Index is the 0-based position in
// Steps; Depth is omitted at level 0. Result is the JSON of a tool: step's
// result, whose shape is the tool's: kept as the tool-server wrote it, a
// linked client prints it with every digit and key as the tool made it.
type StepReport struct {
	Index       int             `json:"index"`
	Kind        string          `json:"kind"`
	Flow        string          `json:"flow"`
	Depth       int             `json:"depth,omitempty"`
	Status      string          `json:"status"`
	Reason      string          `json:"reason,omitempty"`
	Warning     string          `json:"warning,omitempty"`
	Message     string          `json:"message,omitempty"`
	Target      string          `json:"target,omitempty"`
	Tool        string          `json:"tool,omitempty"`
	Result      json.RawMessage `json:"result,omitempty"`
	Line        int             `json:"line,omitempty"`
	SnapshotKey string          `json:"snapshotKey,omitempty"`
	Mismatch    *Mismatch       `json:"mismatch,omitempty"`
	// Baseline is the baseline file of a snapshot step that got as far
	// as naming it, and what became of it.
	Baseline *SnapshotBaseline `json:"baseline,omitempty"`
	// Captures counts the captures a snapshot step took: 1 when its first
	// capture matched the baseline, more when the page had to settle.
	Captures int `json:"captures,omitempty"`
	// Ignored are the rectangles a snapshot step left out of its
	// comparison (its ignore: elements' boxes and its ignoreRegions), in
	// the compared images' pixels.
	Ignored    []Rect              `json:"ignored,omitempty"`
	ScriptLog  string              `json:"scriptLog,omitempty"`
	DurationMs float64             `json:"durationMs"`
	Artifacts  map[string]Artifact `json:"artifacts,omitempty"`
	// Element names the element a tap, long-press, type or scroll-to
	// acted on, and its box (StepElement).
	Element *StepElement `json:"element,omitempty"`
	// Infrastructure tells, on the wire, that the step failed because the
	// machinery under the flow failed (Err matched fault.ErrInfrastructure), so
	// a linked client tells a browser that died on the tool-server from a
	// flow that failed, as a local run does.
	Infrastructure bool `json:"infrastructure,omitempty"`
	// Err is the typed error behind an error status, kept for callers
	// that branch on it (fault.IsInfrastructure(Err)); it never
	// reaches the wire.
	Err error `json:"-"`
}

// InfrastructureError returns the error of the first step that failed
// because the machinery under the flow failed (its Err matches
// fault.ErrInfrastructure, or, in a report read from the wire, it is marked
// Infrastructure), or nil when every failure was the flow's own.
func (r *Report) InfrastructureError() error {
	for _, s := range r.Steps {
		switch {
		case s.Err != nil && fault.IsInfrastructure(s.Err):
			return s.Err
		case s.Infrastructure:
			return fault.Infrastructure(fmt.Errorf("step %d (%s): %s", s.Index+1, s.Kind, s.Reason))
		}
	}
	return nil
}

// Mismatch explains a snapshot comparison: how many pixels differ and
// where.
type Mismatch struct {
	Pixels      int     `json:"pixels"`
	Percent     float64 `json:"percent"`
	MaxMismatch float64 `json:"maxMismatch"`
	// Limits are every limit the comparison applied, with where each
	// came from; Exceeded names the one it broke ("maxMismatch" or
	// "maxDiffPixels"), empty when within them.
	Limits   *Limits         `json:"limits,omitempty"`
	Exceeded string          `json:"exceeded,omitempty"`
	Regions  []ChangedRegion `json:"regions,omitempty"`
}

// SnapshotBaseline is the baseline of a snapshot step: its path (the
// client's path over a link) and its state after the step.
type SnapshotBaseline struct {
	Path  string `json:"path"`
	State string `json:"state"`
}

// The states of a snapshot's baseline after its step.
const (
	// BaselineCompared: the capture was compared with the file.
	BaselineCompared = "compared"
	// BaselineMissing: no file, nothing compared.
	BaselineMissing = "missing"
	// BaselineWritten: the run adopted the capture as a new baseline
	// (over a link: the client writes it when the run ends).
	BaselineWritten = "written"
	// BaselineUpdated: the run adopted the capture over an existing file.
	BaselineUpdated = "updated"
)

// Artifact is what a report shows for a file a step produced (the
// baseline, current and diff images of a failed snapshot): a handle to the
// tool-server's artifact store, which a client fetches by its ID, or the
// path of the file on disk, where a run writes them to a directory
// (--artifacts) and where a linked client put the file it fetched. On the wire
// it is the handle's object or the path's string.
type Artifact struct {
	Handle *ArtifactHandle
	Path   string
}

// ArtifactHandle is the artifact handle of a tool result
// ("__argentArtifact"). It has the fields of store.Artifact in the same
// order, so the tool-server converts one into the other, and that
// conversion stops compiling when the two drift apart.
type ArtifactHandle struct {
	Artifact bool    `json:"__argentArtifact"`
	ID       string  `json:"id"`
	Filename string  `json:"filename"`
	MimeType string  `json:"mimeType"`
	Size     int64   `json:"size"`
	HostPath string  `json:"hostPath,omitempty"`
	MtimeMs  float64 `json:"mtimeMs"`
}

// MarshalJSON writes the handle, or else the path.
func (a Artifact) MarshalJSON() ([]byte, error) {
	if a.Handle != nil {
		return MarshalNoEscape(a.Handle)
	}
	return MarshalNoEscape(a.Path)
}

// UnmarshalJSON reads a path (a string) or a handle (an object).
func (a *Artifact) UnmarshalJSON(b []byte) error {
	*a = Artifact{}
	switch {
	case bytes.Equal(b, []byte("null")):
		return nil
	case len(b) > 0 && b[0] == '"':
		return json.Unmarshal(b, &a.Path)
	}
	a.Handle = new(ArtifactHandle)
	return json.Unmarshal(b, a.Handle)
}

// BaselineWrite is one entry of Report.BaselineWrites (docs/link-protocol.md,
// "Baselines in the result"). The tool-server sends a client-file
// directive: the client path of the baseline, and its bytes in PNG. The
// client replaces each with the path it wrote (Path alone) or, when it did
// not write it, Path and the reason in Error; in a dry run, with the plan
// of the write it would have made (Plan).
type BaselineWrite struct {
	Path  string
	PNG   []byte
	Error string
	Plan  *BaselinePlan
}

// BaselinePlan is the write a dry run would have made of a baseline.
type BaselinePlan struct {
	// Bytes is the size of the PNG.
	Bytes int
	// Updated tells that a file is at the path already.
	Updated bool
}

// plannedWrite is a dry run's entry on the wire; dryRun is always true
// and tells a plan from a refusal.
type plannedWrite struct {
	Path    string `json:"path"`
	Bytes   int    `json:"bytes"`
	Updated bool   `json:"updated"`
	DryRun  bool   `json:"dryRun"`
}

// refusedWrite is a baseline the client did not write, with its keys in
// the order the client writes them.
type refusedWrite struct {
	Error string `json:"error"`
	Path  string `json:"path"`
}

// MarshalJSON writes the directive, the refusal, the plan or the path
// written.
func (w BaselineWrite) MarshalJSON() ([]byte, error) {
	switch {
	case w.PNG != nil:
		content := base64.StdEncoding.EncodeToString(w.PNG)
		return MarshalNoEscape(wire.ClientFile{ArgentClientFile: true, Path: w.Path, Content: &content, Encoding: "base64"})
	case w.Error != "":
		return MarshalNoEscape(refusedWrite{Error: w.Error, Path: w.Path})
	case w.Plan != nil:
		return MarshalNoEscape(plannedWrite{Path: w.Path, Bytes: w.Plan.Bytes, Updated: w.Plan.Updated, DryRun: true})
	}
	return MarshalNoEscape(w.Path)
}

// UnmarshalJSON reads any of the forms MarshalJSON writes.
func (w *BaselineWrite) UnmarshalJSON(b []byte) error {
	*w = BaselineWrite{}
	switch {
	case bytes.Equal(b, []byte("null")):
		return nil
	case len(b) > 0 && b[0] == '"':
		return json.Unmarshal(b, &w.Path)
	}
	var v struct {
		wire.ClientFile
		Error   string `json:"error"`
		Bytes   int    `json:"bytes"`
		Updated bool   `json:"updated"`
		DryRun  bool   `json:"dryRun"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	w.Path, w.Error = v.Path, v.Error
	if v.DryRun && v.Error == "" {
		w.Plan = &BaselinePlan{Bytes: v.Bytes, Updated: v.Updated}
	}
	if v.ArgentClientFile && v.Content != nil {
		png, err := base64.StdEncoding.DecodeString(*v.Content)
		if err != nil {
			return fmt.Errorf("the baseline directive for %s: %w", v.Path, err)
		}
		w.PNG = png
	}
	return nil
}

// MarshalNoEscape marshals v without escaping HTML characters. The encoder
// that writes the report around it escapes them or not as it is set to,
// so a report's bytes are the same as if v were a plain field.
func MarshalNoEscape(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}
