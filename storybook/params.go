package storybook

import (
	"bytes"
	"encoding/json"
	"fmt"
	"time"

	"github.com/toolserver/toolserver/flow"
)

// Bounds of parameters.toolserver.
const (
	// MaxDelay bounds parameters.toolserver.delay.
	MaxDelay = 10 * time.Second
	// MaxDevices bounds the devices a run or a story names.
	MaxDevices = 16
)

// Extracted is one story as the preview's extract() hands it over
// (storybook-stories' answer): its tags and its parameters.toolserver.
type Extracted struct {
	Tags []string `json:"tags,omitempty"`
	// Toolserver is parameters.toolserver as JSON; absent when the story
	// sets none.
	Toolserver json.RawMessage `json:"toolserver,omitempty"`
	// Error says why Toolserver could not be read (too large, not JSON).
	Error string `json:"error,omitempty"`
}

// Stories is storybook-stories' result: each story of the preview by id.
type Stories struct {
	Stories map[string]Extracted `json:"stories"`
}

// Params is a story's parameters.toolserver.
type Params struct {
	Skip    bool     `json:"skip"`
	Devices []string `json:"devices"`
	Mask    []any    `json:"mask"`
	Ignore  []any    `json:"ignore"`
	// Delay is milliseconds before the snapshot.
	Delay float64 `json:"delay"`
}

// DecodeParams reads parameters.toolserver, refusing a field it does not
// know.
func DecodeParams(raw json.RawMessage) (Params, error) {
	var p Params
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil {
		return p, fmt.Errorf("parameters.toolserver: %v (it takes skip, devices, mask, ignore and delay)", err)
	}
	return p, nil
}

// Validate checks the parameters' bounds; device tells a device id that
// is not one the run can use.
func (p Params) Validate(device func(id string) error) error {
	if len(p.Devices) > 0 {
		if err := CheckDevices("parameters.toolserver.devices", p.Devices, device); err != nil {
			return err
		}
	}
	if p.Delay < 0 || p.Delay > float64(MaxDelay/time.Millisecond) {
		return fmt.Errorf("parameters.toolserver.delay %v: want 0 to %d milliseconds", p.Delay, MaxDelay/time.Millisecond)
	}
	for _, l := range []struct {
		name string
		sels []any
	}{{"mask", p.Mask}, {"ignore", p.Ignore}} {
		if len(l.sels) > flow.MaxSnapshotSelectors {
			return fmt.Errorf("parameters.toolserver.%s has %d selectors, over the cap of %d", l.name, len(l.sels), flow.MaxSnapshotSelectors)
		}
	}
	return nil
}

// ParamsOf reads and checks the parameters.toolserver of story id from
// what the preview extracted; a story the preview did not list, or that
// sets none, has the zero Params. An error names the story.
func ParamsOf(id string, extracted map[string]Extracted, device func(id string) error) (Params, error) {
	got, ok := extracted[id]
	switch {
	case !ok:
		return Params{}, nil
	case got.Error != "":
		return Params{}, fmt.Errorf("story %s: %s", id, got.Error)
	case len(got.Toolserver) == 0 || string(got.Toolserver) == "null":
		return Params{}, nil
	}
	p, err := DecodeParams(got.Toolserver)
	if err == nil {
		err = p.Validate(device)
	}
	if err != nil {
		return p, fmt.Errorf("story %s: %w", id, err)
	}
	return p, nil
}

// CheckDevices checks a list of device ids: 1 to MaxDevices of them,
// each one device accepts; what names the list in the error.
func CheckDevices(what string, ids []string, device func(id string) error) error {
	if len(ids) == 0 || len(ids) > MaxDevices {
		return fmt.Errorf("%s: want 1 to %d devices, got %d", what, MaxDevices, len(ids))
	}
	for _, id := range ids {
		if err := device(id); err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
	}
	return nil
}
