// Package recordtool owns the recorder of the server: the tools that write
// a flow step by step (flow-start-recording, flow-add-step, flow-add-echo,
// flow-add-script, flow-finish-recording), and the recordings in progress
// they share. flow-add-step runs each step live through the registry
// before it records it, so a recorded flow-execute reaches tool/flowtool
// only as a tool of the registry.
package recordtool

import (
	"github.com/toolserver/toolserver/device/cdp"
	linkserver "github.com/toolserver/toolserver/link/server"
	"github.com/toolserver/toolserver/tool"
	"github.com/toolserver/toolserver/wire"
)

// Tools is the recorder's tool set.
type Tools struct {
	// Pool is where a recorded gesture-tap reads the page under the
	// point before the tap changes it; nil records taps as coordinates.
	Pool *cdp.Pool
	// Registry is where flow-add-step finds the tool it runs and records.
	Registry *tool.Registry
	// Recordings holds the recordings in progress.
	Recordings *Recordings
	// Uploads is where members sent through POST /upload are taken from.
	Uploads linkserver.Uploads
	// TempDir holds the temp files of the file arguments of a recorded
	// step's live call.
	TempDir string
}

// Register adds the recorder's tools to r.
func (t *Tools) Register(r *tool.Registry) {
	if t.Registry == nil {
		t.Registry = r
	}
	if t.Recordings == nil {
		t.Recordings = NewRecordings()
	}
	for _, tl := range t.recorderTools() {
		r.Add(tl)
	}
}

// fileInputs are the file inputs the registry's tool name declares.
func (t *Tools) fileInputs(name string) ([]wire.FileInput, bool) {
	tl, ok := t.Registry.Get(name)
	if !ok {
		return nil, false
	}
	return tl.FileInputs, true
}
